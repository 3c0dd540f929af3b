import GRDB
import ParleyCore
import ParleyStore

/// Completes messages read with ``Columns/message`` into what they are now for one viewer: the
/// reply quote from the current original, and the reactions (docs/protocol.md "Message actions").
/// Messages without a reply or reactions, nearly all of them, cost nothing here.
///
/// Someone who left a group keeps what they could see up to then and nothing after: a message edited
/// after they left shows them the text it had when they left, a quote the quoted text of then, and
/// the reactions it had then (deleted is deleted for everyone: that text is gone). "Then" is cut by
/// commit order (``CommitOrderMarks``). A quote of a message outside the viewer's spans is hidden
/// (``ReplyQuote/hidden(seq:senderId:)``).
enum MessageRendering {
    static func complete(_ messages: [Message], for viewer: UserID, _ db: Database) throws -> [Message] {
        guard messages.contains(where: \.needsRendering) else { return messages }
        var departures = Departures()
        return try messages.map { try complete($0, for: viewer, departures: &departures, db) }
    }

    /// Where the viewer left each group met so far: a page or a replay asks once per conversation.
    struct Departures {
        private var leftSeq: [ConversationID: Int64?] = [:]

        mutating func leftSeq(_ viewer: UserID, _ conversation: ConversationID, _ db: Database) throws -> Int64? {
            if let known = leftSeq[conversation] { return known }
            let found = try MessageRendering.leftSeq(viewer, conversation, db)
            leftSeq[conversation] = .some(found)
            return found
        }
    }

    static func complete(_ message: Message, for viewer: UserID, departures: inout Departures, _ db: Database) throws -> Message {
        guard message.needsRendering else { return message }
        return try complete(message, for: viewer, leftSeq: try departures.leftSeq(viewer, message.conversationId, db), db)
    }

    static func complete(_ message: Message, for viewer: UserID, _ db: Database) throws -> Message {
        guard message.needsRendering else { return message }
        return try complete(message, for: viewer, leftSeq: try leftSeq(viewer, message.conversationId, db), db)
    }

    /// The seq of the entry by which `viewer` left the group `conversation` (nil while a member, or
    /// for a direct conversation).
    static func leftSeq(_ viewer: UserID, _ conversation: ConversationID, _ db: Database) throws -> Int64? {
        guard conversation.isGroup else { return nil }
        return try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT left_seq FROM former_members WHERE user_id = ? AND conversation_id = ?"),
            arguments: [viewer.rawValue, conversation.rawValue])
    }

    private static func complete(_ message: Message, for viewer: UserID, leftSeq: Int64?, _ db: Database) throws -> Message {
        var message = message
        if let leftSeq, message.editedAt != nil, !message.isDeleted, let version = try textBefore(leftSeq, of: message.seq, in: message.conversationId, db) {
            message.text = version.text
            message.editedAt = version.editedAt
        }
        if let pending = message.replyTo, let quote = try self.quote(of: pending.seq, in: message.conversationId, asOf: leftSeq, db) {
            let visible = try !message.conversationId.isGroup || canSee(quote.seq, in: message.conversationId, viewer, db)
            message.replyTo = visible ? quote : .hidden(seq: quote.seq, senderId: quote.senderId)
        } else {
            message.replyTo = nil
        }
        if message.reactions != nil {
            message.reactions = try reactions(of: message.seq, in: message.conversationId, for: viewer, leftSeq: leftSeq, db)
        }
        return message
    }

    /// The text a message had when its reader left at `leftSeq`, if it was edited since: its first
    /// version replaced at that mark or later (``CommitOrderMarks`` rule 2).
    private static func textBefore(_ leftSeq: Int64, of seq: Int64, in conversation: ConversationID, _ db: Database) throws -> (
        text: String, editedAt: Timestamp?
    )? {
        guard
            let version = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT text, created_at, version FROM message_versions WHERE conversation_id = ? AND seq = ? AND replaced_mark >= ?
                        ORDER BY version LIMIT 1
                        """
                ),
                arguments: [conversation.rawValue, seq, leftSeq])
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

    /// The quote of the message at `seq`, with its text as it was for someone who left at `leftSeq`.
    static func quote(of seq: Int64, in conversation: ConversationID, asOf leftSeq: Int64? = nil, _ db: Database) throws -> ReplyQuote? {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT sender_id, text, deleted_at, edited_at FROM messages WHERE conversation_id = ? AND seq = ?"),
                arguments: [conversation.rawValue, seq])
        else { return nil }
        var text: String = row[1]
        let deleted = (row[2] as Int64?) != nil
        if let leftSeq, !deleted, row[3] as Int64? != nil, let before = try textBefore(leftSeq, of: seq, in: conversation, db) {
            text = before.text
        }
        return ReplyQuote(seq: seq, senderId: UserID(rawValue: row[0]), text: text, deleted: deleted)
    }

    /// The reactions on a message; for someone who left at `leftSeq`, those it had then
    /// (``CommitOrderMarks`` rule 3).
    static func reactions(of seq: Int64, in conversation: ConversationID, for viewer: UserID, leftSeq: Int64? = nil, _ db: Database) throws
        -> [Reaction]?
    {
        let sql =
            leftSeq == nil
            ? "SELECT user_id, emoji FROM reactions WHERE conversation_id = ?1 AND seq = ?2 ORDER BY created_at, user_id"
            : """
            SELECT user_id, emoji, created_at FROM reactions WHERE conversation_id = ?1 AND seq = ?2 AND mark < ?3
            UNION ALL SELECT user_id, emoji, created_at FROM former_reactions
                WHERE conversation_id = ?1 AND seq = ?2 AND mark < ?3 AND replaced_mark >= ?3
            ORDER BY created_at, user_id
            """
        let arguments: StatementArguments = leftSeq.map { [conversation.rawValue, seq, $0] } ?? [conversation.rawValue, seq]
        let pairs = try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments).map { (user: UserID(rawValue: $0[0]), emoji: $0[1] as String) }
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
