import ParleyCore
import ParleyStore
import PostgresNIO

/// Column lists shared by the queries, so every query decodes a model the same way.
enum Columns {
    /// A user's row (``UserRow``). Queries read columns after it by position: it grows at the end only.
    static let user = "u.id, u.username, u.display_name, u.created_at, u.photo_upload"
    /// A message's row; ``PostgresMessageRendering`` completes its reply quote and reactions.
    static let message =
        "m.id, m.conversation_id, m.seq, m.sender_id, m.client_id, m.text, m.created_at, m.entry, m.mentions, m.reply_to_seq, m.edited_at, m.deleted_at, m.reaction_count, m.attachments"
}

typealias UserRow = (String, String, String, Int64, String?)
typealias MessageRow = (String, String, Int64, String, String, String, Int64, String?, String?, Int64?, Int64?, Int64?, Int32, String?)

extension User {
    init(_ row: UserRow) {
        self.init(
            id: UserID(rawValue: row.0), username: row.1, displayName: row.2, createdAt: Timestamp(milliseconds: row.3),
            photo: row.4.map { API.photoPath(UploadID(rawValue: $0)) })
    }
}

extension Message {
    init(_ row: MessageRow) {
        self.init(
            id: MessageID(rawValue: row.0), conversationId: ConversationID(rawValue: row.1), seq: row.2,
            senderId: UserID(rawValue: row.3), clientId: ClientMessageID(rawValue: row.4), text: row.5,
            createdAt: Timestamp(milliseconds: row.6), entry: StoredJSON.entry(row.7), mentions: StoredJSON.userIDs(row.8),
            replyTo: row.9.map(ReplyQuote.pending), editedAt: row.10.map(Timestamp.init(milliseconds:)),
            deletedAt: row.11.map(Timestamp.init(milliseconds:)), reactions: row.12 > 0 ? [] : nil,
            attachments: StoredJSON.attachments(row.13))
    }
}

extension PostgresConnection {
    /// Runs `query` and returns every row.
    func rows(_ query: PostgresQuery, _ logger: Logger) async throws -> [PostgresRow] {
        try await self.query(query, logger: logger).collect()
    }

    /// Runs `query` and decodes the first column of the first row, if any.
    func value<T: PostgresDecodable>(_ query: PostgresQuery, as type: T.Type, _ logger: Logger) async throws -> T? {
        try await rows(query, logger).first?.decode(T.self)
    }

    /// Runs `query` and decodes the first column of every row.
    func values<T: PostgresDecodable>(_ query: PostgresQuery, as type: T.Type, _ logger: Logger) async throws -> [T] {
        try await rows(query, logger).map { try $0.decode(T.self) }
    }
}
