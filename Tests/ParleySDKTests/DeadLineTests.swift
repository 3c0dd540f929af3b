import Foundation
import ParleySDK
import ParleyCore
import ParleyTestSupport
import Testing

/// A dead line, not a closed socket: the server sits behind a relay that stops forwarding without
/// closing anything. The SDK must notice within its heartbeat timeout, keep what was written in the
/// outbox, and deliver it exactly once when the line comes back; a receiver resumes without a gap.
@MainActor
@Suite struct DeadLineTests {
    /// Quick enough to notice a dead line in about 3.5 s (idle 0.5 s + 3 s), far from TCP's minutes, slow
    /// enough that a loaded machine's late answer (the full suite starts PostgreSQL and moto at the same
    /// time on two cores) is not taken for one. The timeout also bounds opening a connection (rule 4),
    /// and each failed opening doubles the backoff: at 0.8 s, and once in a full run at 1.5 s, the
    /// clients never settled online within the 30 s the set-up waits.
    static let quick = Heartbeat(idleInterval: .milliseconds(500), timeout: .seconds(3))

    func client(_ server: ServerHarness, _ session: Session, via relay: FreezableRelay?) throws -> ParleyClient {
        let socketURL = URL(string: "http://127.0.0.1:\(relay?.port ?? server.port)")!
        return ParleyClient(
            session: session, api: HTTPParleyAPI(baseURL: server.url, client: server.http), transport: WebSocketTransport(serverURL: socketURL),
            store: try ClientStorage(directory: temporaryDirectory()).store(for: session.user.id), heartbeat: Self.quick)
    }

    /// Alice and Bob online, one of them behind a relay, with a first message between them.
    func twoClients(aliceBehindRelay: Bool) async throws -> (ServerHarness, FreezableRelay, alice: ParleyClient, bob: ParleyClient, ConversationID) {
        let (server, aliceSession, bobSession) = try await ServerHarness.withAliceAndBob()
        let relay = try await FreezableRelay(to: server.port)
        let alice = try client(server, aliceSession, via: aliceBehindRelay ? relay : nil)
        let bob = try client(server, bobSession, via: aliceBehindRelay ? nil : relay)
        alice.start()
        bob.start()
        _ = try await eventually("both online") { alice.connectionState == .online && bob.connectionState == .online ? true : nil }
        let conversation = ConversationID.direct(alice.me.id, bob.me.id)
        try alice.send("before", in: conversation, to: bob.me.id)
        _ = try await eventually("bob has the first") { bob.timeline(conversation).count == 1 ? true : nil }
        return (server, relay, alice, bob, conversation)
    }

    @Test func aFrozenLineGoesOfflineKeepsTheOutboxAndDeliversOnceAfterwards() async throws {
        let (server, relay, alice, bob, conversation) = try await twoClients(aliceBehindRelay: true)
        let aliceSession = alice.session

        await relay.freeze()
        let frozenAt = ContinuousClock.now
        try alice.send("while frozen", in: conversation)
        _ = try await eventually("alice notices") { alice.connectionState != .online ? true : nil }
        // The heartbeat notices in about 3.5 s (idle 0.5 + timeout 3); TCP would take minutes. The
        // bound leaves a loaded machine's late timer room and still tells the two apart.
        #expect(ContinuousClock.now - frozenAt < .seconds(20), "noticed within the heartbeat timeout, not when TCP gives up")
        try await Task.sleep(for: .seconds(1))
        #expect(alice.connectionState != .online, "reconnecting through a dead line does not count as online")
        #expect(alice.timeline(conversation).last?.text == "while frozen" && alice.timeline(conversation).last?.status == .sending)
        #expect(bob.timeline(conversation).map(\.text) == ["before"])

        await relay.thaw()
        // The network is back, as the app hears it (on Apple platforms NetworkPathWatcher says so):
        // the client goes on now, not after a backoff that a loaded machine's slow attempts grew.
        alice.reconnectNow()
        _ = try await eventually("alice online again") { alice.connectionState == .online ? true : nil }
        _ = try await eventually("bob gets it") { bob.timeline(conversation).map(\.text) == ["before", "while frozen"] ? true : nil }
        _ = try await eventually("alice sees it sent") { alice.timeline(conversation).last?.status.map { $0 != .sending } == true ? true : nil }
        let stored = try await HTTPParleyAPI(baseURL: server.url, client: server.http).history(conversation, before: nil, limit: 50, token: aliceSession.token)
        #expect(stored.messages.map(\.text) == ["before", "while frozen"], "stored exactly once")
        alice.stop()
        bob.stop()
        await relay.close()
        await server.stop()
    }

    @Test func aReceiverBehindAFrozenLineResumesWithoutAGap() async throws {
        let (server, relay, alice, bob, conversation) = try await twoClients(aliceBehindRelay: false)

        await relay.freeze()
        for index in 1...5 { try alice.send("m\(index)", in: conversation) }
        _ = try await eventually("bob notices the dead line") { bob.connectionState != .online ? true : nil }
        #expect(bob.timeline(conversation).count == 1)
        await relay.thaw()
        _ = try await eventually("bob resumes") { bob.timeline(conversation).count == 6 ? true : nil }
        try await Task.sleep(for: .milliseconds(300))
        let received = bob.timeline(conversation)
        #expect(received.map(\.text) == ["before"] + (1...5).map { "m\($0)" }, "every message once, in order")
        #expect(received.compactMap(\.seq) == Array(1...6))
        alice.stop()
        bob.stop()
        await relay.close()
        await server.stop()
    }
}
