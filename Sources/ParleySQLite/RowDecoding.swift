import GRDB
import ParleyCore
import ParleyStore

/// Column lists and row readers shared by the queries, so every query decodes a model the same way.
enum Columns {
    static let user = "u.id, u.username, u.display_name, u.created_at"
    static let message = "m.id, m.conversation_id, m.seq, m.sender_id, m.client_id, m.text, m.created_at, m.entry, m.mentions"
}

extension User {
    /// Reads ``Columns/user`` starting at column `offset`.
    init(row: Row, at offset: Int = 0) {
        self.init(
            id: UserID(rawValue: row[offset]), username: row[offset + 1], displayName: row[offset + 2],
            createdAt: Timestamp(milliseconds: row[offset + 3]))
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
            entry: StoredJSON.entry(row[offset + 7]), mentions: StoredJSON.userIDs(row[offset + 8]))
    }
}

extension Message {
    /// Reads ``Columns/message`` from a row of a ``RawStatement``.
    init(row: RawRow) {
        self.init(
            id: MessageID(rawValue: row.text(0)), conversationId: ConversationID(rawValue: row.text(1)), seq: row.int64(2),
            senderId: UserID(rawValue: row.text(3)), clientId: ClientMessageID(rawValue: row.text(4)), text: row.text(5),
            createdAt: Timestamp(milliseconds: row.int64(6)),
            entry: row.isNull(7) ? nil : StoredJSON.entry(row.text(7)), mentions: row.isNull(8) ? nil : StoredJSON.userIDs(row.text(8)))
    }
}
