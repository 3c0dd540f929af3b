import Foundation
import Logging
import ParleyCore
@testable import ParleyPostgres
import ParleyStore
import ParleyTestSupport
import PostgresNIO
import Testing

/// ``PostgresLeanBatch``: the batch's locks, taken by probe, keep ``PostgresSendBatchFunction``
/// rule 3's order; the functions rewritten in PL/pgSQL answer what the SQL ones answered.
@Suite(.timeLimit(.minutes(10))) struct LeanBatchTests {
    static func store() async throws -> PostgresStore {
        var logger = Logger(label: "lean-batch-test")
        logger.logLevel = .critical
        return try await PostgresStore.connect(try DatabaseURL(try await PostgresTestServer.freshDatabaseAsync()), poolSize: 4, logger: logger)
    }

    /// Whether rows of `table` matching `condition` are locked by another transaction now: a
    /// `NOWAIT` lock of them fails (`55P03`). The probe's own lock is rolled back at once.
    static func isLocked(_ store: PostgresStore, _ table: String, _ condition: PostgresQuery) async throws -> Bool {
        try await store.leased { db in
            try await db.query("BEGIN", logger: store.logger)
            let locked: Bool
            do {
                let sql = "SELECT 1 FROM \(table) WHERE \(condition.sql) FOR UPDATE NOWAIT"
                _ = try await db.query(PostgresQuery(unsafeSQL: sql, binds: condition.binds), logger: store.logger).collect()
                locked = false
            } catch let error as PSQLError where error.sqlState == "55P03" {
                locked = true
            }
            try await db.query("ROLLBACK", logger: store.logger)
            return locked
        }
    }

    /// A batch of two sends, in the reverse of id order, while another transaction holds the
    /// smallest user's row: the batch waits there holding both conversations and both senders'
    /// member rows, and no user's row yet; once that lock goes, it writes both.
    @Test func aBatchLocksConversationsThenSendersThenUsersInIdOrder() async throws {
        let store = try await Self.store()
        var made: [UserID] = []
        for name in ["ada", "bob", "cy"] { made.append(try await store.makeUser(name).id) }
        let users = made.sorted { $0.rawValue.utf8.lexicographicallyPrecedes($1.rawValue.utf8) }  // COLLATE "C"
        let low = try await store.send("hi", from: users[0], to: .user(users[1])).message.conversationId
        let high = try await store.send("hi", from: users[1], to: .user(users[2])).message.conversationId
        // The batch: users[2] writes in `high`, then users[1] in `low`.
        let senders = [users[2].rawValue, users[1].rawValue], conversations = [high.rawValue, low.rawValue]
        let (held, holding) = AsyncStream.makeStream(of: Void.self)
        let (release, releasing) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            try await store.leased { db in
                try await db.query("BEGIN", logger: store.logger)
                try await db.query("SELECT 1 FROM users WHERE id = \(users[0].rawValue) FOR UPDATE", logger: store.logger)
                holding.yield()
                for await _ in release { break }
                try await db.query("ROLLBACK", logger: store.logger)
            }
        }
        for await _ in held { break }
        let batch = Task {
            try await store.leased { db -> [String] in
                try await db.query("BEGIN", logger: store.logger)
                let rows = try await db.query(
                    """
                    SELECT coalesce(r_error, r_seq::TEXT) FROM parley_send_batch(\(senders), \(["a1", "b1"]), \(conversations), \(["", ""]),
                        \(["to high", "to low"]), \([Int64(1), Int64(1)]), \(["m-high", "m-low"]), 'node')
                    """, logger: store.logger
                ).collect().map { try $0.decode(String.self) }
                try await db.query("COMMIT", logger: store.logger)
                return rows
            }
        }
        // Once the batch waits on a lock (the held user's), it has taken all it takes before.
        _ = try await eventuallyTrue("the batch waits on a lock") {
            try await store.read { db in
                try await db.value(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'", as: Int64.self,
                    store.logger)
            } == 1
        }
        #expect(try await Self.isLocked(store, "conversations", "id = \(low.rawValue)"))
        #expect(try await Self.isLocked(store, "conversations", "id = \(high.rawValue)"))
        #expect(try await Self.isLocked(store, "conversation_members", "conversation_id = \(high.rawValue) AND user_id = \(users[2].rawValue)"))
        #expect(try await Self.isLocked(store, "conversation_members", "conversation_id = \(low.rawValue) AND user_id = \(users[1].rawValue)"))
        #expect(try await !Self.isLocked(store, "conversation_members", "conversation_id = \(low.rawValue) AND user_id = \(users[0].rawValue)"))
        #expect(try await !Self.isLocked(store, "users", "id = \(users[1].rawValue)"), "users are locked in id order, the held one first")
        #expect(try await !Self.isLocked(store, "users", "id = \(users[2].rawValue)"))

        releasing.yield()
        try await holder.value
        #expect(try await batch.value == ["2", "2"])
        try await store.close()
    }

    @Test func theFoldAndTheCarriesCheckAnswerAsTheSQLOnesDid() async throws {
        let store = try await Self.store()
        let texts = ["Crème Brûlée", "ｶﾀｶﾅ and ＡＢＣ", "İSTANBUL straße", "日本語のテキスト", "", "ﬁ ligature ①"]
        let answers = try await store.read { db in
            try await db.query(
                """
                SELECT bool_and(parley_fold(t) IS NOT DISTINCT FROM lower(unaccent('unaccent'::regdictionary, normalize(t, NFKC))))
                    AND parley_fold(NULL) IS NULL
                FROM unnest(\(texts)) AS t
                """, logger: store.logger
            ).collect().first?.decode(Bool.self)
        }
        #expect(answers == true)
        let carries: @Sendable () async throws -> Bool? = {
            try await store.read { db in try await db.query("SELECT parley_cluster_carries()", logger: store.logger).collect().first?.decode(Bool.self) }
        }
        #expect(try await carries() == true, "no node: nothing says no")
        _ = try await store.read { db in
            try await db.query("INSERT INTO cluster_nodes (node_id, heartbeat_at, carries_events) VALUES ('old', now(), false)", logger: store.logger)
        }
        #expect(try await carries() == false, "one node that does not read events")
        let config = try await store.read { db in
            try await db.query("SELECT array_to_string(proconfig, ',') FROM pg_proc WHERE proname = 'parley_send_batch'", logger: store.logger)
                .collect().first?.decode(String?.self)
        }
        #expect(config == "plan_cache_mode=force_generic_plan")
        try await store.close()
    }
}
