import GRDB
import ParleyCore

/// The statements a send runs for every message, prepared once on the pool's writer connection and
/// run through SQLite's C API (``RawStatement``); rarer writes keep GRDB's cached statements.
///
/// Only writes use them: every write runs on the one writer connection, one at a time, which is
/// what makes the unsynchronized state here safe. ``on(_:)`` checks both that the connection is the
/// one they were prepared on and that they are not finalized (the store is closing).
final class WriterStatements: @unchecked Sendable {
    /// The message a sender already sent with a client id (rule 1 of a send).
    let sentBefore: RawStatement
    let userExists: RawStatement
    let members: RawStatement
    let nextSeq: RawStatement
    let insertMessage: RawStatement
    /// The sender has seen what they sent; their first message is remembered.
    let markSenderSeen: RawStatement
    let nextPosition: RawStatement
    let insertEvent: RawStatement
    private let connection: OpaquePointer
    private var finalized = false

    init(_ db: Database) throws {
        guard let connection = db.sqliteConnection else { throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "Connection is closed") }
        self.connection = connection
        sentBefore = try RawStatement(
            "SELECT \(Columns.message) FROM messages m WHERE m.sender_id = ? AND m.client_id = ?", on: connection)
        userExists = try RawStatement("SELECT 1 FROM users WHERE id = ?", on: connection)
        members = try RawStatement(Self.membersSQL, on: connection)
        nextSeq = try RawStatement(
            "UPDATE conversations SET last_seq = last_seq + 1, last_activity_at = ? WHERE id = ? RETURNING last_seq", on: connection)
        insertMessage = try RawStatement(
            "INSERT INTO messages (id, conversation_id, seq, sender_id, client_id, text, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            on: connection)
        markSenderSeen = try RawStatement("""
            UPDATE conversation_members SET delivered_seq = ?1, read_seq = ?1, first_sent_seq = COALESCE(first_sent_seq, ?1)
            WHERE conversation_id = ?2 AND user_id = ?3 RETURNING first_sent_seq
            """, on: connection)
        nextPosition = try RawStatement(
            "UPDATE users SET stream_head = stream_head + 1 WHERE id = ? RETURNING stream_head", on: connection)
        insertEvent = try RawStatement("""
            INSERT INTO events (user_id, pos, kind, conversation_id, seq, subject_id, delivered_seq, read_seq, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, on: connection)
    }

    /// A conversation's members, in user id order; lookups outside writes run it through GRDB.
    static let membersSQL = "SELECT user_id FROM conversation_members WHERE conversation_id = ? ORDER BY user_id"

    /// These statements, for a write on `db`.
    func on(_ db: Database) throws -> WriterStatements {
        guard !finalized, db.sqliteConnection == connection else {
            throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "Connection is closed")
        }
        return self
    }

    /// Finalizes every statement; run on the writer before the pool closes.
    func finalize() {
        guard !finalized else { return }
        finalized = true
        for statement in [sentBefore, userExists, members, nextSeq, insertMessage, markSenderSeen, nextPosition, insertEvent] {
            statement.finalize()
        }
    }
}
