import Foundation
import GRDB
import ParleyCore

/// The client's own SQLite file, one per account: conversations, messages, the outbox and the stream
/// position, so a restarted app shows what it had at once, before the network answers.
///
/// Models are stored as JSON next to the keys they are looked up by; the server stays the source of truth.
/// JSON leaves absent optional fields out, so a model that gains optional fields (groups added
/// `title`, `leftSeq`, `entry`, `role` …) reads rows written before as it always did, with those
/// fields `nil`: no migration. A row that no longer decodes is skipped, never fatal.
public final class LocalStore: Sendable {
    private let queue: DatabaseQueue

    /// Opens (creating and migrating if needed) the database file at `path`.
    public init(path: String) throws {
        try FileManager.default.createDirectory(at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
        queue = try DatabaseQueue(path: path)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                    CREATE TABLE conversations (id TEXT PRIMARY KEY NOT NULL, json TEXT NOT NULL);
                    CREATE TABLE messages (conversation_id TEXT NOT NULL, seq INTEGER NOT NULL, json TEXT NOT NULL,
                                           PRIMARY KEY (conversation_id, seq)) WITHOUT ROWID;
                    CREATE TABLE outbox (ordinal INTEGER PRIMARY KEY, json TEXT NOT NULL);
                    """)
        }
        try migrator.migrate(queue)
    }

    // MARK: stream position

    /// The last stream position fully processed, to resume from; `nil` before the first sync.
    public func position() throws -> Int64? {
        try queue.read { db in try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'position'").flatMap { Int64($0) } }
    }

    /// Records the last stream position processed (`nil` forgets it: the next start resyncs).
    public func setPosition(_ position: Int64?) throws {
        try queue.write { db in
            if let position {
                try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('position', ?)", arguments: [String(position)])
            } else {
                try db.execute(sql: "DELETE FROM meta WHERE key = 'position'")
            }
        }
    }

    // MARK: conversations and messages

    /// The cached conversation summaries.
    public func conversations() throws -> [ConversationSummary] {
        try queue.read { db in try String.fetchAll(db, sql: "SELECT json FROM conversations").compactMap(Self.decode) }
    }

    /// Caches conversation summaries, replacing older copies.
    public func save(conversations: [ConversationSummary]) throws {
        try queue.write { db in
            for summary in conversations {
                try db.execute(sql: "INSERT OR REPLACE INTO conversations (id, json) VALUES (?, ?)", arguments: [summary.id.rawValue, Self.encode(summary)])
            }
        }
    }

    /// The newest `limit` stored messages of a conversation, ascending.
    public func messages(in conversation: ConversationID, limit: Int = 200) throws -> [Message] {
        try queue.read { db in
            try String.fetchAll(
                db, sql: "SELECT json FROM messages WHERE conversation_id = ? ORDER BY seq DESC LIMIT ?", arguments: [conversation.rawValue, limit]
            ).compactMap(Self.decode).reversed()
        }
    }

    /// Caches messages (a message already cached is replaced).
    public func save(messages: [Message]) throws {
        guard !messages.isEmpty else { return }
        try queue.write { db in
            for message in messages {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO messages (conversation_id, seq, json) VALUES (?, ?, ?)",
                    arguments: [message.conversationId.rawValue, message.seq, Self.encode(message)])
            }
        }
    }

    /// Forgets one message (deleted for me).
    public func deleteMessage(in conversation: ConversationID, seq: Int64) throws {
        try queue.write { db in
            try db.execute(sql: "DELETE FROM messages WHERE conversation_id = ? AND seq = ?", arguments: [conversation.rawValue, seq])
        }
    }

    /// Forgets everything but the outbox (after a `resync`).
    public func clearSnapshot() throws {
        try queue.write { db in
            try db.execute(sql: "DELETE FROM conversations; DELETE FROM messages; DELETE FROM meta WHERE key = 'position'")
        }
    }

    // MARK: groups

    /// The pending group invitations last known, newest first.
    public func invitations() throws -> [Invitation] {
        try meta("invitations") ?? []
    }

    /// Caches the pending invitations.
    public func save(invitations: [Invitation]) throws {
        try setMeta("invitations", invitations)
    }

    /// Idempotency keys of group actions without a sure answer (``GroupActionLedger``).
    func groupActions() throws -> GroupActionLedger? {
        try meta("groupActions")
    }

    func save(groupActions: GroupActionLedger) throws {
        try setMeta("groupActions", groupActions)
    }

    /// The messages deleted for me, by conversation (never shown or counted again).
    func hiddenMessages() throws -> [ConversationID: Set<Int64>]? {
        try meta("hiddenMessages")
    }

    func save(hiddenMessages: [ConversationID: Set<Int64>]) throws {
        try setMeta("hiddenMessages", hiddenMessages)
    }

    private func meta<T: Decodable>(_ key: String) throws -> T? {
        let json = try queue.read { db in try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: [key]) }
        guard let json else { return nil }
        return Self.decode(json)
    }

    private func setMeta(_ key: String, _ value: some Encodable) throws {
        let json = try Self.encode(value)
        try queue.write { db in try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", arguments: [key, json]) }
    }

    // MARK: outbox

    /// The unsent messages, in the order written.
    public func outbox() throws -> [OutboxEntry] {
        try queue.read { db in try String.fetchAll(db, sql: "SELECT json FROM outbox ORDER BY ordinal").compactMap(Self.decode) }
    }

    /// Replaces the stored outbox with `entries` (in order) in one transaction.
    public func save(outbox entries: [OutboxEntry]) throws {
        try queue.write { db in
            try db.execute(sql: "DELETE FROM outbox")
            for (index, entry) in entries.enumerated() {
                try db.execute(sql: "INSERT INTO outbox (ordinal, json) VALUES (?, ?)", arguments: [index, Self.encode(entry)])
            }
        }
    }

    private static func encode<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try WireFormat.encoder().encode(value), as: UTF8.self)
    }

    private static func decode<T: Decodable>(_ json: String) -> T? {
        try? JSONDecoder().decode(T.self, from: Data(json.utf8))
    }
}
