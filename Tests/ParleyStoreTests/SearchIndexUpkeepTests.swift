import Foundation
import Logging
import ParleyCore
@testable import ParleyPostgres
import ParleyStore
import ParleyTestSupport
import PostgresNIO
import Testing

/// ``PostgresSearchIndexUpkeep``: no search index of `messages` queues entries for a later send to
/// merge, and the migration merges what was queued before it.
@Suite(.timeLimit(.minutes(10))) struct SearchIndexUpkeepTests {
    /// A Latin, a long CJK and a short CJK message: each GIN index gets entries.
    static let texts = ["upkeep of the index", "会議は明日の午後です", "京"]

    /// Pages each index had queued, emptying the queues (`gin_clean_pending_list` merges them).
    static func mergedPendingPages(_ store: PostgresStore) async throws -> [String: Int] {
        try await store.leased { db in
            var pages: [String: Int] = [:]
            for index in PostgresSearchIndexUpkeep.indexes {
                let sql = "SELECT gin_clean_pending_list('\(index)'::regclass)"
                for try await count in try await db.query(PostgresQuery(unsafeSQL: sql), logger: store.logger).decode(Int.self) {
                    pages[index] = count
                }
            }
            return pages
        }
    }

    static func sendTexts(_ store: PostgresStore) async throws -> User {
        let ada = try await store.makeUser("ada"), bob = try await store.makeUser("bob")
        for text in texts { _ = try await store.send(text, from: ada.id, to: .user(bob.id)) }
        return ada
    }

    /// Rules 1 and 2: every GIN index of `messages` is one this migration covers and has
    /// `fastupdate = off`, so after sends nothing waits in a pending list.
    @Test func everySearchIndexTakesItsEntriesAtOnce() async throws {
        let store = try await LeanBatchTests.store()
        let options = try await store.leased { db in
            let sql = """
                SELECT c.relname, coalesce(array_to_string(c.reloptions, ','), '') FROM pg_index i
                JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
                WHERE i.indrelid = 'messages'::regclass AND a.amname = 'gin'
                """
            var found: [String: String] = [:]
            for try await (name, options) in try await db.query(PostgresQuery(unsafeSQL: sql), logger: store.logger).decode((String, String).self) {
                found[name] = options
            }
            return found
        }
        #expect(Set(options.keys) == Set(PostgresSearchIndexUpkeep.indexes))
        #expect(options.values.allSatisfy { $0.contains("fastupdate=off") }, "\(options)")
        _ = try await Self.sendTexts(store)
        #expect(try await Self.mergedPendingPages(store).values.allSatisfy { $0 == 0 })
    }

    /// Rule 3: entries queued before the migration are merged by it, and stay found.
    @Test func theMigrationMergesWhatWasQueued() async throws {
        let store = try await LeanBatchTests.store()
        try await store.leased { db in
            for index in PostgresSearchIndexUpkeep.indexes {
                try await db.query(PostgresQuery(unsafeSQL: "ALTER INDEX \(index) SET (fastupdate = on)"), logger: store.logger)
            }
        }
        let ada = try await Self.sendTexts(store)
        try await store.leased { db in
            try await db.query("BEGIN", logger: store.logger)
            for statement in PostgresSearchIndexUpkeep.statements {
                _ = try await db.query(PostgresQuery(unsafeSQL: statement), logger: store.logger).collect()
            }
            try await db.query("COMMIT", logger: store.logger)
        }
        #expect(try await Self.mergedPendingPages(store).values.allSatisfy { $0 == 0 })
        for term in ["upkeep", "会議", "京"] {
            let hits = try await store.search(try SearchQuery.parse(term), as: ada.id, limit: 10, offset: 0)
            #expect(hits.count == 1, "\(term)")
        }
    }
}
