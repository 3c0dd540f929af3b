import GRDB
import GRDBSQLite
import Synchronization

/// Connections of their own for the reads every connect makes (the session of a token, the stream
/// head, the contacts), run through SQLite's C API on the caller's thread. Through GRDB's pool a
/// lookup cost about three times SQLite's own work (checking a reader out, its dispatch queue, a
/// transaction, boxing arguments and rows): 18 % of a connect's CPU.
///
/// Rules:
/// 1. A connection serves one caller at a time: it is taken from the free list under a lock and
///    given back after. When none is free, a new one is opened, so there are never more than the
///    callers at once (threads, as lookups do not suspend).
/// 2. A read of more than one statement runs between `BEGIN` and `COMMIT`, so it sees one
///    snapshot; a single statement is a read transaction of its own.
/// 3. A failure throws GRDB's `DatabaseError` (``RawStatement`` rule 3); an open read transaction
///    is rolled back before the connection is given back.
/// 4. The connections only read (`query_only`).
/// 5. ``close()`` runs once no lookup does (the store's gate waits for them); it finalizes the
///    statements and closes the connections.
final class LookupConnections: Sendable {
    private let path: String
    private let free = Mutex<[LookupStatements]>([])

    /// Opens the first connection, which also checks that the statements prepare.
    init(path: String) throws {
        self.path = path
        let first = try LookupStatements(path: path)
        free.withLock { $0.append(first) }
    }

    /// Runs `work` with the statements of a connection no one else is using (rule 1).
    func run<T>(_ work: (LookupStatements) throws -> T) throws -> T {
        let statements = try free.withLock { $0.popLast() } ?? LookupStatements(path: path)
        defer { free.withLock { $0.append(statements) } }
        return try work(statements)
    }

    /// Rule 5.
    func close() {
        for statements in free.withLock({ list in
            defer { list.removeAll() }; return list
        }) { statements.close() }
    }
}

/// One lookup connection's statements; used by one caller at a time (``LookupConnections`` rule 1).
final class LookupStatements: @unchecked Sendable {
    let session: RawStatement
    let streamHead: RawStatement
    let contacts: RawStatement
    private let begin: RawStatement
    private let commit: RawStatement
    private let rollback: RawStatement
    private let connection: OpaquePointer

    fileprivate init(path: String) throws {
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let handle else {
            sqlite3_close(handle)
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "cannot open the database for lookups")
        }
        var prepared: [RawStatement] = []
        func prepare(_ sql: String) throws -> RawStatement {
            let statement = try RawStatement(sql, on: handle)
            prepared.append(statement)
            return statement
        }
        do {
            sqlite3_busy_timeout(handle, 10_000)
            // Rule 4; and as the pool's readers: hot pages in memory, reads through the memory map.
            for pragma in ["PRAGMA query_only = 1", "PRAGMA cache_size = -8192", "PRAGMA mmap_size = 268435456"] {
                let code = sqlite3_exec(handle, pragma, nil, nil, nil)
                guard code == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: code), message: pragma) }
            }
            session = try prepare("SELECT user_id, expires_at FROM sessions WHERE token_hash = ? AND expires_at > ?")
            streamHead = try prepare(WriterStatements.streamHeadSQL)
            contacts = try prepare(
                """
                SELECT DISTINCT other.user_id FROM conversation_members me
                JOIN conversation_members other ON other.conversation_id = me.conversation_id AND other.user_id != me.user_id
                WHERE me.user_id = ? AND me.first_sent_seq IS NOT NULL AND other.first_sent_seq IS NOT NULL
                    AND substr(me.conversation_id, 1, 3) = 'dm_'
                """)
            begin = try prepare("BEGIN")
            commit = try prepare("COMMIT")
            rollback = try prepare("ROLLBACK")
        } catch {
            for statement in prepared { statement.finalize() }
            sqlite3_close(handle)
            throw error
        }
        connection = handle
    }

    /// Runs several statements as one read (rule 2); rolled back if any fails (rule 3).
    func snapshot<T>(_ work: () throws -> T) throws -> T {
        try begin.execute()
        do {
            let value = try work()
            try commit.execute()
            return value
        } catch {
            try? rollback.execute()
            throw error
        }
    }

    fileprivate func close() {
        for statement in [session, streamHead, contacts, begin, commit, rollback] { statement.finalize() }
        sqlite3_close_v2(connection)
    }
}
