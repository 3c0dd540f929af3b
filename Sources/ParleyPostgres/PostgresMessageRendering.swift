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
        for message in messages { completed.append(try await complete(message, for: viewer, db)) }
        return completed
    }

    func complete(_ message: Message, for viewer: UserID, _ db: PostgresConnection) async throws -> Message {
        var message = message
        // Edited after the viewer left the group: the text it had when they left (see SQLite's rendering).
        if message.conversationId.isGroup, let edited = message.editedAt, !message.isDeleted,
            let leftAt = try await db.value(
                "SELECT left_at FROM former_members WHERE user_id = \(viewer.rawValue) AND conversation_id = \(message.conversationId.rawValue)",
                as: Int64.self, logger),
            edited.milliseconds >= leftAt,
            let version = try await db.rows(
                """
                SELECT text, created_at, version FROM message_versions
                WHERE conversation_id = \(message.conversationId.rawValue) AND seq = \(message.seq) AND replaced_at >= \(leftAt)
                ORDER BY version LIMIT 1
                """, logger
            ).first
        {
            let (text, created, number) = try version.decode((String, Int64, Int32).self)
            message.text = text
            message.editedAt = number == 1 ? nil : Timestamp(milliseconds: created)
        }
        if let quote = message.replyTo { message.replyTo = try await self.quote(of: quote.seq, in: message.conversationId, db) }
        if message.reactions != nil {
            let pairs = try await db.rows(
                """
                SELECT user_id, emoji FROM reactions WHERE conversation_id = \(message.conversationId.rawValue) AND seq = \(message.seq)
                ORDER BY created_at, user_id
                """, logger
            ).map { row in
                let (user, emoji) = try row.decode((String, String).self)
                return (user: UserID(rawValue: user), emoji: emoji)
            }
            message.reactions = pairs.isEmpty ? nil : Reaction.aggregate(pairs, for: viewer)
        }
        return message
    }

    /// A message outside any connection: leases one only when there is something to complete.
    func completed(_ message: Message, for viewer: UserID) async throws -> Message {
        guard message.needsRendering else { return message }
        return try await read { db in try await self.complete(message, for: viewer, db) }
    }

    func quote(of seq: Int64, in conversation: ConversationID, _ db: PostgresConnection) async throws -> ReplyQuote? {
        guard
            let row = try await db.rows(
                "SELECT sender_id, text, deleted_at FROM messages WHERE conversation_id = \(conversation.rawValue) AND seq = \(seq)", logger
            ).first
        else { return nil }
        let (sender, text, deleted) = try row.decode((String, String, Int64?).self)
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
