import GRDB
import Logging
import ParleyCore
@testable import ParleyPostgres
@testable import ParleySQLite
import ParleyStore
import ParleyTestSupport
import PostgresNIO
import Testing

/// A message deleted for everyone by a build before `v21` (SQLite) / `v24` (PostgreSQL) kept its
/// `edited_at`; opening such a database with this build clears it, and leaves a live message's.
@Suite struct TombstoneMigrationTests {
    /// Ada edits two messages and deletes the first; returns the people, the chat and both seqs.
    static func scenario(_ store: any ParleyStore) async throws -> (reader: UserID, chat: ConversationID, deleted: Int64, edited: Int64) {
        let ada = try await store.makeUser("ada"), grace = try await store.makeUser("grace")
        let chat = try await store.send("first", from: ada.id, to: .user(grace.id)).message.conversationId
        let first = try await store.send("gone soon", from: ada.id, to: .conversation(chat)).message.seq
        let second = try await store.send("kept", from: ada.id, to: .conversation(chat)).message.seq
        for (seq, change) in [(first, NewMessageAction.Change.edit("gone, edited")), (second, .edit("kept, edited")), (first, .delete)] {
            _ = try await store.act(NewMessageAction(actor: ada.id, clientId: .random(), conversation: chat, seq: seq, change: change), now: .now())
        }
        return (grace.id, chat, first, second)
    }

    /// Whether each message has an edit time, as the reader sees it: (the deleted one, the edited one).
    static func edited(_ store: any ParleyStore, _ s: (reader: UserID, chat: ConversationID, deleted: Int64, edited: Int64)) async throws -> (Bool, Bool) {
        let page = try await store.messages(in: s.chat, as: s.reader, query: HistoryQuery(limit: 50)).messages
        let deleted = try #require(page.first { $0.seq == s.deleted }), edited = try #require(page.first { $0.seq == s.edited })
        #expect(deleted.deletedAt != nil && edited.deletedAt == nil)
        return (deleted.editedAt != nil, edited.editedAt != nil)
    }

    static let rowsAsTheBuildBeforeLeftThem = "UPDATE messages SET edited_at = created_at + 1 WHERE deleted_at IS NOT NULL"

    @Test func sqlite() async throws {
        let path = WALCheckpointerTests.temporaryPath()
        let store = try SQLiteStore(path: path, durability: .normal)
        let s = try await Self.scenario(store)
        #expect(try await Self.edited(store, s) == (false, true), "a delete clears the edit time now")
        try await store.close()
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in try db.execute(sql: Self.rowsAsTheBuildBeforeLeftThem) }
        let unmigrated = try SQLiteStore(path: path, durability: .normal)  // v21 still counts as applied
        #expect(try await Self.edited(unmigrated, s) == (true, true), "the rows as a build before v21 left them")
        try await unmigrated.close()
        try await queue.write { db in try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v21-tombstones-not-edited'") }
        try queue.close()
        let migrated = try SQLiteStore(path: path, durability: .normal)
        #expect(try await Self.edited(migrated, s) == (false, true))
        try await migrated.close()
    }

    @Test func postgres() async throws {
        let url = try await PostgresTestServer.freshDatabaseAsync()
        let store = try await PostgresStore.connect(DatabaseURL(url), poolSize: 2, logger: Logger(label: "tombstone-test"))
        let s = try await Self.scenario(store)
        #expect(try await Self.edited(store, s) == (false, true), "a delete clears the edit time now")
        try await store.transaction { db in
            try await db.query(PostgresQuery(unsafeSQL: Self.rowsAsTheBuildBeforeLeftThem), logger: store.logger)
            try await db.query("DELETE FROM parley_migrations WHERE version = 'v24-tombstones-not-edited'", logger: store.logger)
        }
        #expect(try await Self.edited(store, s) == (true, true), "the rows as a build before v24 left them")
        try await store.close()
        let migrated = try await PostgresStore.connect(DatabaseURL(url), poolSize: 2, logger: Logger(label: "tombstone-test"))
        #expect(try await Self.edited(migrated, s) == (false, true))
        try await migrated.close()
    }
}
