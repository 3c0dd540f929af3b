import GRDB
import ParleyCore
import ParleyStore

/// Completes messages read with ``Columns/message`` into what they are now for one viewer: the
/// reply quote from the current original, and the reactions (docs/protocol.md "Message actions").
/// Messages without a reply or reactions, nearly all of them, cost nothing here.
///
/// Someone who left a group keeps what they could see up to then and nothing after: a message edited
/// after they left shows them the text it had when they left (deleted is deleted for everyone: that
/// text is gone).
enum MessageRendering {
    static func complete(_ messages: [Message], for viewer: UserID, _ db: Database) throws -> [Message] {
        guard messages.contains(where: \.needsRendering) else { return messages }
        return try messages.map { try complete($0, for: viewer, db) }
    }

    static func complete(_ message: Message, for viewer: UserID, _ db: Database) throws -> Message {
        var message = message
        if message.conversationId.isGroup, let edited = message.editedAt, !message.isDeleted,
            let leftAt = try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT left_at FROM former_members WHERE user_id = ? AND conversation_id = ?"),
                arguments: [viewer.rawValue, message.conversationId.rawValue]),
            edited.milliseconds >= leftAt,
            let version = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT text, created_at, version FROM message_versions WHERE conversation_id = ? AND seq = ? AND replaced_at >= ?
                        ORDER BY version LIMIT 1
                        """
                ),
                arguments: [message.conversationId.rawValue, message.seq, leftAt])
        {
            message.text = version[0]
            message.editedAt = (version[2] as Int64) == 1 ? nil : Timestamp(milliseconds: version[1])
        }
        if let quote = message.replyTo {
            message.replyTo = try self.quote(of: quote.seq, in: message.conversationId, db)
        }
        if message.reactions != nil {
            message.reactions = try reactions(of: message.seq, in: message.conversationId, for: viewer, db)
        }
        return message
    }

    static func quote(of seq: Int64, in conversation: ConversationID, _ db: Database) throws -> ReplyQuote? {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT sender_id, text, deleted_at FROM messages WHERE conversation_id = ? AND seq = ?"),
                arguments: [conversation.rawValue, seq])
        else { return nil }
        return ReplyQuote(seq: seq, senderId: UserID(rawValue: row[0]), text: row[1], deleted: (row[2] as Int64?) != nil)
    }

    static func reactions(of seq: Int64, in conversation: ConversationID, for viewer: UserID, _ db: Database) throws -> [Reaction]? {
        let pairs = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT user_id, emoji FROM reactions WHERE conversation_id = ? AND seq = ? ORDER BY created_at, user_id"),
            arguments: [conversation.rawValue, seq]
        ).map { (user: UserID(rawValue: $0[0]), emoji: $0[1] as String) }
        return pairs.isEmpty ? nil : Reaction.aggregate(pairs, for: viewer)
    }

    /// The message at `seq` as `viewer` sees it now, or nil.
    static func message(_ seq: Int64, in conversation: ConversationID, for viewer: UserID, _ db: Database) throws -> Message? {
        guard
            let message = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT \(Columns.message) FROM messages m WHERE m.conversation_id = ? AND m.seq = ?"),
                arguments: [conversation.rawValue, seq]
            ).map({ Message(row: $0) })
        else { return nil }
        return try complete(message, for: viewer, db)
    }
}
