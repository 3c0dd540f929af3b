import Foundation
import HTTPTypes
import NIOCore
import ParleyBench
import ParleyCore
import ParleyTestSupport
import Testing

/// A cluster through a PostgreSQL restart (`pg_ctl stop -m fast`, then start), on a database of the
/// test's own: no node goes down, a socket that closed while the database was away is not counted
/// for ever (its user goes offline for their contacts on the other node), the node answers sends
/// again, and it still shuts down promptly.
@Suite struct DatabaseRestartTests {
    @Test(.timeLimit(.minutes(10))) func aSocketClosedWhileTheDatabaseIsAwayLeavesNobodyOnline() async throws {
        let database = try await offCooperativePool { try DedicatedPostgres() }
        defer { database.remove() }
        try await TestCluster.run(database: database.url) { cluster in
            try await cluster.withAPI(0) { nodeA in
                try await cluster.withAPI(1) { nodeB in
                    let alice = try await nodeA.register("alice"), bob = try await nodeB.register("bob")
                    let first = try await nodeA.send("hi", from: alice, to: bob)
                    _ = try await nodeB.send("hello", from: bob, in: first.conversationId)
                    let b = try await nodeB.socket(bob)
                    _ = try await b.synced()
                    let a = try await nodeA.socket(alice)
                    _ = try await a.synced()
                    _ = try await b.presence(alice.id, online: true)

                    try await offCooperativePool { try database.stop() }
                    await a.close()  // counted on node A, which cannot write the count down now
                    // Node A lets the socket go at once, though the database is away…
                    let deadline = ContinuousClock.now.advanced(by: .seconds(15))
                    while try await Self.openSockets(nodeA) != 0, ContinuousClock.now < deadline {
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    #expect(try await Self.openSockets(nodeA) == 0, "node A still counts the closed socket")
                    // …and the outage outlasts the close's bounded wait for the database (3 s), so
                    // the count in the database stays behind until node A repairs it.
                    try await Task.sleep(for: .seconds(4))
                    try await offCooperativePool { try database.start() }

                    // Node A checks its counts against its sockets once its bus is back, and bob
                    // sees alice go offline (after she came online: his first snapshot said offline).
                    _ = try await b.inbox.waitFor("alice offline after online", timeout: .seconds(30)) { frames -> Bool? in
                        guard let online = frames.lastIndex(where: { if case .presence(alice.id, true, _) = $0 { true } else { false } })
                        else { return nil }
                        return frames[online...].contains { if case .presence(alice.id, false, _) = $0 { true } else { false } } ? true : nil
                    }
                    let running = cluster.nodes.map(\.isRunning)
                    #expect(running.allSatisfy { $0 }, "a database restart took a node down")

                    // Node A answers sends again (a client retries what failed during the outage).
                    let retryUntil = ContinuousClock.now.advanced(by: .seconds(20))
                    var sent: Message?
                    while sent == nil, ContinuousClock.now < retryUntil {
                        sent = try? await nodeA.send("after", from: alice, in: first.conversationId)
                        if sent == nil { try await Task.sleep(for: .milliseconds(100)) }
                    }
                    #expect(sent?.seq == 3)
                    #expect(try await b.message(seq: 3).text == "after")
                    await b.close()
                }
            }
            // Graceful shutdown does not wait on the restarted database's leftovers.
            let started = ContinuousClock.now
            for node in cluster.nodes { _ = try await offCooperativePool { node.stop() } }
            #expect(ContinuousClock.now - started < .seconds(25), "two nodes' shutdowns, each bounded by its 10-s grace")
        }
    }

    /// The node's count of open WebSockets, from its metrics.
    static func openSockets(_ node: TestAPI) async throws -> Int? {
        await BenchAPI(baseURL: "http://127.0.0.1:\(node.port)").openWebSockets()
    }
}
