import Logging
@testable import ParleyPostgres
import ParleyStore
import ParleyTestSupport
import PostgresNIO
import Testing

/// ``PostgresStore/committedCall(_:)``: one `CALL` of a procedure that commits before it answers.
@Suite struct CommittedCallTests {
    /// A table whose rows noted `refused at commit` fail a deferred check, which runs at `COMMIT`;
    /// `put` inserts a row and commits, answering its note.
    static func store(at url: String? = nil) async throws -> PostgresStore {
        let store = try await connect(url != nil ? url! : try await PostgresTestServer.freshDatabaseAsync())
        try await store.execute("CREATE TABLE t (id INT PRIMARY KEY, note TEXT)")
        try await store.execute(
            """
            CREATE FUNCTION t_check() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF NEW.note = 'refused at commit' THEN RAISE EXCEPTION 'refused at commit'; END IF; RETURN NULL; END $$
            """)
        try await store.execute(
            "CREATE CONSTRAINT TRIGGER t_at_commit AFTER INSERT ON t DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION t_check()")
        try await store.execute(
            """
            CREATE PROCEDURE put(p_ids BIGINT[], p_note TEXT, INOUT r_note TEXT DEFAULT NULL) LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO t SELECT unnest(p_ids), p_note;
                IF p_note = 'not a member' THEN RAISE EXCEPTION 'no' USING ERRCODE = 'PY004'; END IF;
                r_note := p_note;
                COMMIT;
            END $$
            """)
        return store
    }

    static func connect(_ url: String) async throws -> PostgresStore {
        var logger = Logger(label: "committed-call-test")
        logger.logLevel = .critical
        return try await PostgresStore.connect(try DatabaseURL(url), poolSize: 2, logger: logger)
    }

    static func put(_ ids: [Int], _ note: String, _ store: PostgresStore) async throws -> String? {
        try await store.committedCall("CALL put(\(ids), \(note), NULL)").first?.decode(String?.self)
    }

    static func notes(_ store: PostgresStore) async throws -> [String] {
        try await store.read { db in try await db.values("SELECT note FROM t ORDER BY id", as: String.self, store.logger) }
    }

    @Test func rule1WhatReturnsIsCommittedAndSeenByOtherConnections() async throws {
        let store = try await Self.store()
        #expect(try await Self.put([1], "one", store) == "one")
        #expect(try await Self.notes(store) == ["one"])
        try await store.close()
    }

    @Test func rule1ACommitThatFailsIsThrownNotAnswered() async throws {
        let store = try await Self.store()
        // The insert succeeds and the procedure reaches its COMMIT; the deferred check fails there.
        await #expect(throws: PSQLError.self) { _ = try await Self.put([1], "refused at commit", store) }
        #expect(try await Self.notes(store) == [])
        try await store.close()
    }

    @Test func rule2AnErrorBeforeTheCommitRollsTheCallBack() async throws {
        let store = try await Self.store()
        _ = try await Self.put([1], "one", store)
        await #expect(throws: PSQLError.self) { _ = try await Self.put([2, 1], "two", store) }  // the second id breaks the key
        // Parley's own refusals come back as store errors.
        await #expect(throws: StoreError.conversationNotFound) { _ = try await Self.put([3], "not a member", store) }
        #expect(try await Self.notes(store) == ["one"])
        try await store.close()
    }

    @Test func rule3TheConnectionGoesBackOutsideATransactionAfterAFailure() async throws {
        let store = try await Self.store()  // two pooled connections: each is reused below
        for attempt in 1...6 {
            await #expect(throws: PSQLError.self) { _ = try await Self.put([100 + attempt], "refused at commit", store) }
            #expect(try await Self.put([attempt], "after a failure", store) == "after a failure")
        }
        #expect(try await Self.notes(store).count == 6)
        let open = try await store.read { db in
            try await db.value(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'", as: Int64.self, store.logger)
        }
        #expect(open == 0)
        try await store.close()
    }
}
