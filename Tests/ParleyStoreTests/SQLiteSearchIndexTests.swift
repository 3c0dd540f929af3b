import Foundation
import GRDB
import ParleyCore
import ParleyStore
@testable import ParleySQLite
import Testing

/// ``SearchIndexLog``'s rules on a real store: the index follows sends, edits and deletes made in
/// one batch, in order, and a failed job leaves nothing in it.
@Suite struct SQLiteSearchIndexTests {
    func hits(_ q: String, _ user: UserID, _ store: SQLiteStore) async throws -> [String] {
        try await store.search(try SearchQuery.parse(q), as: user, limit: 20, offset: 0).map(\.text)
    }

    @Test(.timeLimit(.minutes(10))) func aSendEditedAndAnotherDeletedInTheirOwnBatchAreIndexedAsTheyEnd() async throws {
        let store = try SQLiteStore(path: WALCheckpointerTests.temporaryPath(), durability: .normal)
        let ada = try await store.makeUser("ada"), grace = try await store.makeUser("grace")
        let first = try await store.send("hello grace", from: ada.id, to: .user(grace.id)).message
        let conversation = first.conversationId
        func action(_ seq: Int64, _ change: NewMessageAction.Change) -> @Sendable () async throws -> Void {
            { _ = try await store.act(NewMessageAction(actor: ada.id, clientId: .random(), conversation: conversation, seq: seq, change: change), now: .now()) }
        }
        // Seqs 2 and 3 are sent, 2 edited twice and 3 deleted, all before the batch commits.
        try await GroupCommitWriterTests.inOneBatch(
            store.pool, store.batcher,
            [
                { _ = try await store.send("apricot one", from: ada.id, to: .conversation(conversation)) },
                { _ = try await store.send("blueberry 果物の写真", from: ada.id, to: .conversation(conversation)) },
                action(2, .edit("cherry two")),
                action(2, .edit("damson three")),
                action(3, .delete),
                action(9, .edit("no such message")),
            ])
        #expect(try await hits("apricot", grace.id, store).isEmpty)
        #expect(try await hits("cherry", grace.id, store).isEmpty)
        #expect(try await hits("damson", grace.id, store) == ["damson three"])
        #expect(try await hits("blueberry", grace.id, store).isEmpty, "deleted in the batch that sent it")
        #expect(try await hits("写真", grace.id, store).isEmpty)
        #expect(try await hits("hello", grace.id, store) == ["hello grace"])
        // Later changes still find what the batch indexed (a contentless delete needs the same values).
        try await action(2, .edit("elderberry four"))()
        #expect(try await hits("damson", grace.id, store).isEmpty)
        #expect(try await hits("elderberry", grace.id, store) == ["elderberry four"])
        try await store.pool.write { db in
            try db.execute(sql: "INSERT INTO message_search (message_search, rank) VALUES ('integrity-check', 0)")
            try db.execute(sql: "INSERT INTO message_search_cjk (message_search_cjk, rank) VALUES ('integrity-check', 0)")
        }
        try await store.close()
    }

    /// Migration `v12-search-widths`: an index written with the older fold (half-width katakana
    /// folded as Latin, its voiced marks dropped) is rebuilt with the fold the store uses now, so
    /// the message is found by what it says and its edit removes what the index holds.
    @Test func theIndexOfAnOlderFoldIsRebuilt() async throws {
        let path = WALCheckpointerTests.temporaryPath()
        var store = try SQLiteStore(path: path, durability: .normal)
        let ada = try await store.makeUser("ada"), grace = try await store.makeUser("grace")
        let message = try await store.send("ﾊﾟｰﾃｨｰは明日", from: ada.id, to: .user(grace.id)).message
        try await store.pool.write { db in
            let rowid = try Int64.fetchOne(db, sql: "SELECT rowid FROM messages WHERE id = ?", arguments: [message.id.rawValue])
            try db.execute(sql: "INSERT INTO message_search (message_search) VALUES ('delete-all')")
            try db.execute(sql: "INSERT INTO message_search_cjk (message_search_cjk) VALUES ('delete-all')")
            for table in ["message_search", "message_search_cjk"] {
                try db.execute(sql: "INSERT INTO \(table) (rowid, text) VALUES (?, 'ハーティーは明日')", arguments: [rowid])
            }
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v12-search-widths'")
        }
        #expect(try await hits("パーティー", grace.id, store).isEmpty, "the older index does not have it")
        try await store.close()
        store = try SQLiteStore(path: path, durability: .normal)
        #expect(try await hits("パーティー", grace.id, store) == ["ﾊﾟｰﾃｨｰは明日"])
        #expect(try await hits("ﾊﾟｰﾃｨ", grace.id, store) == ["ﾊﾟｰﾃｨｰは明日"])
        _ = try await store.act(
            NewMessageAction(actor: ada.id, clientId: .random(), conversation: message.conversationId, seq: message.seq, change: .edit("ランチは明日")),
            now: .now())
        #expect(try await hits("パーティー", grace.id, store).isEmpty)
        #expect(try await hits("ハーティー", grace.id, store).isEmpty, "nothing of the older fold is left")
        #expect(try await hits("ランチ", grace.id, store) == ["ランチは明日"])
        try await store.pool.write { db in
            try db.execute(sql: "INSERT INTO message_search (message_search, rank) VALUES ('integrity-check', 0)")
            try db.execute(sql: "INSERT INTO message_search_cjk (message_search_cjk, rank) VALUES ('integrity-check', 0)")
        }
        try await store.close()
    }

    /// Migration `v18-search-unaccented-letters`: an index written before the fold took strokes
    /// off (ł stayed ł) is filled again, for the word and the CJK table, and an edit then removes
    /// exactly what the index holds.
    @Test func theIndexBeforeUnaccentedLettersIsFilledAgain() async throws {
        let path = WALCheckpointerTests.temporaryPath()
        var store = try SQLiteStore(path: path, durability: .normal)
        let ada = try await store.makeUser("ada"), grace = try await store.makeUser("grace")
        let plain = try await store.send("Spotkanie w Łodzi", from: ada.id, to: .user(grace.id)).message
        let mixed = try await store.send("Łódź東京へ", from: ada.id, to: .user(grace.id)).message
        try await store.pool.write { db in  // as v17 left them: ł as written
            try db.execute(sql: "INSERT INTO message_search (message_search) VALUES ('delete-all')")
            try db.execute(sql: "INSERT INTO message_search_cjk (message_search_cjk) VALUES ('delete-all')")
            for (message, words) in [(plain, "spotkanie w łodzi"), (mixed, "łodz 東京へ")] {
                let rowid = try Int64.fetchOne(db, sql: "SELECT rowid FROM messages WHERE id = ?", arguments: [message.id.rawValue])
                try db.execute(sql: "INSERT INTO message_search (rowid, text) VALUES (?, ?)", arguments: [rowid, words])
            }
            let rowid = try Int64.fetchOne(db, sql: "SELECT rowid FROM messages WHERE id = ?", arguments: [mixed.id.rawValue])
            try db.execute(sql: "INSERT INTO message_search_cjk (rowid, text) VALUES (?, 'łodz東京へ')", arguments: [rowid])
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v18-search-unaccented-letters'")
        }
        #expect(try await hits("lodzi", grace.id, store).isEmpty, "the older index does not have it")
        #expect(try await hits("łódź東京", grace.id, store).isEmpty)
        try await store.close()
        store = try SQLiteStore(path: path, durability: .normal)
        #expect(try await hits("lodzi", grace.id, store) == ["Spotkanie w Łodzi"])
        #expect(try await hits("łódź東京", grace.id, store) == ["Łódź東京へ"])
        #expect(try await hits("\"lodz\"", grace.id, store) == ["Łódź東京へ"], "the word glued to CJK")
        for (message, text) in [(plain, "Spotkanie w Krakowie"), (mixed, "Kraków東京へ")] {
            _ = try await store.act(
                NewMessageAction(actor: ada.id, clientId: .random(), conversation: message.conversationId, seq: message.seq, change: .edit(text)),
                now: .now())
        }
        #expect(try await hits("lodz", grace.id, store).isEmpty, "nothing of the migrated entries is left")
        #expect(try await hits("krakow", grace.id, store) == ["Kraków東京へ", "Spotkanie w Krakowie"])
        try await store.pool.write { db in
            try db.execute(sql: "INSERT INTO message_search (message_search, rank) VALUES ('integrity-check', 0)")
            try db.execute(sql: "INSERT INTO message_search_cjk (message_search_cjk, rank) VALUES ('integrity-check', 0)")
        }
        try await store.close()
    }

    /// Migration v15 gives the messages stored before it their CJK grams: one or two characters
    /// find them at any age, and an edit then takes back exactly what the migration added.
    @Test func messagesStoredBeforeTheGramsIndexAreFoundByOneOrTwoCharacters() async throws {
        let path = WALCheckpointerTests.temporaryPath()
        var store = try SQLiteStore(path: path, durability: .normal)
        let ada = try await store.makeUser("ada"), grace = try await store.makeUser("grace")
        let message = try await store.send("ﾊﾟｰﾃｨｰは明日の夜", from: ada.id, to: .user(grace.id)).message
        _ = try await store.send("plain words only", from: ada.id, to: .user(grace.id))
        try await store.pool.write { db in
            try db.execute(sql: "DROP TABLE message_search_grams")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v15-search-short-cjk'")
        }
        try await store.close()
        store = try SQLiteStore(path: path, durability: .normal)
        #expect(try await hits("明日", grace.id, store) == ["ﾊﾟｰﾃｨｰは明日の夜"])
        #expect(try await hits("夜", grace.id, store) == ["ﾊﾟｰﾃｨｰは明日の夜"])
        #expect(try await hits("パー", grace.id, store) == ["ﾊﾟｰﾃｨｰは明日の夜"], "through the fold")
        _ = try await store.act(
            NewMessageAction(actor: ada.id, clientId: .random(), conversation: message.conversationId, seq: message.seq, change: .edit("昼に会う")),
            now: .now())
        #expect(try await hits("明日", grace.id, store).isEmpty, "the edit took the migration's grams back")
        #expect(try await hits("昼", grace.id, store) == ["昼に会う"])
        try await store.pool.write { db in
            try db.execute(sql: "INSERT INTO message_search_grams (message_search_grams, rank) VALUES ('integrity-check', 0)")
        }
        try await store.close()
    }

    /// A send that fails after its message row was written (here: the database refuses its event
    /// row) takes its index entry back with its savepoint.
    @Test(.timeLimit(.minutes(10))) func aSendThatFailsLeavesNothingInTheIndex() async throws {
        let store = try SQLiteStore(path: WALCheckpointerTests.temporaryPath(), durability: .normal)
        let ada = try await store.makeUser("ada"), grace = try await store.makeUser("grace")
        let first = try await store.send("hello grace", from: ada.id, to: .user(grace.id)).message
        try await store.pool.write { db in
            try db.execute(sql: "CREATE TRIGGER refuse BEFORE INSERT ON events WHEN new.seq = 2 BEGIN SELECT RAISE(ABORT, 'refused'); END")
        }
        await #expect(throws: (any Error).self) { try await store.send("figs refused", from: ada.id, to: .conversation(first.conversationId)) }
        try await store.pool.write { db in try db.execute(sql: "DROP TRIGGER refuse") }
        let kept = try await store.send("figs kept", from: ada.id, to: .conversation(first.conversationId)).message
        #expect(kept.seq == 2)
        #expect(try await hits("figs", grace.id, store) == ["figs kept"])
        #expect(try await hits("refused", grace.id, store).isEmpty)
        try await store.close()
    }
}

extension SQLiteSearchIndexTests {
    /// Rule 5: index writes never land outside a transaction (after SQLite rolled one back).
    @Test func nothingIsAppliedOutsideATransaction() async throws {
        let store = try SQLiteStore(path: WALCheckpointerTests.temporaryPath(), durability: .normal)
        let log = store.writerStatements.searchIndex
        let written = try await store.pool.writeWithoutTransaction { db -> Bool in
            log.add(rowid: 424_242, text: "orphaned words")
            do {
                try log.apply(db)
                return true
            } catch {
                return false
            }
        }
        #expect(!written)
        let indexed = try await store.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM message_search WHERE message_search MATCH 'orphaned'")
        }
        #expect(indexed == 0)
        try await store.close()
    }
}
