import Foundation
import Logging
import NIOCore
@testable import ParleyPostgres
import ParleyStore
import ParleyTestSupport
import PostgresNIO
import Testing

/// A connection whose backend is terminated while it is leased (the cluster's LISTEN connection,
/// cut by a database restart, a failover or `pg_terminate_backend`) fails its work at the server's
/// FATAL error, before its socket has closed; postgres-nio's pool learns of the close only from the
/// channel's `closeFuture`, which NIO completes a turn of the event loop after that. Given back in
/// between, the dying connection was counted idle and handed to the next lease, which then failed
/// with `storageUnavailable` though the database was up (a send after the LISTEN connections were
/// cut answered 503). With one connection in the pool, every round here takes that path.
@Suite struct DyingConnectionTests {
    struct Cut: Error {}

    static func store(_ url: String) async throws -> PostgresStore {
        var logger = Logger(label: "dying-connection-test")
        logger.logLevel = .critical  // every round makes the pool warn
        return try await PostgresStore.connect(DatabaseURL(url), poolSize: 1, searchIndexUpkeep: nil, logger: logger)
    }

    /// Terminates the backend `pid` from a plain connection of its own.
    static func terminate(_ pid: Int32, on url: String) async throws {
        let killer = try await PostgresConnection.connect(
            on: PostgresClient.defaultEventLoopGroup.any(), configuration: try DatabaseURL(url).connectionConfiguration(), id: 99,
            logger: Logger(label: "killer")
        ).get()
        _ = try await killer.query("SELECT pg_terminate_backend(\(pid))", logger: killer.logger).collect()
        try await killer.close()
    }

    /// The race itself, held open: the connection's channel closes and its event loop then stalls
    /// (a loaded machine) before it runs the turn that completes `closeFuture`, while the work that
    /// held the connection sees it closed and gives it back. Rule 1 of ``PostgresStore/leased(_:)``.
    @Test func aConnectionGivenBackClosedBeforeThePoolKnowsIsNotTheNextWorksConnection() async throws {
        let url = try await PostgresTestServer.freshDatabaseAsync()
        let store = try await Self.store(url)
        for round in 1...5 {
            await #expect(throws: Cut.self) { try await store.leased { connection in try await Self.closeWithAStall(connection) } }
            #expect(try await Self.selectOne(store) == 1, "round \(round)")
        }
        try await store.close()
    }

    /// Rule 2: given back closed by work that does not wait (as rule 1 makes `leased` wait), the
    /// connection is the next lease's, which finds it closed, waits for the pool to see it so, and
    /// leases again.
    @Test func aLeaseThatGetsAClosedConnectionLeasesAgain() async throws {
        let url = try await PostgresTestServer.freshDatabaseAsync()
        let store = try await Self.store(url)
        for round in 1...5 {
            await #expect(throws: Cut.self) { try await store.client.withConnection { connection in try await Self.closeWithAStall(connection) } }
            #expect(try await Self.selectOne(store) == 1, "round \(round)")
        }
        try await store.close()
    }

    /// Closes `connection`'s channel and stalls its event loop for 0.3 s in the same turn, so
    /// `closeFuture` completes only after that; throws once the connection reads as closed.
    static func closeWithAStall(_ connection: PostgresConnection) async throws {
        connection.eventLoop.execute {
            let _: EventLoopFuture<Void> = connection.close()
            Thread.sleep(forTimeInterval: 0.3)
        }
        while !connection.isClosed { try await Task.sleep(for: .milliseconds(1)) }
        throw Cut()
    }

    static func selectOne(_ store: PostgresStore) async throws -> Int {
        try await store.read { connection in try await connection.query("SELECT 1", logger: store.logger).collect()[0].decode(Int.self) }
    }

    /// The cluster's LISTEN, held as ``PostgresClusterBus`` holds it (``PostgresStore/held(_:)``).
    /// Through the pool alone it fails now and then: the listen ends at the FATAL error, before
    /// the channel has closed, and the next lease then finds it open and its query fails.
    @Test func aListenCutWhileLeasedDoesNotFailTheNextWork() async throws {
        let url = try await PostgresTestServer.freshDatabaseAsync()
        let store = try await Self.store(url)
        for round in 1...10 {
            await #expect(throws: (any Error).self) {
                try await store.held { connection in
                    let pid = try await connection.query("SELECT pg_backend_pid()", logger: store.logger).collect()[0].decode(Int32.self)
                    try await connection.listen(on: "dying_connection_test") { notifications in
                        try await Self.terminate(pid, on: url)
                        for try await _ in notifications {}
                    }
                }
            }
            #expect(try await Self.selectOne(store) == 1, "round \(round)")
        }
        try await store.close()
    }

    /// The same for a query that fails at the FATAL error, as every leased write does when its
    /// backend is terminated under it.
    @Test func aQueryCutWhileLeasedDoesNotFailTheNextWork() async throws {
        let url = try await PostgresTestServer.freshDatabaseAsync()
        let store = try await Self.store(url)
        for round in 1...10 {
            await #expect(throws: (any Error).self) {
                try await store.transaction { connection in
                    let pid = try await connection.query("SELECT pg_backend_pid()", logger: store.logger).collect()[0].decode(Int32.self)
                    try await Self.terminate(pid, on: url)
                    _ = try await connection.query("SELECT pg_sleep(5)", logger: store.logger).collect()
                }
            }
            #expect(try await Self.selectOne(store) == 1, "round \(round)")
        }
        try await store.close()
    }
}
