import GRDB
import ParleyCore
import ParleyStore

/// Completes messages read with ``Columns/message`` into what they are now for one viewer: the
/// reply quote from the current original, and the reactions (docs/protocol.md "Message actions").
/// Messages without a reply or reactions, nearly all of them, cost nothing here.
///
/// Someone who left a group keeps what they could see up to then and nothing after: a message edited
/// after they left shows them the text it had when they left, a quote the quoted text of then, and
/// reactions only those made before (deleted is deleted for everyone: that text is gone). A quote of
/// a message outside the viewer's spans is hidden (``ReplyQuote/hidden(seq:senderId:)``).
enum MessageRendering {
    static func complete(_ messages: [Message], for viewer: UserID, _ db: Database) throws -> [Message] {
        guard messages.contains(where: \.needsRendering) else { return messages }
        var departures = Departures()
        return try messages.map { try complete($0, for: viewer, departures: &departures, db) }
    }

    /// When the viewer left each group met so far: a page or a replay asks once per conversation.
    struct Departures {
        private var leftAt: [ConversationID: Int64?] = [:]

        mutating func leftAt(_ viewer: UserID, _ conversation: ConversationID, _ db: Database) throws -> Int64? {
            if let known = leftAt[conversation] { return known }
            let found = try MessageRendering.leftAt(viewer, conversation, db)
            leftAt[conversation] = .some(found)
            return found
        }
    }

    static func complete(_ message: Message, for viewer: UserID, departures: inout Departures, _ db: Database) throws -> Message {
        guard message.needsRendering else { return message }
        return try complete(message, for: viewer, leftAt: try departures.leftAt(viewer, message.conversationId, db), db)
    }

    static func complete(_ message: Message, for viewer: UserID, _ db: Database) throws -> Message {
        guard message.needsRendering else { return message }
        return try complete(message, for: viewer, leftAt: try leftAt(viewer, message.conversationId, db), db)
    }

    /// When `viewer` left the group `conversation` (nil while a member, or for a direct conversation).
    static func leftAt(_ viewer: UserID, _ conversation: ConversationID, _ db: Database) throws -> Int64? {
        guard conversation.isGroup else { return nil }
        return try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT left_at FROM former_members WHERE user_id = ? AND conversation_id = ?"),
            arguments: [viewer.rawValue, conversation.rawValue])
    }

    private static func complete(_ message: Message, for viewer: UserID, leftAt: Int64?, _ db: Database) throws -> Message {
        var message = message
        if let leftAt, let edited = message.editedAt, !message.isDeleted, edited.milliseconds >= leftAt,
            let version = try textBefore(leftAt, of: message.seq, in: message.conversationId, db)
        {
            message.text = version.text
            message.editedAt = version.editedAt
        }
        if let pending = message.replyTo, let quote = try self.quote(of: pending.seq, in: message.conversationId, asOf: leftAt, db) {
            let visible = try !message.conversationId.isGroup || canSee(quote.seq, in: message.conversationId, viewer, db)
            message.replyTo = visible ? quote : .hidden(seq: quote.seq, senderId: quote.senderId)
        } else {
            message.replyTo = nil
        }
        if message.reactions != nil {
            message.reactions = try reactions(of: message.seq, in: message.conversationId, for: viewer, before: leftAt, db)
        }
        return message
    }

    /// The text a message had at `time` when it was edited since: its first version replaced then or later.
    private static func textBefore(_ time: Int64, of seq: Int64, in conversation: ConversationID, _ db: Database) throws -> (
        text: String, editedAt: Timestamp?
    )? {
        guard
            let version = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT text, created_at, version FROM message_versions WHERE conversation_id = ? AND seq = ? AND replaced_at >= ?
                        ORDER BY version LIMIT 1
                        """
                ),
                arguments: [conversation.rawValue, seq, time])
        else { return nil }
        return (version[0], (version[2] as Int64) == 1 ? nil : Timestamp(milliseconds: version[1]))
    }

    /// Whether one of `viewer`'s spans in the group holds `seq`.
    static func canSee(_ seq: Int64, in conversation: ConversationID, _ viewer: UserID, _ db: Database) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(
                sql: "SELECT 1 FROM member_spans WHERE conversation_id = ? AND user_id = ? AND from_seq <= ? AND (to_seq IS NULL OR to_seq >= ?)"),
            arguments: [conversation.rawValue, viewer.rawValue, seq, seq]) == true
    }

    /// For events that carry one rendering of a group reply to every member: the message with the
    /// quote as its readers see it, and who they are (``Message/quoteSeen(by:quoteReaders:)``);
    /// `message` itself and nil for anything else.
    static func quoteForAudience(_ message: Message, _ db: Database) throws -> (Message, Set<UserID>?) {
        guard let readers = try quoteReaders(message, db), let quote = message.replyTo else { return (message, nil) }
        var shared = message
        shared.replyTo = try self.quote(of: quote.seq, in: message.conversationId, db)
        return (shared, readers)
    }

    /// Who may see the message a group reply quotes (nil for anything else); a send, whose quote is
    /// already as its readers see it, needs only this.
    static func quoteReaders(_ message: Message, _ db: Database) throws -> Set<UserID>? {
        guard message.conversationId.isGroup, let quote = message.replyTo else { return nil }
        let readers = try String.fetchAll(
            db.cachedStatement(sql: "SELECT user_id FROM member_spans WHERE conversation_id = ? AND from_seq <= ? AND (to_seq IS NULL OR to_seq >= ?)"),
            arguments: [message.conversationId.rawValue, quote.seq, quote.seq])
        return Set(readers.map(UserID.init(rawValue:)))
    }

    /// The quote of the message at `seq`, with its text as it was at `time` for someone who left then.
    static func quote(of seq: Int64, in conversation: ConversationID, asOf time: Int64? = nil, _ db: Database) throws -> ReplyQuote? {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT sender_id, text, deleted_at, edited_at FROM messages WHERE conversation_id = ? AND seq = ?"),
                arguments: [conversation.rawValue, seq])
        else { return nil }
        var text: String = row[1]
        let deleted = (row[2] as Int64?) != nil
        if let time, !deleted, let edited = row[3] as Int64?, edited >= time, let before = try textBefore(time, of: seq, in: conversation, db) {
            text = before.text
        }
        return ReplyQuote(seq: seq, senderId: UserID(rawValue: row[0]), text: text, deleted: deleted)
    }

    /// The reactions on a message, only those made before `time` for someone who left then.
    static func reactions(of seq: Int64, in conversation: ConversationID, for viewer: UserID, before time: Int64? = nil, _ db: Database) throws
        -> [Reaction]?
    {
        let pairs = try Row.fetchAll(
            db.cachedStatement(
                sql: "SELECT user_id, emoji FROM reactions WHERE conversation_id = ? AND seq = ? AND created_at < ? ORDER BY created_at, user_id"),
            arguments: [conversation.rawValue, seq, time ?? Int64.max]
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
