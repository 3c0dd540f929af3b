import Foundation
import GRDB
import ParleyCore
import ParleyStore
@testable import ParleySQLite
import Testing

/// ``RawStatement``'s rules, on a plain SQLite connection, and ``WriterStatements``' guard.
@Suite struct RawStatementTests {
    private func withConnection(_ body: (Database, OpaquePointer) throws -> Void) throws {
        let path = WALCheckpointerTests.temporaryPath()
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
            try body(db, try #require(db.sqliteConnection))
        }
    }

    /// Rule 2: a run binds what it is given and nothing stays from the run before.
    @Test func bindingsDoNotOutliveARun() throws {
        try withConnection { _, connection in
            let pair = try RawStatement("SELECT ?1, ?2", on: connection)
            defer { pair.finalize() }
            let first = try pair.firstRow(.int(7), .text("seven")) { ($0.int64(0), $0.text(1)) }
            #expect(first?.0 == 7 && first?.1 == "seven")
            let second = try pair.firstRow(.int(8)) { ($0.int64(0), $0.isNull(1)) }
            #expect(second?.0 == 8 && second?.1 == true)
        }
    }

    /// Text goes in and out byte for byte: empty is not NULL, a NUL does not end it, and every
    /// script and emoji keeps its bytes.
    @Test func textRoundTripsByteForByte() throws {
        try withConnection { _, connection in
            let insert = try RawStatement("INSERT INTO t (k, v) VALUES (?, ?)", on: connection)
            let select = try RawStatement("SELECT v, length(CAST(v AS BLOB)) FROM t WHERE k = ?", on: connection)
            defer { insert.finalize(); select.finalize() }
            let texts = ["", "a\0b", "héllo wörld", "👩‍👩‍👧‍👦 e\u{301}", "中文 العربية", String(repeating: "x", count: 10_000)]
            for (key, text) in texts.enumerated() {
                try insert.execute(.int(Int64(key)), .text(text))
                let row = try select.firstRow(.int(Int64(key))) { ($0.isNull(0), $0.text(0), $0.int64(1)) }
                #expect(row?.0 == false && row?.1 == text && row?.2 == Int64(text.utf8.count))
            }
        }
    }

    /// Rules 2 and 3: a failing run throws SQLite's extended code, and leaves the statement reset
    /// and usable; a run that stops at its first row keeps no table busy after it.
    @Test func aFailureIsTypedAndLeavesNothingRunning() throws {
        try withConnection { db, connection in
            let insert = try RawStatement("INSERT INTO t (k, v) VALUES (?, ?)", on: connection)
            let select = try RawStatement("SELECT k FROM t ORDER BY k", on: connection)
            defer { insert.finalize(); select.finalize() }
            try insert.execute(.int(1), .text("one"))
            #expect {
                try insert.execute(.int(1), .text("again"))
            } throws: { error in
                (error as? DatabaseError)?.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY
            }
            try insert.execute(.int(2), .text("two"))
            #expect(try select.rows { $0.int64(0) } == [1, 2])
            #expect(try select.firstRow { $0.int64(0) } == 1)
            // SQLite refuses to drop a table a statement is still reading ("database table is locked").
            try db.execute(sql: "DROP TABLE t")
        }
    }

    /// Rule 1: the writer's statements refuse another connection, and refuse everything once
    /// finalized; a send to a closed store throws instead of running a finalized statement.
    @Test func writerStatementsRefuseOtherConnectionsAndAClosedStore() async throws {
        let store = try SQLiteStore(path: WALCheckpointerTests.temporaryPath(), durability: .normal)
        try withConnection { db, _ in
            #expect(throws: DatabaseError.self) { try store.writerStatements.on(db) }
        }
        let alice = UserID.random()
        try await store.close()
        await #expect(throws: (any Error).self) {
            try await store.send(NewMessage(sender: alice, clientId: .random(), target: .user(.random()), text: "late"), now: .now())
        }
    }
}
