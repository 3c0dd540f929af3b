import Foundation
import Logging
import ParleyCore
@testable import ParleyPostgres
import ParleyStore
import ParleyTestSupport
import PostgresNIO
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
        let group = message.conversationId
        let receipt = ReceiptUpdate(conversationId: group, userId: message.senderId, deliveredSeq: 5, readSeq: 3)
        let ada = User(id: message.senderId, username: "ada", displayName: "Ada 👩‍💻", createdAt: .now(), photo: "photo-id")
        var edited = message
        edited.editedAt = .now()
        edited.reactions = [Reaction(emoji: "👍", count: 2, mine: true, userIds: [ada.id])]
        let info = ConversationInfo(id: group, kind: .group, createdAt: .now(), members: [ada], title: "Tea")
        let invitation = Invitation(conversationId: group, title: "Tea", inviter: ada, memberCount: 4, createdAt: .now())
        let summary = ReceiptSummary(conversationId: group, everyoneDeliveredSeq: 9, everyoneReadSeq: 8)
        let sent =
            Self.deliveries(of: .message(message), to: 3) + Self.deliveries(of: .receipt(receipt), to: 3, from: 10)
            + Self.deliveries(of: .messageHidden(MessageRef(conversationId: group, seq: 7)), to: 1, from: 20)
            + Self.deliveries(of: .conversation(info), to: 2, from: 30) + Self.deliveries(of: .invitation(invitation), to: 1, from: 40)
            + Self.deliveries(of: .receiptSummary(summary), to: 2, from: 50) + Self.deliveries(of: .messageUpdated(edited), to: 2, from: 60)
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

    @Test func aLongEventIsNotRepeatedForABigGroup() {
        let long = Self.message(String(repeating: "a", count: 3_000))
        let direct = Self.deliveries(of: .message(long), to: 2)
        #expect(Self.received(ClusterWire.eventPayloads(direct, node: Self.node)).carried.count == 2, "one payload: carried")
        let group = Self.deliveries(of: .message(long), to: 300)
        let (carried, moved) = Self.received(ClusterWire.eventPayloads(group, node: Self.node))
        #expect(carried.isEmpty)
        #expect(moved == Self.heads(group))
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
        "e n", "e n {", "e n {\"event\":{\"message\":{}}}", "e n {\"event\":{},\"to\":[]}",
        "e n {\"event\":{\"receipt\":{\"conversationId\":\"c\",\"userId\":\"u\",\"deliveredSeq\":1,\"readSeq\":1}},\"to\":{\"not-a-user\":1}}",
    ])
    func malformedPayloadsAreIgnored(_ payload: String) {
        #expect(ClusterWire.decode(payload) == nil)
    }

    /// A kind this node does not know (a newer node's), or one it cannot read: the streams still move.
    @Test(arguments: [
        "{\"poll\":{\"question\":\"tea?\"}}", "{}", "{\"message\":{}}",
        "{\"receipt\":{\"conversationId\":\"c\",\"userId\":\"u\",\"deliveredSeq\":1,\"readSeq\":1},\"message\":{}}",
    ])
    func anEventItCannotReadStillMovesItsStreams(_ event: String) {
        let user = UserID(rawValue: UUID().uuidString.lowercased())
        let payload = "e \(Self.node) {\"event\":\(event),\"to\":{\"\(user.rawValue)\":12}}"
        #expect(ClusterWire.decode(payload)?.signal == .streamsMoved([user: 12]))
    }

    @Test func aNodeSkipsItsOwnPayloadsUnread() {
        let payloads = ClusterWire.eventPayloads(Self.deliveries(of: .message(Self.message("mine")), to: 2), node: Self.node)
        #expect(ClusterWire.decode(payloads[0], ignoring: "another-node") != nil)
        #expect(ClusterWire.decode(payloads[0], ignoring: Self.node) == nil)
    }

    @Test func theMigrationReplacesEachNotificationItNames() {
        let statements = PostgresCarriedEvents.statements
        let send = statements.first { $0.contains("FUNCTION parley_send(") }
        let receipt = statements.first { $0.contains("FUNCTION parley_receipt(") }
        let batch = statements.first { $0.contains("FUNCTION parley_send_batch(") }
        for (shipped, revised) in [(PostgresSendFunction.create, send), (PostgresReceiptFunction.create, receipt)] {
            #expect(shipped.contains(PostgresCarriedEvents.positionsOnly), "the text replaced is the shipped one")
            guard let revised else {
                Issue.record("a function is missing from the migration")
                continue
            }
            #expect(revised.hasPrefix("CREATE OR REPLACE FUNCTION"))
            #expect(!revised.contains(PostgresCarriedEvents.positionsOnly))
            #expect(revised.contains("\nDECLARE\n    v_payload TEXT;\n"))
            #expect(revised.contains("PERFORM pg_notify('parley_cluster', v_payload);"))
        }
        #expect(PostgresSendBatchFunction.create.contains(PostgresCarriedEvents.batchBody))
        #expect(batch?.contains("THEN PERFORM set_config('parley.carry_events', 'on', true)") == true)
    }

    /// Two nodes on one database: node B hears what node A's store committed, as A delivered it
    /// and as B's store replays it. (The limit catches a notification never heard; it is wide because
    /// the whole suite runs at once, and on a loaded 2-core CI runner this test's database alone can
    /// take a minute to be made and migrated.)
    @Test(.timeLimit(.minutes(10))) func anotherNodeReceivesSendsAndReceiptsWhole() async throws {
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
        for delivery in plain.deliveries {
            let replayed = try await b.allEvents(of: delivery.recipient, after: delivery.event.position - 1).first
            #expect(replayed == delivery.event, "what was carried is what the store replays")
        }
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
        // While a node that does not read carried events beats (a rolling upgrade), positions only.
        try await b.execute("INSERT INTO cluster_nodes (node_id, heartbeat_at) VALUES ('an-older-node', now())")
        let duringRoll = try await a.send("while rolling", from: bob, to: .conversation(first.message.conversationId))
        #expect(await signals.next() == .streamsMoved(Self.heads(duringRoll.deliveries)))
        let receiptDuringRoll = try await a.updateReceipt(
            in: first.message.conversationId, member: alice, deliveredSeq: duringRoll.message.seq, readSeq: nil, now: .now())
        #expect(await signals.next() == .streamsMoved(Self.heads(receiptDuringRoll.deliveries)))
        try await b.execute("DELETE FROM cluster_nodes WHERE node_id = 'an-older-node'")
        // A pipeline of ordinary sends (one batch, written set-wise): carried in order, as the store replays them.
        let pipeline = (0..<6).map { index in
            NewMessage(sender: index % 2 == 0 ? bob : alice, clientId: .random(), target: .conversation(first.message.conversationId), text: "n°\(index)")
        }
        // Without parley_send for a moment, only the set-wise path can write them.
        let signature = "parley_send(TEXT, TEXT, TEXT, TEXT, TEXT, BIGINT, TEXT, TEXT)"
        try await b.execute(PostgresQuery(unsafeSQL: "ALTER FUNCTION \(signature) RENAME TO parley_send_hidden"))
        let outcomes = try await a.send(pipeline, now: .now()).map { try $0.get() }
        try await b.execute(
            PostgresQuery(unsafeSQL: "ALTER FUNCTION parley_send_hidden(TEXT, TEXT, TEXT, TEXT, TEXT, BIGINT, TEXT, TEXT) RENAME TO parley_send"))
        let sent = outcomes.flatMap(\.deliveries)
        var received: [Delivery] = []
        while received.count < sent.count {
            guard case .events(let deliveries)? = await signals.next() else { throw NotCarried(signal: nil) }
            received += deliveries
        }
        #expect(Set(received) == Set(sent))
        for recipient in [alice, bob] {
            let ofRecipient = received.filter { $0.recipient == recipient }.map(\.event)
            #expect(ofRecipient.map(\.position) == ofRecipient.map(\.position).sorted(), "each stream in order")
            #expect(try await b.allEvents(of: recipient, after: ofRecipient[0].position - 1) == ofRecipient, "as the store replays them")
        }
        // What the store writes from Swift (a group's creation and message) is carried too.
        let group = try await a.createGroup(NewGroup(creator: alice, clientId: .random(), title: "Both", memberIds: [bob], maxMembers: 256), now: .now())
        #expect(try await Self.carried(group.deliveries.count, &signals) == Set(group.deliveries))
        let inGroup = try await a.send(
            NewMessage(sender: alice, clientId: .random(), target: .conversation(group.conversationId), text: "@bob hello", mentionNames: ["bob"]),
            now: .now())
        #expect(inGroup.message.mentions == [bob])
        #expect(try await Self.carried(inGroup.deliveries.count, &signals) == Set(inGroup.deliveries))
        // An ordinary group send and a group receipt, one function each (parley_group_send,
        // parley_group_receipt): carried, the receipt's summary to the sender included.
        let ordinary = try await a.send("plain in a group", from: bob, to: .conversation(group.conversationId))
        #expect(try await Self.carried(ordinary.deliveries.count, &signals) == Set(ordinary.deliveries))
        let read = try await a.updateReceipt(
            in: group.conversationId, member: alice, deliveredSeq: ordinary.message.seq, readSeq: ordinary.message.seq, now: .now())
        let summaries = read.deliveries.filter { if case .receiptSummary = $0.event.payload { true } else { false } }
        #expect(summaries.map(\.recipient) == [bob], "the sender hears that everyone has read")
        #expect(try await Self.carried(read.deliveries.count, &signals) == Set(read.deliveries))

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

    static func heads(_ deliveries: [Delivery]) -> [UserID: Int64] { PostgresStore.heads(of: deliveries) }
}
