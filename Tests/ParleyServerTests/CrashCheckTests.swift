import Foundation
@testable import ParleyBench
import ParleyCore
import ParleySQLite
import ParleyServer
import ParleyStore
import Synchronization
import Testing

/// The crash checker: it must catch what it exists to catch, and a short run against the real
/// binary (5 SIGKILLs under load) must find every guarantee held.
@Suite struct CrashCheckTests {
    static let me = UserID.random(), partner = UserID.random()
    static let conversation = ConversationID.direct(me, partner)

    static func message(_ seq: Int64, clientId: ClientMessageID, from sender: UserID = me) -> Message {
        Message(
            id: .random(), conversationId: conversation, seq: seq, senderId: sender, clientId: clientId, text: "m\(seq)", createdAt: Timestamp(milliseconds: 1))
    }

    static func frame(_ frame: ServerFrame) -> String { String(decoding: try! JSONEncoder().encode(frame), as: UTF8.self) }

    static func client() -> CrashCheckClient {
        CrashCheckClient(
            session: BenchAPI.Session(user: User(id: me, username: "me", displayName: "Me", createdAt: Timestamp(milliseconds: 1)), token: "t"),
            destination: .partner(partner))
    }

    @Test func aCleanHistoryPasses() {
        let client = Self.client()
        client.write("a")
        client.write("b")
        let stored = client.outbox.enumerated().map { Self.message(Int64($0 + 1), clientId: $1.clientId) }
        for (position, message) in stored.enumerated() {
            client.receive(Self.frame(.sent(ref: nil, message: message, duplicate: false)))
            client.receive(Self.frame(.event(StreamEvent(position: Int64(position + 1), payload: .message(message)))))
        }
        #expect(CrashCheckRules.check(client: client, index: 0, stored: stored, checkSeq: true).isEmpty)
    }

    /// The drain waits as long as answers keep coming, and gives up on a client that waited `stall`
    /// for nothing.
    @Test func theDrainWaitsForProgressAndGivesUpOnAStall() async {
        let client = Self.client()
        for text in ["a", "b", "c", "d", "e", "f", "g"] { client.write(text) }
        let ids = client.outbox.map(\.clientId)
        // Nothing is ever answered: a stall, found long before the limit.
        let start = ContinuousClock.now
        #expect(await !CrashCheck.drain([client], within: .seconds(600), stalledAfter: .milliseconds(300)))
        #expect(ContinuousClock.now - start < .seconds(60))
        // Answers that come one at a time, each well within the stall bound but all together
        // longer than it, drain it: the drain waits as long as answers keep coming. Its clock is
        // manual and moves only with an answer, so a slow machine changes nothing.
        let clock = Mutex(ContinuousClock.now)
        let feeder = Task {
            for (index, id) in ids.enumerated() {
                try? await Task.sleep(for: .milliseconds(20))
                clock.withLock { $0 = $0.advanced(by: .milliseconds(1_500)) }
                let message = Self.message(Int64(index + 1), clientId: id)
                client.receive(Self.frame(.sent(ref: nil, message: message, duplicate: false, position: Int64(index + 1))))
            }
        }
        let begun = clock.withLock { $0 }
        #expect(await CrashCheck.drain([client], within: .seconds(600), stalledAfter: .seconds(8)) { clock.withLock { $0 } })
        await feeder.value
        #expect(clock.withLock { $0 } - begun > .seconds(8), "the answers took longer than the stall bound")
        #expect(client.ackedCount == 7)
    }

    /// Rule 11: a cursor or a summary that moves back is caught, and receipts go out as messages are read.
    @Test func receiptsThatMoveBackAreCaught() {
        var witness = ReceiptWitness()
        let frames = (1...8).compactMap { witness.saw(Int64($0), in: Self.conversation) }
        #expect(frames.count == 1, "one receipt in flight at a time")
        guard case .receipt(let ref, _, nil, 4)? = frames.first else {
            Issue.record("a read receipt for the newest message seen: \(frames)")
            return
        }
        let another = witness.answered("another", applied: true), inFlight = witness.answered(ref, applied: true)
        #expect(!another && inFlight && witness.acknowledgedRead == 4)
        let next = witness.saw(9, in: Self.conversation)
        #expect(next != nil, "the next one once the first was answered")
        let receipt = { (read: Int64) in ReceiptUpdate(conversationId: Self.conversation, userId: Self.me, deliveredSeq: read, readSeq: read) }
        witness.observe(.receipt(receipt(6)), me: Self.me, in: Self.conversation)
        witness.observe(.receipt(receipt(5)), me: Self.me, in: Self.conversation)
        let summary = { (seq: Int64) in ReceiptSummary(conversationId: Self.conversation, everyoneDeliveredSeq: seq, everyoneReadSeq: seq) }
        witness.observe(.receiptSummary(summary(3)), me: Self.me, in: Self.conversation)
        witness.observe(.receiptSummary(summary(2)), me: Self.me, in: Self.conversation)
        #expect(witness.violations.count == 2, "\(witness.violations)")
    }

    @Test func lossDuplicatesGapsAndReorderingAreCaught() {
        let client = Self.client()
        for text in ["a", "b", "c"] { client.write(text) }
        let ids = client.outbox.map(\.clientId)
        // b stored before a; c acknowledged but never stored; a stored twice.
        let stored = [Self.message(1, clientId: ids[1]), Self.message(2, clientId: ids[0]), Self.message(3, clientId: ids[0])]
        client.receive(Self.frame(.sent(ref: nil, message: Self.message(4, clientId: ids[2]), duplicate: false)))
        client.receive(Self.frame(.event(StreamEvent(position: 1, payload: .message(stored[0])))))
        client.receive(Self.frame(.event(StreamEvent(position: 3, payload: .message(stored[1])))))  // a gap
        client.receive(Self.frame(.event(StreamEvent(position: 4, payload: .message(stored[1])))))  // twice
        let problems = CrashCheckRules.check(client: client, index: 0, stored: stored, checkSeq: true).joined(separator: "\n")
        for expected in [
            "stream position 3 after 1", "delivered twice", "acknowledged", "stored 2 times", "out of the order written",
            "never delivered",
        ] {
            #expect(problems.contains(expected), "\(expected) in \(problems)")
        }
    }

    /// Rule 7: an edit applied twice or out of order, a reaction lost, a delete undone are caught.
    @Test func actionsAppliedTwiceOutOfOrderOrNotAtAllAreCaught() {
        let client = Self.client()
        client.write("a")
        let original = Self.message(1, clientId: client.outbox[0].clientId)
        client.receive(Self.frame(.sent(ref: nil, message: original, duplicate: false)))
        client.act(.edit)
        client.act(.edit)
        client.act(.react)
        for action in client.actions {
            client.receive(Self.frame(.acted(ref: action.clientId.rawValue, message: original, duplicate: false)))
        }
        let edits = client.actions.compactMap(\.text)
        var stored = original
        stored.text = edits[1]
        stored.reactions = client.actions[2].emoji.map { [Reaction(emoji: $0, count: 1, mine: true, userIds: [Self.me])] }
        #expect(client.allAcked)
        #expect(CrashCheckActionRules.check(client: client, index: 0, stored: [stored], versions: [1: 2]).isEmpty)
        var outOfOrder = stored
        outOfOrder.text = edits[0]
        let problems = CrashCheckActionRules.check(client: client, index: 0, stored: [outOfOrder], versions: [1: 3]).joined(separator: "\n")
        #expect(problems.contains("its acknowledged actions say") && problems.contains("3 earlier versions, edited 2 times"))
        var unreacted = stored
        unreacted.reactions = [Reaction(emoji: "🙈", count: 1, mine: true, userIds: [Self.me])]
        #expect(CrashCheckActionRules.check(client: client, index: 0, stored: [unreacted], versions: [1: 2]).joined().contains("the last one set"))
    }

    @Test func fiveKillsOfTheRealBinaryUnderLoadBreakNoGuarantee() async throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("parley").path
        let database = TestServer.temporaryDatabase()
        try FileManager.default.createDirectory(atPath: (database as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        var options = CrashCheck.Options(binary: binary, database: database)
        options.kills = 5
        options.pairs = 3
        options.groups = 2
        options.uploaders = 2
        options.checkpoint = { path in try await SQLiteStore(path: path).checkpointTruncatingWAL() }
        let report = try await CrashCheck(options: options).run()
        #expect(report.violations.isEmpty, "\(report.violations.prefix(20))")
        #expect(report.files >= 2 * 5, "two users sent a file between each two kills: \(report.files)")
        #expect(report.groupMessages > 30, "six clients wrote to two groups of three")
        #expect(report.kills == 5 && report.drained && report.messages > 100)
        #expect(report.actions > 5, "reactions, edits and deletes were mixed in: \(report.actions)")
        #expect(report.receipts > 10, "every client read as it went: \(report.receipts)")
        // Every kill makes the connected clients reconnect (a client already between attempts
        // reconnects once for two kills, so not necessarily 5 × 6).
        #expect(report.reconnects >= 5, "reconnects: \(report.reconnects)")
        #expect(try await SQLiteStore(path: database).integrityCheck() == ["ok"])
    }
}

/// Rule 9's check catches a push that never came, and passes when it came.
@Suite struct CrashCheckPushRuleTests {
    @Test func aNewestMessageNeverPushedIsCaught() async throws {
        try await TestServer.run(configure: { $0.push.allowLoopbackEndpoints = true }) { server in
            let api = BenchAPI(baseURL: "http://127.0.0.1:\(server.port)")
            let watchers = try await PushWatchers()
            let clients = try await CrashCheck.register(pairs: 0, groups: 1, api: api, names: "rule9", oneInFlight: false, watchers: watchers)
            let group = clients[0].conversation
            let owner = clients[0].session
            func send(_ text: String) async throws -> Int64 {
                let answer: API.SendResponse = try await api.post(
                    "/v1/messages", SendRequest(clientId: .random(), conversationId: group, text: text), token: owner.token)
                return answer.message.seq
            }
            _ = try await send("one")
            #expect(await watchers.check(api: api, within: .seconds(20)).isEmpty, "pushed")
            // The offline member's subscription goes: the next message is owed no push, and the rule says so.
            try await server.store.dropPushSubscription(endpoint: "http://127.0.0.1:\(watchers.sink.port)/push/0")
            let lost = try await send("two")
            let problems = await watchers.check(api: api, within: .milliseconds(500))
            #expect(problems == ["group 0's offline member: the newest message (seq \(lost)) was never pushed; pushes reached seq \(lost - 1)"])
            await watchers.sink.close()
        }
    }
}
