import Foundation
import Logging
import ParleyCore
@testable import ParleyPostgres
import ParleyStore
import ParleyTestSupport
import PostgresNIO
import Synchronization
import Testing

/// ``PostgresSearchIndexUpkeep``: a node merges the search indexes' pending lists itself, so no
/// send's insert is the one that crosses their limit.
@Suite(.timeLimit(.minutes(10))) struct SearchIndexUpkeepTests {
    /// A Latin, a long CJK and a short CJK message: each of the three GIN indexes gets entries.
    static let texts = ["upkeep of the index", "会議は明日の午後です", "京"]

    static func store(upkeep: Duration?, url: DatabaseURL? = nil) async throws -> PostgresStore {
        var logger = Logger(label: "search-index-upkeep-test")
        logger.logLevel = .critical
        let url = if let url { url } else { try DatabaseURL(try await PostgresTestServer.freshDatabaseAsync()) }
        return try await PostgresStore.connect(url, poolSize: 2, searchIndexUpkeep: upkeep, logger: logger)
    }

    static func sendTexts(_ store: PostgresStore) async throws -> User {
        let ada = try await store.makeUser("ada"), bob = try await store.makeUser("bob")
        for text in texts { _ = try await store.send(text, from: ada.id, to: .user(bob.id)) }
        return ada
    }

    /// `merge` covers every GIN index of `messages`: an index added later and left out would grow
    /// its list to the limit in a send again.
    @Test func theMergeCoversEveryGINIndexOfMessages() async throws {
        let store = try await Self.store(upkeep: nil)
        let names = try await store.read { db in
            let sql = """
                SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
                WHERE i.indrelid = 'messages'::regclass AND a.amname = 'gin'
                """
            var found: Set<String> = []
            for try await name in try await db.query(PostgresQuery(unsafeSQL: sql), logger: store.logger).decode(String.self) {
                found.insert(name)
            }
            return found
        }
        #expect(names == Set(PostgresSearchIndexUpkeep.indexes))
        try await store.close()
    }

    /// Rules 1 and 2: sends queue their entries (one pending page per index here); a merge takes
    /// them all into the indexes, leaves nothing pending, and every message is still found.
    @Test func aMergeEmptiesEveryPendingListAndLosesNoEntry() async throws {
        let store = try await Self.store(upkeep: nil)
        let ada = try await Self.sendTexts(store)
        #expect(try await PostgresSearchIndexUpkeep.mergePending(store) == PostgresSearchIndexUpkeep.indexes.count)
        #expect(try await PostgresSearchIndexUpkeep.mergePending(store) == 0)
        for term in ["upkeep", "会議", "京"] {
            let hits = try await store.search(try SearchQuery.parse(term), as: ada.id, limit: 10, offset: 0)
            #expect(hits.map(\.text).count == 1, "\(term)")
        }
        try await store.close()
    }

    /// Rule 2's loop: a store merges on its own at its interval, and its close ends the loop. The
    /// lists are filled (one page per index) before the merging store exists, so its count reaching
    /// three means it merged all of them, whenever its ticks fell.
    @Test func aStoreMergesOnItsOwn() async throws {
        let url = try DatabaseURL(try await PostgresTestServer.freshDatabaseAsync())
        let sender = try await Self.store(upkeep: nil, url: url)
        _ = try await Self.sendTexts(sender)
        let store = try await Self.store(upkeep: .milliseconds(50), url: url)
        #expect(try await eventuallyTrue("the pages merged") { store.searchIndexPagesMerged.load(ordering: .relaxed) >= 3 })
        #expect(try await PostgresSearchIndexUpkeep.mergePending(store) == 0, "nothing left for anyone else")
        try await store.close()
        try await sender.close()
    }
}
