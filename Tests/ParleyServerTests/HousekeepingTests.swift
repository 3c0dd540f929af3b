import Foundation
import Logging
import ParleyCore
import ParleySQLite
import ParleyStore
import Testing
@testable import ParleyServer

/// Housekeeping's chores, run by the service itself.
@Suite struct HousekeepingTests {
    /// A delete for everyone's words leave the SQLite file once housekeeping has run
    /// (SearchIndexPurge), without anything else calling the store.
    @Test func housekeepingRewritesTheSearchIndexAfterADeleteForEveryone() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("parley-housekeeping-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let store = try SQLiteStore(path: path, durability: .normal)
        let ada = try await store.createUser(NewUser(username: "ada", displayName: "Ada", passwordHash: "hash"), now: .now())
        let grace = try await store.createUser(NewUser(username: "grace", displayName: "Grace", passwordHash: "hash"), now: .now())
        let secret = try await store.send(NewMessage(sender: ada.id, clientId: .random(), target: .user(grace.id), text: "zqxjwordalpha"), now: .now())
        for number in 0..<40 {
            let filler = NewMessage(sender: grace.id, clientId: .random(), target: .conversation(secret.message.conversationId), text: "filler \(number)")
            _ = try await store.send(filler, now: .now())
        }
        let delete = NewMessageAction(actor: ada.id, clientId: .random(), conversation: secret.message.conversationId, seq: secret.message.seq, change: .delete)
        _ = try await store.act(delete, now: .now())
        let word = Array("wordalpha".utf8)
        try await store.checkpointTruncatingWAL()
        #expect(try Self.fileHolds(word, path), "FTS5 keeps the words until a merge (so the check below can fail)")

        let housekeeping = Housekeeping(
            store: store, eventsKeptPerUser: 10_000, intervalSeconds: 0.05, limiters: [], loginThrottle: LoginThrottle(.init()),
            logger: Logger(label: "test"))
        let running = Task { try await housekeeping.run() }
        defer { running.cancel() }
        try await eventually("the deleted message's word leaves the file") {
            try await store.checkpointTruncatingWAL()
            return try !Self.fileHolds(word, path)
        }
        running.cancel()
        _ = await running.result
        try await store.close()
    }

    static func fileHolds(_ needle: [UInt8], _ path: String) throws -> Bool {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        guard needle.count <= bytes.count else { return false }
        return (0...(bytes.count - needle.count)).contains { bytes[$0..<$0 + needle.count].elementsEqual(needle) }
    }
}
