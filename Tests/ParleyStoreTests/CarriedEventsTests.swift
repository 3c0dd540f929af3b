import Foundation
import Logging
import ParleyCore
@testable import ParleyPostgres
import ParleyStore
import ParleyTestSupport
import Testing

/// Events carried whole in cluster notifications (``ClusterWire/eventPayloads(_:node:)``,
/// ``PostgresCarriedEvents``): what a node receives equals what the committing node delivered.
@Suite struct CarriedEventsTests {
    static let node = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"

    static func message(_ text: String, seq: Int64 = 7) -> Message {
        Message(
            id: .random(), conversationId: ConversationID(rawValue: "grp_" + UUID().uuidString.lowercased()), seq: seq,
            senderId: UserID(rawValue: UUID().uuidString.lowercased()), clientId: .random(), text: text, createdAt: .now(),
            mentions: [UserID(rawValue: UUID().uuidString.lowercased())])
    }

    static func deliveries(of payload: StreamEvent.Payload, to count: Int, from position: Int64 = 1) -> [Delivery] {
        (0..<count).map { index in
            Delivery(recipient: UserID(rawValue: UUID().uuidString.lowercased()), event: StreamEvent(position: position + Int64(index), payload: payload))
        }
    }

    static func received(_ payloads: [String]) -> (carried: [Delivery], moved: [UserID: Int64]) {
        var carried: [Delivery] = [], moved: [UserID: Int64] = [:]
        for payload in payloads {
            #expect(payload.utf8.count <= ClusterWire.maxBytes, "every payload fits PostgreSQL's limit")
            switch ClusterWire.decode(payload) {
            case (node, .events(let deliveries))?: carried += deliveries
            case (node, .streamsMoved(let heads))?: moved.merge(heads) { max($0, $1) }
            default: Issue.record("not a stream payload of the node: \(payload.prefix(80))")
            }
        }
        return (carried, moved)
    }

    @Test func eventsOfEveryKindArriveAsTheyWereDelivered() {
        let message = Self.message("héllo \"quoted\" \\ and\nnew line, 日本語 👋")
        let receipt = ReceiptUpdate(conversationId: message.conversationId, userId: message.senderId, deliveredSeq: 5, readSeq: 3)
        let sent =
            Self.deliveries(of: .message(message), to: 3) + Self.deliveries(of: .receipt(receipt), to: 3, from: 10)
            + Self.deliveries(of: .messageHidden(MessageRef(conversationId: message.conversationId, seq: 7)), to: 1, from: 20)
        let (carried, moved) = Self.received(ClusterWire.eventPayloads(sent, node: Self.node))
        #expect(Set(carried) == Set(sent))
        #expect(carried.count == sent.count)
        #expect(moved.isEmpty)
    }

    @Test func aLongRecipientListIsSplitAndEveryPayloadCarriesTheEvent() {
        let sent = Self.deliveries(of: .message(Self.message("to a big group")), to: 1_000)
        let payloads = ClusterWire.eventPayloads(sent, node: Self.node)
        #expect(payloads.count > 1)
        let (carried, moved) = Self.received(payloads)
        #expect(Set(carried) == Set(sent))
        #expect(moved.isEmpty)
    }

    @Test func anEventTooLongToCarryGoesAsPositions() {
        let long = Self.message(String(repeating: "日", count: 3_000))  // 9,000 bytes of UTF-8
        let short = Self.message("short")
        let sent = Self.deliveries(of: .message(long), to: 2, from: 4) + Self.deliveries(of: .message(short), to: 2, from: 8)
        let (carried, moved) = Self.received(ClusterWire.eventPayloads(sent, node: Self.node))
        #expect(Set(carried) == Set(sent.suffix(2)))
        #expect(moved == [sent[0].recipient: 4, sent[1].recipient: 5])
    }

    @Test(arguments: [
        "e n", "e n {", "e n {\"event\":{},\"to\":{}}", "e n {\"event\":{\"message\":{}},\"to\":{}}",
        "e n {\"event\":{\"receipt\":{\"conversationId\":\"c\",\"userId\":\"u\",\"deliveredSeq\":1,\"readSeq\":1}},\"to\":{\"not-a-user\":1}}",
        "e n {\"event\":{\"receipt\":{\"conversationId\":\"c\",\"userId\":\"u\",\"deliveredSeq\":1,\"readSeq\":1},\"message\":{}},\"to\":{}}",
    ])
    func malformedPayloadsAreIgnored(_ payload: String) {
        #expect(ClusterWire.decode(payload) == nil)
    }

    @Test func aNodeSkipsItsOwnPayloadsUnread() {
        let payloads = ClusterWire.eventPayloads(Self.deliveries(of: .message(Self.message("mine")), to: 2), node: Self.node)
        #expect(ClusterWire.decode(payloads[0], ignoring: "another-node") != nil)
        #expect(ClusterWire.decode(payloads[0], ignoring: Self.node) == nil)
    }

    @Test func theMigrationReplacesEachNotificationItNames() {
        let (send, receipt, batch) = (PostgresCarriedEvents.statements[0], PostgresCarriedEvents.statements[1], PostgresCarriedEvents.statements[2])
        for function in [send, receipt] {
            #expect(function.hasPrefix("CREATE OR REPLACE FUNCTION"))
            #expect(!function.contains(PostgresCarriedEvents.positionsOnly))
            #expect(function.contains("v_payload TEXT;"))
        }
        #expect(batch.contains("set_config('parley.carry_events', 'on', true)"))
    }

    /// Two nodes on one database: node B hears what node A's store committed, as A delivered it.
    @Test func anotherNodeReceivesSendsAndReceiptsWhole() async throws {
        var logger = Logger(label: "carried-events-test")
        logger.logLevel = .critical
        let url = try DatabaseURL(try await PostgresTestServer.freshDatabaseAsync())
        let a = try await PostgresStore.connect(url, poolSize: 4, logger: logger)
        let b = try await PostgresStore.connect(url, poolSize: 4, logger: logger)
        let bus = PostgresClusterBus(store: b, logger: logger)
        let running = Task { try await bus.run() }
        var signals = bus.signals.makeAsyncIterator()
        #expect(await signals.next() == .reconnected)

        let alice = try await a.makeUser("alice").id, bob = try await a.makeUser("bob").id
        // The first message creates the conversation: positions only (the conversation event too).
        let first = try await a.send("hi", from: alice, to: .user(bob))
        #expect(await signals.next() == .streamsMoved(Self.heads(first.deliveries)))
        // A plain send, then its receipt: carried whole.
        let plain = try await a.send("a plain \"send\" 日本語", from: bob, to: .conversation(first.message.conversationId))
        #expect(try await Self.carried(plain.deliveries.count, &signals) == Set(plain.deliveries))
        let receipt = try await a.updateReceipt(in: first.message.conversationId, member: alice, deliveredSeq: 2, readSeq: 2, now: .now())
        #expect(try await Self.carried(receipt.deliveries.count, &signals) == Set(receipt.deliveries))
        // A reply gets its quote after parley_send: positions only.
        let reply = try await a.send(
            NewMessage(sender: alice, clientId: .random(), target: .conversation(first.message.conversationId), text: "re", replyToSeq: 1), now: .now())
        #expect(reply.message.replyTo != nil)
        #expect(await signals.next() == .streamsMoved(Self.heads(reply.deliveries)))
        // Too long to carry: positions only.
        let long = try await a.send(String(repeating: "日", count: 2_500), from: bob, to: .conversation(first.message.conversationId))
        #expect(await signals.next() == .streamsMoved(Self.heads(long.deliveries)))
        // What the store writes from Swift (a group's creation and message) is carried too.
        let group = try await a.createGroup(NewGroup(creator: alice, clientId: .random(), title: "Both", memberIds: [bob], maxMembers: 256), now: .now())
        #expect(try await Self.carried(group.deliveries.count, &signals) == Set(group.deliveries))
        let inGroup = try await a.send(
            NewMessage(sender: alice, clientId: .random(), target: .conversation(group.conversationId), text: "@bob hello", mentionNames: ["bob"]),
            now: .now())
        #expect(inGroup.message.mentions == [bob])
        #expect(try await Self.carried(inGroup.deliveries.count, &signals) == Set(inGroup.deliveries))

        running.cancel()
        _ = await running.result
        try await a.close()
        try await b.close()
    }

    struct NotCarried: Error { var signal: ClusterSignal? }

    /// The next `count` deliveries, from carried-event signals only.
    static func carried(_ count: Int, _ signals: inout AsyncStream<ClusterSignal>.Iterator) async throws -> Set<Delivery> {
        var received: [Delivery] = []
        while received.count < count {
            let signal = await signals.next()
            guard case .events(let deliveries)? = signal else { throw NotCarried(signal: signal) }
            received += deliveries
        }
        return Set(received)
    }

    static func heads(_ deliveries: [Delivery]) -> [UserID: Int64] {
        deliveries.reduce(into: [:]) { $0[$1.recipient] = max($0[$1.recipient] ?? 0, $1.event.position) }
    }
}
