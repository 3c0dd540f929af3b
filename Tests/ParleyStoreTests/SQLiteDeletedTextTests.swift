import Foundation
import GRDB
import ParleyCore
import ParleyStore
@testable import ParleySQLite
import Testing

/// docs/protocol.md "Message actions" rule 4: a message deleted for everyone leaves none of its
/// text in the database file, neither the last text nor an earlier version.
@Suite struct SQLiteDeletedTextTests {
    @Test func deletedTextIsGoneFromTheFileAfterACheckpoint() async throws {
        let path = WALCheckpointerTests.temporaryPath()
        let store = try SQLiteStore(path: path, durability: .normal)
        let ada = try await store.makeUser("ada"), grace = try await store.makeUser("grace")
        let marker = UUID().uuidString
        let (first, second, kept) = ("first-\(marker)", "second-\(marker)", "kept-\(marker)")
        let message = try await store.send(first, from: ada.id, to: .user(grace.id)).message
        _ = try await store.send(kept, from: grace.id, to: .conversation(message.conversationId))
        _ = try await store.act(
            NewMessageAction(actor: ada.id, clientId: .random(), conversation: message.conversationId, seq: message.seq, change: .edit(second)),
            now: .now())
        // Both texts are in the file before the delete (so the check below can fail).
        try await store.checkpointTruncatingWAL()
        let before = try Self.bytes(of: path)
        #expect(before.contains(Array(first.utf8)) && before.contains(Array(second.utf8)))
        _ = try await store.act(
            NewMessageAction(actor: ada.id, clientId: .random(), conversation: message.conversationId, seq: message.seq, change: .delete), now: .now())
        try await store.checkpointTruncatingWAL()
        let after = try Self.bytes(of: path)
        #expect(!after.contains(Array(first.utf8)), "the text deleted for everyone")
        #expect(!after.contains(Array(second.utf8)), "the edited text deleted with it")
        #expect(after.contains(Array(kept.utf8)), "other messages stay")
        try await store.close()
    }

    /// The database file and its WAL, as one byte string.
    static func bytes(of path: String) throws -> [UInt8] {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        if let wal = try? Data(contentsOf: URL(fileURLWithPath: path + "-wal")) { bytes += wal }
        return bytes
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in it.
    func contains(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { start in self[start..<start + needle.count].elementsEqual(needle) }
    }
}
