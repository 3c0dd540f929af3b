import Foundation
@testable import ParleyBench
import ParleyCore
import ParleySQLite
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

    @Test func fiveKillsOfTheRealBinaryUnderLoadBreakNoGuarantee() async throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("parley").path
        let database = TestServer.temporaryDatabase()
        try FileManager.default.createDirectory(atPath: (database as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        var options = CrashCheck.Options(binary: binary, database: database)
        options.kills = 5
        options.pairs = 3
        options.groups = 2
        let report = try await CrashCheck(options: options).run()
        #expect(report.violations.isEmpty, "\(report.violations.prefix(20))")
        #expect(report.groupMessages > 30, "six clients wrote to two groups of three")
        #expect(report.kills == 5 && report.drained && report.messages > 100)
        // Every kill makes the connected clients reconnect (a client already between attempts
        // reconnects once for two kills, so not necessarily 5 × 6).
        #expect(report.reconnects >= 5, "reconnects: \(report.reconnects)")
        #expect(try await SQLiteStore(path: database).integrityCheck() == ["ok"])
    }
}
