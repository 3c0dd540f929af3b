import GRDB
import ParleyCore
import ParleyStore

/// Column lists and row readers shared by the queries, so every query decodes a model the same way.
enum Columns {
    /// A user's row. Queries read columns after it by position: it grows at the end only, and
    /// ``userCount`` with it.
    static let user = "u.id, u.username, u.display_name, u.created_at, u.photo_upload"
    /// How many columns ``user`` has.
    static let userCount = 5
    /// A message's row; ``MessageRendering`` completes its reply quote and reactions.
    static let message =
        "m.id, m.conversation_id, m.seq, m.sender_id, m.client_id, m.text, m.created_at, m.entry, m.mentions, m.reply_to_seq, m.edited_at, m.deleted_at, m.reaction_count, m.attachments"
    /// How many columns ``message`` has.
    static let messageCount = 14
}

extension User {
    /// Reads ``Columns/user`` starting at column `offset`.
    init(row: Row, at offset: Int = 0) {
        self.init(
            id: UserID(rawValue: row[offset]), username: row[offset + 1], displayName: row[offset + 2],
            createdAt: Timestamp(milliseconds: row[offset + 3]), photo: (row[offset + 4] as String?).map { API.photoPath(UploadID(rawValue: $0)) })
    }
}

extension Message {
    /// Reads ``Columns/message`` starting at column `offset`.
    init(row: Row, at offset: Int = 0) {
        self.init(
            id: MessageID(rawValue: row[offset]), conversationId: ConversationID(rawValue: row[offset + 1]),
            seq: row[offset + 2], senderId: UserID(rawValue: row[offset + 3]),
            clientId: ClientMessageID(rawValue: row[offset + 4]), text: row[offset + 5],
            createdAt: Timestamp(milliseconds: row[offset + 6]),
            entry: StoredJSON.entry(row[offset + 7]), mentions: StoredJSON.userIDs(row[offset + 8]),
            replyTo: (row[offset + 9] as Int64?).map(ReplyQuote.pending), editedAt: (row[offset + 10] as Int64?).map(Timestamp.init(milliseconds:)),
            deletedAt: (row[offset + 11] as Int64?).map(Timestamp.init(milliseconds:)), reactions: (row[offset + 12] as Int64? ?? 0) > 0 ? [] : nil,
            attachments: StoredJSON.attachments(row[offset + 13]))
    }
}

extension Message {
    /// Reads ``Columns/message`` from a row of a ``RawStatement``.
    init(row: RawRow) {
        self.init(
            id: MessageID(rawValue: row.text(0)), conversationId: ConversationID(rawValue: row.text(1)), seq: row.int64(2),
            senderId: UserID(rawValue: row.text(3)), clientId: ClientMessageID(rawValue: row.text(4)), text: row.text(5),
            createdAt: Timestamp(milliseconds: row.int64(6)),
            entry: row.isNull(7) ? nil : StoredJSON.entry(row.text(7)), mentions: row.isNull(8) ? nil : StoredJSON.userIDs(row.text(8)),
            replyTo: row.isNull(9) ? nil : ReplyQuote.pending(row.int64(9)),
            editedAt: row.isNull(10) ? nil : Timestamp(milliseconds: row.int64(10)),
            deletedAt: row.isNull(11) ? nil : Timestamp(milliseconds: row.int64(11)), reactions: row.int64(12) > 0 ? [] : nil,
            attachments: row.isNull(13) ? nil : StoredJSON.attachments(row.text(13)))
    }
}
