import GRDB
import ParleyCore
import ParleyStore

/// The writes of one group action on SQLite, inside its transaction, collecting the stream events
/// they commit. Order matters: members join before the entry (so they receive it), the `conversation`
/// event reaches a newcomer before the entry, and a departing member leaves after it (they see
/// their own removal, and nothing after).
struct GroupWriter {
    let conversation: ConversationID
    let now: Timestamp
    let statements: WriterStatements
    let db: Database
    private(set) var deliveries: [Delivery] = []

    init(conversation: ConversationID, now: Timestamp, statements: WriterStatements, db: Database) {
        self.conversation = conversation
        self.now = now
        self.statements = statements
        self.db = db
    }

    /// A new member whose cursors start at the last seq: nothing before their entry is unread for
    /// them, and they never hold back the receipt aggregate of older messages.
    func addMember(_ user: UserID, role: MemberRole) throws {
        try db.execute(
            sql: """
                INSERT INTO conversation_members (conversation_id, user_id, joined_at, role, delivered_seq, read_seq)
                SELECT id, ?, ?, ?, last_seq, last_seq FROM conversations WHERE id = ?
                """,
            arguments: [user.rawValue, now.milliseconds, role.rawValue, conversation.rawValue])
        try db.execute(
            sql: "DELETE FROM former_members WHERE user_id = ? AND conversation_id = ?", arguments: [user.rawValue, conversation.rawValue])
        try db.execute(sql: "DELETE FROM invitations WHERE user_id = ? AND conversation_id = ?", arguments: [user.rawValue, conversation.rawValue])
    }

    /// Appends the entry at the next seq, opens the spans of `joined` and closes the one of `departing`.
    mutating func append(
        _ entry: GroupEntry, by actor: UserID, _ clientId: ClientMessageID, joined: [UserID], shareHistory: Bool, departing: UserID?
    ) throws -> Message {
        if !joined.isEmpty {
            let info = try SQLiteStore.conversationInfo(conversation, db)
            for user in joined { deliveries.append(try SQLiteStore.appendEvent(.conversation(info), to: user, now: now, statements)) }
        }
        guard let seq = try statements.nextSeq(in: conversation.rawValue, at: now.milliseconds) else { throw StoreError.conversationNotFound }
        let message = Message(
            id: .random(), conversationId: conversation, seq: seq, senderId: actor, clientId: clientId, text: "", createdAt: now, entry: entry)
        try statements.insertMessage.execute(
            .text(message.id.rawValue), .text(conversation.rawValue), .int(seq), .text(actor.rawValue), .text(clientId.rawValue), .text(""),
            .int(now.milliseconds), .text(StoredJSON.text(entry)), .null, .null, .null)
        _ = try statements.markSenderSeen(seq, in: conversation.rawValue, sender: actor.rawValue)
        // Where a newcomer's replay of the group's messages starts (SQLiteStore.replaySQL).
        let joinedPosition = joined.isEmpty ? 0 : try statements.lastPosition(in: conversation.rawValue)
        for user in joined {
            try db.execute(
                sql: "INSERT INTO member_spans (conversation_id, user_id, from_seq, joined_seq, joined_pos) VALUES (?, ?, ?, ?, ?)",
                arguments: [conversation.rawValue, user.rawValue, shareHistory ? 1 : seq, seq, joinedPosition])
        }
        for member in try SQLiteStore.memberIDs(conversation, statements) {
            deliveries.append(try SQLiteStore.appendEvent(.message(message), to: member, now: now, statements))
        }
        if let departing {
            try leave(departing, at: seq)
        } else {
            // The actor's cursors moved to the entry: they may have been the lowest.
            deliveries += try GroupReceiptAggregate.refresh(conversation, now: now, statements, db)
        }
        return message
    }

    private mutating func leave(_ user: UserID, at seq: Int64) throws {
        let arguments: StatementArguments = [conversation.rawValue, user.rawValue]
        // to_pos: the leaver's head, at or past every group message of the span in their stream
        // (it bounds a replay's scan of the group's messages; see SQLiteStore.replaySQL).
        try db.execute(
            sql: """
                UPDATE member_spans SET to_seq = \(seq), to_pos = (SELECT stream_head FROM users WHERE id = ?2)
                WHERE conversation_id = ?1 AND user_id = ?2 AND to_seq IS NULL
                """, arguments: arguments)
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO former_members (user_id, conversation_id, left_seq, left_at, read_seq, title)
                SELECT m.user_id, m.conversation_id, ?, ?, m.read_seq, COALESCE(c.title, '') FROM conversation_members m
                JOIN conversations c ON c.id = m.conversation_id WHERE m.conversation_id = ? AND m.user_id = ?
                """,
            arguments: [seq, now.milliseconds, conversation.rawValue, user.rawValue])
        try db.execute(sql: "DELETE FROM conversation_members WHERE conversation_id = ? AND user_id = ?", arguments: arguments)
        deliveries += try GroupReceiptAggregate.refresh(conversation, now: now, statements, db)
    }

    /// Invitations for `users` (one already pending stays as it was, without a new event).
    mutating func invite(_ users: [UserID], by inviter: UserID, shareHistory: Bool) throws {
        guard !users.isEmpty else { return }
        guard let inviterUser = try SQLiteStore.users([inviter], db).first else { throw StoreError.userNotFound }
        let row = try Row.fetchOne(
            db, sql: "SELECT title, (SELECT COUNT(*) FROM conversation_members WHERE conversation_id = ?) FROM conversations WHERE id = ?",
            arguments: [conversation.rawValue, conversation.rawValue])
        let invitation = Invitation(
            conversationId: conversation, title: row?[0] ?? "", inviter: inviterUser, memberCount: row?[1] ?? 0, createdAt: now)
        for user in users {
            try db.execute(
                sql: """
                    INSERT INTO invitations (user_id, conversation_id, inviter_id, share_history, created_at) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT DO NOTHING
                    """,
                arguments: [user.rawValue, conversation.rawValue, inviter.rawValue, shareHistory, now.milliseconds])
            if db.changesCount == 1 {
                deliveries.append(try SQLiteStore.appendEvent(.invitation(invitation), to: user, now: now, statements))
            }
        }
    }
}
