import Logging
@testable import ParleyPostgres
import ParleyStore
import ParleyTestSupport
import PostgresNIO
import Testing

/// ``PostgresStore/queuedTransaction(_:)``: `BEGIN`, the statement and `COMMIT` queued at once.
@Suite struct QueuedTransactionTests {
    static func store() async throws -> PostgresStore {
        var logger = Logger(label: "queued-transaction-test")
        logger.logLevel = .critical
        let store = try await PostgresStore.connect(try DatabaseURL(try await PostgresTestServer.freshDatabaseAsync()), poolSize: 2, logger: logger)
        try await store.execute("CREATE TABLE t (id INT PRIMARY KEY, note TEXT)")
        return store
    }

    static func notes(_ store: PostgresStore) async throws -> [String] {
        try await store.read { db in try await db.values("SELECT note FROM t ORDER BY id", as: String.self, store.logger) }
    }

    @Test func rule1WhatReturnsIsCommittedAndSeenByOtherConnections() async throws {
        let store = try await Self.store()
        let rows = try await store.queuedTransaction("INSERT INTO t VALUES (1, 'one') RETURNING note")
        #expect(try rows.map { try $0.decode(String.self) } == ["one"])
        #expect(try await Self.notes(store) == ["one"])
        try await store.close()
    }

    @Test func rule2AFailedStatementIsRolledBackAndItsErrorThrown() async throws {
        let store = try await Self.store()
        _ = try await store.queuedTransaction("INSERT INTO t VALUES (1, 'one')")
        // Two rows, the second breaking the key: neither stays.
        await #expect(throws: PSQLError.self) {
            _ = try await store.queuedTransaction("INSERT INTO t VALUES (2, 'two'), (1, 'again')")
        }
        #expect(try await Self.notes(store) == ["one"])
        // Parley's own refusals come back as store errors.
        await #expect(throws: StoreError.conversationNotFound) {
            _ = try await store.queuedTransaction("DO $$ BEGIN RAISE EXCEPTION 'no' USING ERRCODE = 'PY004'; END $$")
        }
        try await store.close()
    }

    @Test func rule3TheConnectionGoesBackCleanAfterAFailure() async throws {
        let store = try await Self.store()  // two pooled connections: each is reused below
        for attempt in 1...6 {
            await #expect(throws: PSQLError.self) { _ = try await store.queuedTransaction("SELECT 1/0") }
            _ = try await store.queuedTransaction("INSERT INTO t VALUES (\(attempt), 'after a failure')")
        }
        #expect(try await Self.notes(store).count == 6, "no insert ran inside an aborted transaction left open")
        let open = try await store.read { db in
            try await db.value(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'", as: Int64.self, store.logger)
        }
        #expect(open == 0)
        try await store.close()
    }
}
