import Foundation
import GRDB
@testable import ParleySQLite
import Testing

/// Rule 5 of the VFS (`Sources/SQLiteProcessSetup/WriteShapingVFS.c`): a connection that asks
/// sends its checkpoint's database-file writes to the disk a few pages at a time, on real files.
@Suite struct PacedCheckpointWritesTests {
    /// A database with `rows` rows of ~1 KB, all of them still in the WAL, and its writer, kept
    /// open: the last connection to close copies the WAL and removes it.
    static func databaseInItsWAL(rows: Int) throws -> (path: String, writer: DatabaseQueue) {
        let path = WALCheckpointerTests.temporaryPath()
        let writer = try GatheredWALWritesTests.connection(path)
        try writer.write { db in
            try db.execute(sql: "CREATE TABLE item (n INTEGER, payload TEXT)")
            try GatheredWALWritesTests.insert(db, rows: 0..<rows)
        }
        return (path, writer)
    }

    static func checkpointer(_ path: String, asks: Bool) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        if asks { configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA parley_paced_writes = ON") } }
        return try DatabaseQueue(path: path, configuration: configuration)
    }

    static func paced(_ db: DatabaseQueue) throws -> (inEffect: Bool, writeOuts: Int) {
        try db.read(WALCheckpointer.pacedWrites)
    }

    @Test func aCheckpointThatAskedWritesItsPagesOutSixteenAtATime() throws {
        let (path, writer) = try Self.databaseInItsWAL(rows: 2000)  // ~500 pages
        let checkpointer = try Self.checkpointer(path, asks: true)
        #expect(try Self.paced(checkpointer) == (true, 0))
        let (walFrames, copied) = try checkpointer.writeWithoutTransaction { db in try db.checkpoint(.passive) }
        #expect(walFrames > 450 && copied == walFrames)
        let writeOuts = try Self.paced(checkpointer).writeOuts
        #expect(writeOuts >= 450 / 16 && writeOuts <= walFrames / 16, "\(writeOuts) write-outs for \(walFrames) frames")
        try checkpointer.close()
        try writer.close()
        // Everything copied is there, and the file is sound.
        let reopened = try DatabaseQueue(path: path)
        #expect(try GatheredWALWritesTests.count(reopened) == 2000)
        #expect(try reopened.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") } == ["ok"])
    }

    /// The counter-test: a connection that does not ask writes as SQLite does.
    @Test func aCheckpointThatDidNotAskMakesNoWriteOuts() throws {
        let (path, writer) = try Self.databaseInItsWAL(rows: 2000)
        let checkpointer = try Self.checkpointer(path, asks: false)
        let (walFrames, copied) = try checkpointer.writeWithoutTransaction { db in try db.checkpoint(.passive) }
        #expect(walFrames > 450 && copied == walFrames)
        #expect(try Self.paced(checkpointer) == (false, 0))
        try writer.close()
    }
}
