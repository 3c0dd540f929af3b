import ParleyCore
import ParleyStore
import PostgresNIO

/// Completes messages read with ``Columns/message`` into what they are now for one viewer: the
/// reply quote from the current original, and the reactions (see SQLite's `MessageRendering`).
/// Messages without a reply or reactions, nearly all of them, cost nothing here.
extension PostgresStore {
    func complete(_ messages: [Message], for viewer: UserID, _ db: PostgresConnection) async throws -> [Message] {
        guard messages.contains(where: \.needsRendering) else { return messages }
        var completed: [Message] = []
        completed.reserveCapacity(messages.count)
        var leftSeq: [ConversationID: Int64?] = [:]
        for message in messages {
            guard message.needsRendering else {
                completed.append(message)
                continue
            }
            if leftSeq[message.conversationId] == nil { leftSeq[message.conversationId] = try await self.leftSeq(viewer, message.conversationId, db) }
            completed.append(try await complete(message, for: viewer, leftSeq: leftSeq[message.conversationId] ?? nil, db))
        }
        return completed
    }

    func complete(_ message: Message, for viewer: UserID, _ db: PostgresConnection) async throws -> Message {
        guard message.needsRendering else { return message }
        return try await complete(message, for: viewer, leftSeq: try await leftSeq(viewer, message.conversationId, db), db)
    }

    /// The seq of the entry by which `viewer` left the group `conversation` (nil while a member, or
    /// for a direct conversation).
    func leftSeq(_ viewer: UserID, _ conversation: ConversationID, _ db: PostgresConnection) async throws -> Int64? {
        guard conversation.isGroup else { return nil }
        return try await db.value(
            "SELECT left_seq FROM former_members WHERE user_id = \(viewer.rawValue) AND conversation_id = \(conversation.rawValue)",
            as: Int64.self, logger)
    }

    /// Someone who left sees the text a message had when they left, the quote of then and the
    /// reactions of then (see SQLite's rendering and `CommitOrderMarks`).
    private func complete(_ message: Message, for viewer: UserID, leftSeq: Int64?, _ db: PostgresConnection) async throws -> Message {
        var message = message
        if let leftSeq, message.editedAt != nil, !message.isDeleted,
            let version = try await textBefore(leftSeq, of: message.seq, in: message.conversationId, db)
        {
            message.text = version.text
            message.editedAt = version.editedAt
        }
        if let pending = message.replyTo, let quote = try await self.quote(of: pending.seq, in: message.conversationId, asOf: leftSeq, db) {
            var visible = true
            if message.conversationId.isGroup { visible = try await canSee(quote.seq, in: message.conversationId, viewer, db) }
            message.replyTo = visible ? quote : .hidden(seq: quote.seq, senderId: quote.senderId)
        } else {
            message.replyTo = nil
        }
        if message.reactions != nil {
            let (id, seq) = (message.conversationId.rawValue, message.seq)
            let sql: PostgresQuery =
                if let leftSeq {
                    """
                    SELECT user_id, emoji, created_at FROM reactions WHERE conversation_id = \(id) AND seq = \(seq) AND mark < \(leftSeq)
                    UNION ALL SELECT user_id, emoji, created_at FROM former_reactions
                        WHERE conversation_id = \(id) AND seq = \(seq) AND mark < \(leftSeq) AND replaced_mark >= \(leftSeq)
                    ORDER BY created_at, user_id
                    """
                } else {
                    "SELECT user_id, emoji, created_at FROM reactions WHERE conversation_id = \(id) AND seq = \(seq) ORDER BY created_at, user_id"
                }
            let pairs = try await db.rows(sql, logger).map { row in
                let (user, emoji, _) = try row.decode((String, String, Int64).self)
                return (user: UserID(rawValue: user), emoji: emoji)
            }
            message.reactions = pairs.isEmpty ? nil : Reaction.aggregate(pairs, for: viewer)
        }
        return message
    }

    /// The text a message had when its reader left at `leftSeq`, if it was edited since: its first
    /// version replaced at that mark or later.
    private func textBefore(_ leftSeq: Int64, of seq: Int64, in conversation: ConversationID, _ db: PostgresConnection) async throws -> (
        text: String, editedAt: Timestamp?
    )? {
        guard
            let version = try await db.rows(
                """
                SELECT text, created_at, version FROM message_versions
                WHERE conversation_id = \(conversation.rawValue) AND seq = \(seq) AND replaced_mark >= \(leftSeq)
                ORDER BY version LIMIT 1
                """, logger
            ).first
        else { return nil }
        let (text, created, number) = try version.decode((String, Int64, Int32).self)
        return (text, number == 1 ? nil : Timestamp(milliseconds: created))
    }

    /// Whether one of `viewer`'s spans in the group holds `seq`.
    func canSee(_ seq: Int64, in conversation: ConversationID, _ viewer: UserID, _ db: PostgresConnection) async throws -> Bool {
        try await db.value(
            """
            SELECT true FROM member_spans WHERE conversation_id = \(conversation.rawValue) AND user_id = \(viewer.rawValue)
            AND from_seq <= \(seq) AND (to_seq IS NULL OR to_seq >= \(seq)) LIMIT 1
            """, as: Bool.self, logger) == true
    }

    /// For events that carry one rendering of a group reply to every member: the message with the
    /// quote as its readers see it, and who they are (``Message/quoteSeen(by:quoteReaders:)``);
    /// `message` itself and nil for anything else (see SQLite's `MessageRendering`).
    func quoteForAudience(_ message: Message, _ db: PostgresConnection) async throws -> (Message, Set<UserID>?) {
        guard let readers = try await quoteReaders(message, db), let quote = message.replyTo else { return (message, nil) }
        var shared = message
        shared.replyTo = try await self.quote(of: quote.seq, in: message.conversationId, db)
        return (shared, readers)
    }

    /// Who may see the message a group reply quotes (nil for anything else); a send, whose quote is
    /// already as its readers see it, needs only this.
    func quoteReaders(_ message: Message, _ db: PostgresConnection) async throws -> Set<UserID>? {
        guard message.conversationId.isGroup, let quote = message.replyTo else { return nil }
        let readers = try await db.values(
            """
            SELECT user_id FROM member_spans WHERE conversation_id = \(message.conversationId.rawValue)
            AND from_seq <= \(quote.seq) AND (to_seq IS NULL OR to_seq >= \(quote.seq))
            """, as: String.self, logger)
        return Set(readers.map(UserID.init(rawValue:)))
    }

    /// The quote of the message at `seq`, with its text as it was for someone who left at `leftSeq`.
    func quote(of seq: Int64, in conversation: ConversationID, asOf leftSeq: Int64? = nil, _ db: PostgresConnection) async throws -> ReplyQuote? {
        guard
            let row = try await db.rows(
                "SELECT sender_id, text, deleted_at, edited_at FROM messages WHERE conversation_id = \(conversation.rawValue) AND seq = \(seq)",
                logger
            ).first
        else { return nil }
        let (sender, current, deleted, edited) = try row.decode((String, String, Int64?, Int64?).self)
        var text = current
        if let leftSeq, deleted == nil, edited != nil, let before = try await textBefore(leftSeq, of: seq, in: conversation, db) {
            text = before.text
        }
        return ReplyQuote(seq: seq, senderId: UserID(rawValue: sender), text: text, deleted: deleted != nil)
    }

    /// The message at `seq` as `viewer` sees it now, or nil.
    func currentMessage(_ seq: Int64, in conversation: ConversationID, for viewer: UserID, _ db: PostgresConnection) async throws -> Message? {
        guard
            let row = try await db.rows(
                "SELECT \(unescaped: Columns.message) FROM messages m WHERE m.conversation_id = \(conversation.rawValue) AND m.seq = \(seq)", logger
            ).first
        else { return nil }
        return try await complete(Message(try row.decode(MessageRow.self)), for: viewer, db)
    }
}
