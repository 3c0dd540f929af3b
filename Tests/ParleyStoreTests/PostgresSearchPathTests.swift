import Logging
import ParleyCore
@testable import ParleyPostgres
import ParleyStore
import ParleyTestSupport
import PostgresNIO
import Testing

/// ``PostgresSearchWords`` rule 4: the search functions work with no `search_path`, as autovacuum's
/// `ANALYZE` and `pg_restore` run them. Before, every automatic analyze of `messages` failed on
/// `unaccent`, and a restored database lost its word indexes.
@Suite struct PostgresSearchPathTests {
    @Test func theIndexExpressionsNeedNoSearchPath() async throws {
        let store = try await PostgresStore.connect(
            DatabaseURL(try await PostgresTestServer.freshDatabaseAsync()), poolSize: 2, logger: Logger(label: "search-path-test"))
        let ada = try await store.makeUser("ada"), grace = try await store.makeUser("grace")
        _ = try await store.send("Café東京で iPhoneを, ΣΟΦΙΑΣ db.json", from: ada.id, to: .user(grace.id))
        let (words, cjk): (String?, [String]?) = try await store.transaction { db in
            let schema = try #require(try await db.value("SELECT quote_ident(current_schema())", as: String.self, store.logger))
            try await db.query("SET LOCAL search_path = ''", logger: store.logger)
            try await db.query(PostgresQuery(unsafeSQL: "ANALYZE \(schema).messages"), logger: store.logger)
            // What pg_restore does: each index made again, its expression evaluated for every row.
            try await db.query(
                PostgresQuery(unsafeSQL: "CREATE INDEX restored_words ON \(schema).messages USING GIN (to_tsvector('simple', \(schema).parley_words(text)))"),
                logger: store.logger)
            try await db.query(
                PostgresQuery(
                    unsafeSQL: "CREATE INDEX restored_chars ON \(schema).messages USING GIN (\(schema).parley_cjk_chars(\(schema).parley_fold(text)))"),
                logger: store.logger)
            return (
                try await db.value(PostgresQuery(unsafeSQL: "SELECT \(schema).parley_words(text) FROM \(schema).messages"), as: String.self, store.logger),
                try await db.value(
                    PostgresQuery(unsafeSQL: "SELECT \(schema).parley_cjk_chars(\(schema).parley_fold(text)) FROM \(schema).messages"), as: [String].self,
                    store.logger)
            )
        }
        #expect(words == "cafe 東京で iphone を  σοφιασ db json")
        #expect(cjk == ["東", "京", "で", "を"])
        let hits = try await store.search(try SearchQuery.parse("json σοφίας"), as: grace.id, limit: 5, offset: 0)
        #expect(hits.count == 1)
        try await store.close()
    }
}
