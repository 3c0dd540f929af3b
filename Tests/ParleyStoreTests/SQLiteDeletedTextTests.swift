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

    /// SearchIndexPurge: the index's words of a message deleted for everyone stay in FTS5's older
    /// segments after the delete, and leave the file with the purge's steps, also while new
    /// messages keep writing segments between them (rule 2's budget ends it).
    @Test(arguments: [false, true]) func deletedWordsLeaveTheSearchIndexWithThePurge(busy: Bool) async throws {
        let path = WALCheckpointerTests.temporaryPath()
        let store = try SQLiteStore(path: path, durability: .normal)
        let ada = try await store.makeUser("ada"), grace = try await store.makeUser("grace")
        while try await store.purgeDeletedSearchTerms() {}  // the migration's pending mark
        let secret = try await store.send("zqxjwordalpha 秘密の計画は火曜日", from: ada.id, to: .user(grace.id)).message
        for number in 0..<40 { _ = try await store.send("filler \(number) 今日の天気", from: grace.id, to: .conversation(secret.conversationId)) }
        let word = Array("wordalpha".utf8), grams = Array("は火".utf8)
        try await store.checkpointTruncatingWAL()
        let indexed = try Self.bytes(of: path)
        let (wordIndexed, gramsIndexed) = (indexed.contains(word), indexed.contains(grams))
        #expect(wordIndexed && gramsIndexed, "indexed (so the checks below can fail)")
        _ = try await store.act(
            NewMessageAction(actor: ada.id, clientId: .random(), conversation: secret.conversationId, seq: secret.seq, change: .delete), now: .now())
        try await store.checkpointTruncatingWAL()
        let wordKept = try Self.bytes(of: path).contains(word)
        #expect(wordKept, "FTS5 keeps the words until a merge")
        var steps = 0
        while try await store.purgeDeletedSearchTerms() {
            steps += 1
            if busy { _ = try await store.send("later \(steps) 明日の予定", from: grace.id, to: .conversation(secret.conversationId)) }
            try #require(steps < 1000, "the purge ends")
        }
        try await store.checkpointTruncatingWAL()
        let after = try Self.bytes(of: path)
        let (wordLeft, gramsLeft) = (after.contains(word), after.contains(grams))
        #expect(!wordLeft, "the deleted message's word")
        #expect(!gramsLeft, "its CJK grams")
        #expect(try await store.search(try SearchQuery.parse("filler"), as: grace.id, limit: 50, offset: 0).count == 40, "the others are found")
        #expect(try await store.search(try SearchQuery.parse("天気"), as: grace.id, limit: 50, offset: 0).count == 40)
        #expect(try await store.search(try SearchQuery.parse("zqxjwordalpha"), as: grace.id, limit: 50, offset: 0).isEmpty)
        #expect(try await store.purgeDeletedSearchTerms() == false, "nothing pending after")
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
