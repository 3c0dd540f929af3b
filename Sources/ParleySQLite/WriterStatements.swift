import GRDB
import GRDBSQLite
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
    let insertMessage: RawStatement
    let insertEvent: RawStatement
    /// The search index writes of the batch being written.
    let searchIndex: SearchIndexLog
    // Each counter is bumped by one statement and read back by another: `UPDATE … RETURNING`
    // collects its rows in an ephemeral B-tree, opened and closed on every run (6 % of the writer
    // thread's CPU at max rate, three times per message).
    private let bumpSeq: RawStatement
    private let lastSeq: RawStatement
    private let markSeen: RawStatement
    private let firstSentSeq: RawStatement
    private let bumpStreamHead: RawStatement
    private let streamHead: RawStatement
    private let memberHeads: RawStatement
    private let lastGroupPosition: RawStatement
    private let setMemberHeads: RawStatement
    private let connection: OpaquePointer
    private var finalized = false

    init(_ db: Database) throws {
        guard let connection = db.sqliteConnection else { throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "Connection is closed") }
        self.connection = connection
        sentBefore = try RawStatement(
            "SELECT \(Columns.message) FROM messages m WHERE m.sender_id = ? AND m.client_id = ?", on: connection)
        userExists = try RawStatement("SELECT 1 FROM users WHERE id = ?", on: connection)
        members = try RawStatement(Self.membersSQL, on: connection)
        bumpSeq = try RawStatement("UPDATE conversations SET last_seq = last_seq + 1, last_activity_at = ? WHERE id = ?", on: connection)
        lastSeq = try RawStatement("SELECT last_seq FROM conversations WHERE id = ?", on: connection)
        insertMessage = try RawStatement(
            """
            INSERT INTO messages (id, conversation_id, seq, sender_id, client_id, text, created_at, entry, mentions, reply_to_seq, pos)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            on: connection)
        markSeen = try RawStatement(
            """
            UPDATE conversation_members SET delivered_seq = ?1, read_seq = ?1, first_sent_seq = COALESCE(first_sent_seq, ?1)
            WHERE conversation_id = ?2 AND user_id = ?3
            """, on: connection)
        firstSentSeq = try RawStatement(
            "SELECT first_sent_seq FROM conversation_members WHERE conversation_id = ? AND user_id = ?", on: connection)
        bumpStreamHead = try RawStatement(
            "UPDATE users SET stream_head = stream_head + 1, event_rows = event_rows + 1 WHERE id = ?", on: connection)
        streamHead = try RawStatement(Self.streamHeadSQL, on: connection)
        memberHeads = try RawStatement(
            """
            SELECT cm.user_id, u.stream_head FROM conversation_members cm JOIN users u ON u.id = cm.user_id
            WHERE cm.conversation_id = ? ORDER BY cm.user_id
            """, on: connection)
        lastGroupPosition = try RawStatement(Self.lastGroupPositionSQL, on: connection)
        setMemberHeads = try RawStatement(
            "UPDATE users SET stream_head = ?1 WHERE id IN (SELECT user_id FROM conversation_members WHERE conversation_id = ?2)",
            on: connection)
        insertEvent = try RawStatement(
            """
            INSERT INTO events (user_id, pos, kind, conversation_id, seq, subject_id, delivered_seq, read_seq, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, on: connection)
        searchIndex = try SearchIndexLog(on: connection)
    }

    /// The rowid of the row the last INSERT on the writer stored.
    var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(connection) }

    /// The conversation's next message seq, its activity set to `time`; nil if there is no such
    /// conversation.
    func nextSeq(in conversation: String, at time: Int64) throws -> Int64? {
        try bumpSeq.execute(.int(time), .text(conversation))
        return try lastSeq.firstRow(.text(conversation)) { $0.int64(0) }
    }

    /// The sender has seen what they sent, `seq`; returns the seq of their first message in the
    /// conversation (`seq` if this is it), or nil if they are not a member.
    func markSenderSeen(_ seq: Int64, in conversation: String, sender: String) throws -> Int64? {
        try markSeen.execute(.int(seq), .text(conversation), .text(sender))
        return try firstSentSeq.firstRow(.text(conversation), .text(sender)) { $0.int64(0) }
    }

    /// The next position of the user's event stream; nil if there is no such user.
    func nextPosition(of user: String) throws -> Int64? {
        try bumpStreamHead.execute(.text(user))
        return try streamHead.firstRow(.text(user)) { $0.int64(0) }
    }

    /// A conversation's members with the newest position of each one's stream, in user id order.
    func heads(ofMembersOf conversation: String) throws -> [(UserID, Int64)] {
        try memberHeads.rows(.text(conversation)) { (UserID(rawValue: $0.text(0)), $0.int64(1)) }
    }

    /// The position of the group's newest message stored once (0 before any).
    func lastPosition(in conversation: String) throws -> Int64 {
        try lastGroupPosition.firstRow(.text(conversation)) { $0.isNull(0) ? 0 : $0.int64(0) } ?? 0
    }

    /// Moves every member's stream head to `position` (a group message's, beyond all of them).
    func setHeads(ofMembersOf conversation: String, to position: Int64) throws {
        try setMemberHeads.execute(.int(position), .text(conversation))
    }

    /// The newest group message's position. `pos IS NOT NULL` lets SQLite use the partial index
    /// `messages_by_position` (one step to its end); without it, the group's every message was read.
    static let lastGroupPositionSQL = "SELECT MAX(pos) FROM messages WHERE conversation_id = ? AND pos IS NOT NULL"

    /// A conversation's members, in user id order; lookups outside writes run it through GRDB.
    static let membersSQL = "SELECT user_id FROM conversation_members WHERE conversation_id = ? ORDER BY user_id"

    /// A user's stream head; lookups outside writes run it on ``LookupConnections``.
    static let streamHeadSQL = "SELECT stream_head FROM users WHERE id = ?"

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
        let all = [
            sentBefore, userExists, members, insertMessage, insertEvent, bumpSeq, lastSeq, markSeen, firstSentSeq, bumpStreamHead, streamHead,
            memberHeads, lastGroupPosition, setMemberHeads,
        ]
        for statement in all {
            statement.finalize()
        }
        searchIndex.finalize()
    }
}
