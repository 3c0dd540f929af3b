import Foundation
import Logging
import ParleyCore
import ParleyPostgres
import ParleyStore
import ParleyTestSupport
import Testing

/// ``ClusterBus/dropStalePresence(isLiveHere:)``: the repair for closes whose count could not be
/// written while the database was away.
@Suite struct ClusterPresenceTests {
    @Test func dropStalePresenceRemovesOnlyTheCountsTheHubNoLongerHolds() async throws {
        var logger = Logger(label: "presence-test")
        logger.logLevel = .critical
        let store = try await PostgresStore.connect(DatabaseURL(try await PostgresTestServer.freshDatabaseAsync()), poolSize: 4, logger: logger)
        let bus = PostgresClusterBus(store: store, logger: logger)
        let running = Task { try await bus.run() }
        var signals = bus.signals.makeAsyncIterator()
        #expect(await signals.next() == .reconnected, "the bus joined (first heartbeat) and listens")

        let alice = try await store.makeUser("alice").id, bob = try await store.makeUser("bob").id
        #expect(try await bus.connectionOpened(alice))
        #expect(try await bus.connectionOpened(bob))
        #expect(try await bus.connectionOpened(bob) == false, "bob's second connection")
        // Alice's socket closed while her count could not be written; bob's are still open here.
        let left = try await bus.dropStalePresence { $0 == bob }
        #expect(left == [alice])
        #expect(try await bus.online(among: [alice, bob]) == [bob])
        #expect(try await bus.dropStalePresence { $0 == bob }.isEmpty, "nothing is dropped twice")
        // Bob's count is kept as it was: two closes take him offline, not one.
        #expect(try await bus.connectionClosed(bob) == false)
        #expect(try await bus.connectionClosed(bob))

        running.cancel()
        _ = await running.result
        try await store.close()
    }
}
