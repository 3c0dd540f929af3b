import Foundation
import ParleyCore
import ParleyStore
import ParleyTestSupport
import Testing
import HTTPTypes
import NIOWebSocket
import ParleyPostgres
import WSCore

/// Two or three real `parley serve` processes on one PostgreSQL database: every guarantee holds
/// whichever node each client is on.
@Suite(.serialized) struct ClusterTests {
    @Test func messagesReceiptsTypingAndPresenceCrossNodes() async throws {
        try await TestCluster.run { cluster in
            try await cluster.withAPI(0) { nodeA in
                try await cluster.withAPI(1) { nodeB in
                    let alice = try await nodeA.register("alice"), bob = try await nodeB.register("bob")
                    let a = try await nodeA.socket(alice), b = try await nodeB.socket(bob)
                    _ = try await a.synced()
                    _ = try await b.synced()

                    a.send(.send(SendRequest(ref: "1", clientId: .random(), recipientId: bob.id, text: "from node A")))
                    let sent = try await a.sentAcks(count: 1)[0].message
                    #expect(try await b.message(seq: 1) == sent)
                    b.send(.send(SendRequest(ref: "2", clientId: .random(), conversationId: sent.conversationId, text: "from node B")))
                    #expect(try await a.message(seq: 2).text == "from node B")

                    // Both have written: contacts now, so each sees the other online, across nodes.
                    _ = try await a.presence(bob.id, online: true)
                    _ = try await b.presence(alice.id, online: true)
                    // The REST list on node A knows bob, connected to node B, is online.
                    let listed = try await nodeA.conversations(of: alice)
                    #expect(listed.first?.members.first { $0.userId == bob.id }?.online == true)

                    // Alice (node A) reads bob's message; bob (node B) sees the receipt.
                    a.send(.receipt(ref: "r", conversationId: sent.conversationId, deliveredSeq: nil, readSeq: 2))
                    _ = try await b.receipt(of: alice.id) { $0.readSeq == 2 }

                    b.send(.typing(conversationId: sent.conversationId, isTyping: true))
                    try await a.typing(bob.id, isTyping: true)
                    // Unrenewed typing expires on bob's node and the stop crosses over too.
                    try await a.typing(bob.id, isTyping: false)

                    // A second connection of bob on node A keeps him online when node B's goes.
                    let bobOnA = try await nodeA.socket(bob)
                    _ = try await bobOnA.synced()
                    await b.close()
                    try await Task.sleep(for: .milliseconds(500))
                    #expect(await !a.inbox.frames.contains { if case .presence(bob.id, false, _) = $0 { true } else { false } })
                    await bobOnA.close()
                    let lastSeen = try await a.presence(bob.id, online: false)
                    #expect(lastSeen != nil)
                    await a.close()
                }
            }
        }
    }

    @Test func aClientResumesOnAnotherNodeWithExactlyWhatItMissed() async throws {
        try await TestCluster.run { cluster in
            try await cluster.withAPI(0) { nodeA in
                try await cluster.withAPI(1) { nodeB in
                    let alice = try await nodeA.register("alice"), bob = try await nodeA.register("bob")
                    let first = try await nodeA.send("before", from: alice, to: bob)
                    let onA = try await nodeA.socket(bob)
                    let position = try await onA.synced()
                    await onA.close()
                    for i in 1...100 { _ = try await nodeA.send("missed \(i)", from: alice, in: first.conversationId) }

                    let onB = try await nodeB.socket(bob, after: position)
                    _ = try await onB.synced()
                    let replayed = await onB.inbox.messages
                    #expect(replayed.map(\.seq) == Array(2...101))
                    #expect(replayed.map(\.text) == (1...100).map { "missed \($0)" })
                    // Then live events, sent through the other node.
                    _ = try await nodeA.send("live", from: alice, in: first.conversationId)
                    #expect(try await onB.message(seq: 102).text == "live")
                    let positions = await onB.inbox.streamEvents.map(\.position)
                    #expect(positions == Array((position + 1)...(position + 101)))
                    await onB.close()
                }
            }
        }
    }

    @Test func twoNodesCreatingOneConversationAtOnceMakeOne() async throws {
        try await TestCluster.run { cluster in
            try await cluster.withAPI(0) { nodeA in
                try await cluster.withAPI(1) { nodeB in
                    for round in 0..<5 {
                        let alice = try await nodeA.register("alice\(round)"), bob = try await nodeB.register("bob\(round)")
                        async let fromA = nodeA.send("hi from A", from: alice, to: bob)
                        async let fromB = nodeB.send("hi from B", from: bob, to: alice)
                        let (m1, m2) = try await (fromA, fromB)
                        #expect(m1.conversationId == m2.conversationId)
                        #expect(Set([m1.seq, m2.seq]) == [1, 2])
                        #expect(try await nodeA.conversations(of: alice).count == 1)
                        #expect(try await nodeB.conversations(of: bob).count == 1)
                    }
                }
            }
        }
    }

    @Test func loggingOutOnOneNodeClosesTheSessionsSocketsOnAnother() async throws {
        try await TestCluster.run { cluster in
            try await cluster.withAPI(0) { nodeA in
                try await cluster.withAPI(1) { nodeB in
                    let bob = try await nodeA.register("bob")
                    let phone = try await nodeA.login("bob")
                    let onB = try await nodeB.socket(bob), phoneOnB = try await nodeB.socket(phone)
                    _ = try await onB.synced()
                    _ = try await phoneOnB.synced()
                    #expect(try await nodeA.request(.post, "/v1/auth/logout", token: bob.token).status == .noContent)
                    #expect(try await onB.firstError().code == .unauthorized)
                    #expect(try await onB.closed()?.closeCode == .policyViolation)
                    // The other session's socket stays; logging out everywhere ends it too.
                    try await Task.sleep(for: .milliseconds(300))
                    #expect(await phoneOnB.inbox.frames.allSatisfy { if case .error = $0 { false } else { true } })
                    #expect(try await nodeA.request(.post, "/v1/auth/logout-all", token: phone.token).status == .noContent)
                    #expect(try await phoneOnB.closed()?.closeCode == .policyViolation)
                }
            }
        }
    }

}

/// Nodes failing: killed under load, or losing their LISTEN connection.
@Suite(.serialized) struct ClusterFailureTests {
    /// Senders on node A, recipients on node B; node A is SIGKILLed mid-flow and the senders
    /// reconnect to node B and retry what was not acknowledged (same client ids), as the SDK does.
    @Test func killingANodeUnderLoadLosesAndDuplicatesNothing() async throws {
        try await TestCluster.run { cluster in
            try await cluster.withAPI(1) { nodeB in
                let pairs = 3, perSender = 150
                var senders: [Account] = [], recipients: [Account] = []
                for i in 0..<pairs {
                    senders.append(try await nodeB.register("sender\(i)"))
                    recipients.append(try await nodeB.register("recipient\(i)"))
                }
                // Contacts first, so the recipients see their senders' presence.
                for i in 0..<pairs {
                    _ = try await nodeB.send("hello", from: senders[i], to: recipients[i])
                    _ = try await nodeB.send("hello back", from: recipients[i], to: senders[i])
                }
                let watchers = try await recipients.asyncMap { try await nodeB.socket($0) }
                for watcher in watchers { _ = try await watcher.synced() }
                let (senderSenders, snapshot) = (senders, recipients)
                let plan = (0..<pairs).map { _ in (0..<perSender).map { _ in ClientMessageID.random() } }

                // Every sender writes everything through node A; node A dies after some acks.
                let acked: [[Message]] = try await cluster.withAPI(0) { nodeA in
                    let sockets = try await senderSenders.asyncMap { try await nodeA.socket($0) }
                    for (i, socket) in sockets.enumerated() {
                        for (n, clientId) in plan[i].enumerated() {
                            socket.send(.send(SendRequest(clientId: clientId, recipientId: snapshot[i].id, text: "m\(n)")))
                        }
                    }
                    _ = try await sockets[0].sentAcks(count: 20)
                    try await cluster.crash(0)
                    var acked: [[Message]] = []
                    for socket in sockets {
                        acked.append(await socket.inbox.frames.compactMap { if case .sent(_, let message, _, _) = $0 { message } else { nil } })
                    }
                    return acked
                }
                // The dead node's users leave: the recipients see their senders, online through node
                // A until the crash, go offline once node A's heartbeat expires.
                for (i, watcher) in watchers.enumerated() {
                    _ = try await watcher.inbox.waitFor("sender \(i) offline after the crash", timeout: .seconds(30)) { frames -> Bool? in
                        let sender = senderSenders[i].id
                        guard let online = frames.lastIndex(where: { if case .presence(sender, true, _) = $0 { true } else { false } })
                        else { return nil }
                        return frames[online...].contains { if case .presence(sender, false, _) = $0 { true } else { false } } ? true : nil
                    }
                }
                // Reconnect to node B and retry everything not acknowledged.
                for i in 0..<pairs {
                    let ackedIds = Set(acked[i].map(\.clientId))
                    let socket = try await nodeB.socket(senders[i])
                    let retries = plan[i].enumerated().filter { !ackedIds.contains($0.element) }
                    for (n, clientId) in retries { socket.send(.send(SendRequest(clientId: clientId, recipientId: recipients[i].id, text: "m\(n)"))) }
                    _ = try await socket.sentAcks(count: retries.count)
                    await socket.close()
                }
                for i in 0..<pairs {
                    let id = ConversationID.direct(senders[i].id, recipients[i].id)
                    let stored = try await cluster.store.messages(in: id, as: recipients[i].id, query: HistoryQuery(limit: 1000)).messages
                    #expect(stored.map(\.seq) == Array(1...Int64(perSender + 2)), "seq gapless")
                    let written = stored.filter { $0.senderId == senders[i].id && $0.text != "hello" }
                    #expect(written.map(\.clientId) == plan[i], "each message exactly once, in the order written")
                    #expect(Set(acked[i]).isSubset(of: Set(stored)), "every acknowledged message is stored")
                    // The recipient on node B got every message live, once.
                    _ = try await watchers[i].message(seq: Int64(perSender + 2))
                    let delivered = await watchers[i].inbox.messages.map(\.seq)
                    #expect(delivered == Array(3...Int64(perSender + 2)))
                }
                for watcher in watchers { await watcher.close() }
            }
        }
    }

    /// A "log out everywhere" whose signal a node missed (its LISTEN connection was cut, as a
    /// database restart or failover does) ends that node's sockets of the session when it listens
    /// again. The sessions are deleted here without any signal, so only the node's own check can
    /// end the socket.
    @Test func aLogoutANodeMissedEndsItsSocketsWhenItListensAgain() async throws {
        try await TestCluster.run { cluster in
            try await cluster.withAPI(0) { nodeA in
                try await cluster.withAPI(1) { nodeB in
                    let bob = try await nodeA.register("bob"), alice = try await nodeA.register("alice")
                    let onB = try await nodeB.socket(bob)
                    _ = try await onB.synced()
                    let keep = try await nodeB.socket(alice)
                    _ = try await keep.synced()
                    try await cluster.deleteSessionsSilently(of: bob.id)
                    #expect(try await cluster.terminateListeners() == 2)
                    #expect(try await onB.closed()?.closeCode == .policyViolation)
                    // A session the store still has keeps its socket, which goes on delivering.
                    _ = try await nodeA.send("still here?", from: alice, to: bob)
                    _ = try await keep.message(seq: 1)
                    #expect(await keep.inbox.frames.allSatisfy { if case .error = $0 { false } else { true } })
                    await keep.close()
                }
            }
        }
    }

    /// A node whose LISTEN connection is cut misses notifications; when it listens again it
    /// catches its users up from the store.
    @Test func aNodeThatLosesItsListenConnectionCatchesUp() async throws {
        try await TestCluster.run { cluster in
            try await cluster.withAPI(0) { nodeA in
                try await cluster.withAPI(1) { nodeB in
                    let alice = try await nodeA.register("alice"), bob = try await nodeB.register("bob")
                    let b = try await nodeB.socket(bob)
                    _ = try await b.synced()
                    let first = try await nodeA.send("one", from: alice, to: bob)
                    _ = try await b.message(seq: 1)
                    // Cut every LISTEN connection, then send at once: the notice can be lost.
                    #expect(try await cluster.terminateListeners() == 2)
                    for i in 2...20 { _ = try await nodeA.send("m\(i)", from: alice, in: first.conversationId) }
                    _ = try await b.message(seq: 20)
                    #expect(await b.inbox.messages.map(\.seq) == Array(1...20))
                    await b.close()
                }
            }
        }
    }
}

extension ClusterFailureTests {
    /// A node that stalled past the heartbeat expiry was dropped with its presence counts by the
    /// others; when it beats again it restores them, so its connected users are online again.
    @Test func aNodeTakenForDeadRestoresItsUsersPresence() async throws {
        try await TestCluster.run { cluster in
            try await cluster.withAPI(0) { nodeA in
                try await cluster.withAPI(1) { nodeB in
                    let alice = try await nodeA.register("alice"), bob = try await nodeB.register("bob")
                    _ = try await nodeA.send("hi", from: alice, to: bob)
                    _ = try await nodeB.send("hello", from: bob, to: alice)
                    let a = try await nodeA.socket(alice)
                    _ = try await a.synced()
                    @Sendable func aliceOnline() async throws -> Bool {
                        try await nodeB.conversations(of: bob).first?.members.first { $0.userId == alice.id }?.online == true
                    }
                    #expect(try await aliceOnline())
                    // What the other nodes do to a dead node, done to node A while it lives (and
                    // held, so its next heartbeat cannot restore alice before node B is asked).
                    try await cluster.whileDropped(holding: alice.id) { () async throws in
                        let online = try await aliceOnline()
                        #expect(!online)
                    }
                    let deadline = ContinuousClock.now.advanced(by: .seconds(15))
                    while try await !aliceOnline(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
                    #expect(try await aliceOnline(), "node A restored alice's presence after its next heartbeat")
                    await a.close()
                }
            }
        }
    }
}
