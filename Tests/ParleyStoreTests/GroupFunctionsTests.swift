import Foundation
import Logging
import ParleyCore
@testable import ParleyPostgres
import ParleyStore
import ParleyTestSupport
import PostgresNIO
import Testing

/// ``PostgresGroupFunctions``: an ordinary group send or a group receipt written by a function
/// leaves and answers what the statements from Swift leave and answer, and its notifications carry it.
@Suite(.timeLimit(.minutes(10))) struct GroupFunctionsTests {
    enum Step {
        case send(Int)
        /// A receipt by a member, up to the group's last seq.
        case receipt(Int, delivered: Bool, read: Bool)
        /// The member's last send again, with its client id.
        case retry(Int)
    }

    static func store() async throws -> PostgresStore {
        var logger = Logger(label: "group-send-test")
        logger.logLevel = .critical
        return try await PostgresStore.connect(try DatabaseURL(try await PostgresTestServer.freshDatabaseAsync()), poolSize: 4, logger: logger)
    }

    /// A group of `creator` and `members`, each of whom accepts the invitation (they are strangers).
    static func group(_ store: PostgresStore, by creator: UserID, with members: [UserID], title: String) async throws -> ConversationID {
        let created = try await store.createGroup(
            NewGroup(creator: creator, clientId: .random(), title: title, memberIds: members, maxMembers: 256), now: .now())
        for invited in created.invited {
            _ = try await store.changeGroup(
                MembershipChange(actor: invited, clientId: .random(), conversation: created.conversationId, action: .accept, maxMembers: 256),
                now: .now())
        }
        return created.conversationId
    }

    /// What a group's sends and receipts can change, ids replaced by the members' names and
    /// stream positions by their rank in the group.
    static func snapshot(_ store: PostgresStore, _ group: ConversationID, names: [UserID: String]) async throws -> [String] {
        let id = group.rawValue
        let lines = try await store.read { db in
            try await db.values(
                """
                SELECT concat_ws('|', 'm', seq, sender_id, text, entry IS NULL, mentions, reply_to_seq) FROM messages WHERE conversation_id = \(id)
                UNION ALL SELECT concat_ws('|', 'c', last_seq, everyone_delivered_seq, everyone_read_seq, closed) FROM conversations WHERE id = \(id)
                UNION ALL SELECT concat_ws('|', 'cm', user_id, delivered_seq, read_seq, first_sent_seq)
                    FROM conversation_members WHERE conversation_id = \(id)
                UNION ALL SELECT concat_ws('|', 'e', user_id, row_number() OVER (PARTITION BY user_id ORDER BY pos), kind, seq, subject_id,
                    delivered_seq, read_seq) FROM events WHERE conversation_id = \(id)
                ORDER BY 1
                """, as: String.self, store.logger)
        }
        return lines.map { line in names.reduce(line) { $0.replacingOccurrences(of: $1.key.rawValue, with: $1.value) } }.sorted()
    }

    /// An answer's deliveries as names and values (positions differ between two groups of the same users).
    static func describe(_ deliveries: [Delivery], names: [UserID: String]) -> [String] {
        deliveries.map { delivery in
            let who = names[delivery.recipient] ?? "?"
            return switch delivery.event.payload {
            case .message(let message): "\(who) message \(message.seq) \(message.text) \(names[message.senderId] ?? "?")"
            case .receiptSummary(let summary): "\(who) summary \(summary.everyoneDeliveredSeq) \(summary.everyoneReadSeq)"
            case .receipt(let receipt): "\(who) receipt \(names[receipt.userId] ?? "?") \(receipt.deliveredSeq) \(receipt.readSeq)"
            default: "\(who) other"
            }
        }
    }

    /// Runs `steps` in `group`, ordinary sends through `send` and receipts through `receipt`
    /// (member, delivered, read); returns each step's answer described.
    static func run(
        _ steps: [Step], in group: ConversationID, users: [UserID], names: [UserID: String], store: PostgresStore,
        send: (NewMessage) async throws -> SendOutcome, receipt: (UserID, Int64?, Int64?) async throws -> ReceiptOutcome
    ) async throws -> [String] {
        var answers: [String] = [], lastSent: [Int: NewMessage] = [:], lastSeq: Int64 = 0, count = 0
        for step in steps {
            switch step {
            case .send(let user):
                count += 1
                let new = NewMessage(sender: users[user], clientId: .random(), target: .conversation(group), text: "n°\(count) \"q\" 日本")
                let outcome = try await send(new)
                lastSent[user] = new
                lastSeq = outcome.message.seq
                answers.append("sent \(outcome.message.seq) dup=\(outcome.duplicate) " + describe(outcome.deliveries, names: names).joined(separator: ", "))
                for delivery in outcome.deliveries {
                    let replayed = try await store.allEvents(of: delivery.recipient, after: delivery.event.position - 1).first
                    #expect(replayed == delivery.event, "the answer's event is what the store replays")
                }
            case .receipt(let user, let delivered, let read):
                let outcome = try await receipt(users[user], delivered ? lastSeq : nil, read ? lastSeq : nil)
                answers.append(
                    "receipt \(outcome.receipt.deliveredSeq) \(outcome.receipt.readSeq) " + describe(outcome.deliveries, names: names).joined(separator: ", "))
                for delivery in outcome.deliveries {
                    let replayed = try await store.allEvents(of: delivery.recipient, after: delivery.event.position - 1).first
                    #expect(replayed == delivery.event, "the answer's event is what the store replays")
                }
            case .retry(let user):
                guard let new = lastSent[user] else { continue }
                let outcome = try await store.send(new, now: .now())
                answers.append("retry \(outcome.message.seq) dup=\(outcome.duplicate) \(outcome.message.text) \(outcome.deliveries.count)")
            }
        }
        return answers
    }

    @Test func anOrdinarySendAndAReceiptLeaveWhatTheStatementsFromSwiftLeave() async throws {
        let store = try await Self.store()
        let names = ["ada", "bob", "cy", "dee"]
        let users = try await names.asyncMap { try await store.makeUser($0).id }
        let byId = Dictionary(uniqueKeysWithValues: zip(users, names))
        let groups = try await (0..<2).asyncMap { _ in try await Self.group(store, by: users[0], with: [users[1], users[2]], title: "Same") }
        // Receipts between sends, so the senders' cursors hold the aggregate back and let it go.
        let steps: [Step] = [
            .send(0), .send(1), .receipt(2, delivered: true, read: false), .receipt(2, delivered: true, read: false), .send(2), .send(0),
            .receipt(1, delivered: false, read: true), .receipt(2, delivered: false, read: true), .send(1), .retry(1), .send(0), .send(2),
            .send(2), .receipt(0, delivered: true, read: true), .send(1), .retry(2),
        ]
        var functionRan = 0
        let byFunction = try await Self.run(steps, in: groups[0], users: users, names: byId, store: store) { new in
            guard let outcome = try await store.sendOrdinaryToGroup(new, groups[0], now: .now()) else {
                Issue.record("the function answered nothing for an ordinary send")
                throw StoreError.conversationNotFound
            }
            functionRan += 1
            return outcome
        } receipt: { member, delivered, read in
            guard let outcome = try await store.groupReceiptInOne(in: groups[0], member: member, deliveredSeq: delivered, readSeq: read, now: .now())
            else {
                Issue.record("the function answered nothing for a receipt")
                throw StoreError.conversationNotFound
            }
            functionRan += 1
            return outcome
        }
        let inSteps = try await Self.run(steps, in: groups[1], users: users, names: byId, store: store) { new in
            try await store.sendToGroupInSteps(new, groups[1], now: .now())
        } receipt: { member, delivered, read in
            try await store.groupReceiptInSteps(in: groups[1], member: member, deliveredSeq: delivered, readSeq: read, now: .now())
        }
        #expect(functionRan == 9 + 5)
        #expect(byFunction == inSteps)
        #expect(byFunction.contains { $0.hasPrefix("sent") && $0.contains("summary") }, "the steps moved the aggregate by a send")
        #expect(byFunction.contains { $0.hasPrefix("receipt") && $0.contains("summary") }, "and by a receipt")
        let snapshots = (try await Self.snapshot(store, groups[0], names: byId), try await Self.snapshot(store, groups[1], names: byId))
        #expect(snapshots.0 == snapshots.1)

        // Anything else is left to the statements from Swift, with nothing written (rule 2).
        let before = try await Self.snapshot(store, groups[0], names: byId)
        let outsider = NewMessage(sender: users[3], clientId: .random(), target: .conversation(groups[0]), text: "let me in")
        #expect(try await store.sendOrdinaryToGroup(outsider, groups[0], now: .now()) == nil)
        await #expect(throws: StoreError.conversationNotFound) { try await store.send(outsider, now: .now()) }
        let unknown = ConversationID(rawValue: "grp_" + UUID().uuidString.lowercased())
        #expect(try await store.sendOrdinaryToGroup(outsider, unknown, now: .now()) == nil)
        #expect(try await store.groupReceiptInOne(in: groups[0], member: users[3], deliveredSeq: 1, readSeq: nil, now: .now()) == nil)
        #expect(try await store.groupReceiptInOne(in: groups[0], member: users[1], deliveredSeq: 1_000, readSeq: nil, now: .now()) == nil)
        await #expect(throws: StoreError.cursorBeyondEnd) {
            try await store.updateReceipt(in: groups[0], member: users[1], deliveredSeq: 1_000, readSeq: nil, now: .now())
        }
        #expect(try await Self.snapshot(store, groups[0], names: byId) == before)
        try await store.close()
    }

    @Test func aBigGroupsSendIsCarriedInSeveralNotificationsOrAsPositions() async throws {
        var logger = Logger(label: "group-send-test")
        logger.logLevel = .critical
        let url = try DatabaseURL(try await PostgresTestServer.freshDatabaseAsync())
        let a = try await PostgresStore.connect(url, poolSize: 4, logger: logger)
        let b = try await PostgresStore.connect(url, poolSize: 2, logger: logger)
        let users = try await (0..<110).asyncMap { try await a.makeUser("member\($0)").id }
        let group = try await Self.group(a, by: users[0], with: Array(users.dropFirst()), title: "Many")
        // Listening from here on: the creation's notifications are behind us.
        let bus = PostgresClusterBus(store: b, logger: logger)
        let running = Task { try await bus.run() }
        var signals = bus.signals.makeAsyncIterator()
        #expect(await signals.next() == .reconnected)

        let short = try await a.send("to all of you", from: users[3], to: .conversation(group))
        #expect(short.deliveries.count == 110)
        #expect(try await CarriedEventsTests.carried(110, &signals) == Set(short.deliveries))
        // Past 1,500 bytes an event is not repeated over several payloads: positions, in two.
        let long = try await a.send(String(repeating: "x", count: 1_600), from: users[4], to: .conversation(group))
        var moved: [UserID: Int64] = [:]
        while moved.count < 110 {
            guard case .streamsMoved(let heads)? = await signals.next() else { throw CarriedEventsTests.NotCarried(signal: nil) }
            moved.merge(heads) { max($0, $1) }
        }
        #expect(moved == CarriedEventsTests.heads(long.deliveries))
        running.cancel()
        _ = await running.result
        try await a.close()
        try await b.close()
    }
}
