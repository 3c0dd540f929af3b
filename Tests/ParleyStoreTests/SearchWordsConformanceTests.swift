import GRDB
import ParleyCore
@testable import ParleySQLite
import ParleyStore
import Testing

/// docs/protocol.md "Search": a word glued to CJK is a word of its own, and a word of the query
/// of three characters or more is a prefix too (a quoted phrase is as written), on every backend.
@Suite struct SearchWordsConformanceTests {
    static let glued = [
        "iPhoneを買いました", "新しいiPhone15が届いた", "mixed日本語English", "서울에서 iPhone을 샀어", "会議は3時から", "plain iphone talk",
        "Café東京で", "I will buy iPhoneを明日",
    ]

    @Test(arguments: StoreBackend.all)
    func aWordGluedToCJKIsFoundByItself(backend: StoreBackend) async throws {
        let searches = try await GraceSearches(backend, afterAdaSent: Self.glued)
        let (found, texts) = (searches.found, Self.glued)
        #expect(try await found("iphone") == [texts[0], texts[1], texts[3], texts[5], texts[7]], "Japanese, Korean, Latin around it")
        #expect(try await found("iPhone15") == [texts[1]], "a word with digits")
        #expect(try await found("english") == [texts[2]], "after CJK")
        #expect(try await found("mixed") == [texts[2]], "before CJK")
        #expect(try await found("日本語") == [texts[2]], "the CJK between, as before")
        #expect(try await found("mixed日本語English") == [texts[2]], "the whole, as written")
        #expect(try await found("3") == [texts[4]], "a digit between CJK")
        #expect(try await found("cafe") == [texts[6]], "folded, then split")
        #expect(try await found("\"buy iphone\"") == [texts[7]], "a phrase reaching into the CJK")
        #expect(try await found("iphoneを") == [texts[0], texts[7]], "a term of both is a substring")
        let hit = try #require(try await SearchConformanceTests.search(searches.world.store, "english", as: searches.world.grace).first)
        #expect(hit.matches == [TextRange(start: 8, length: 7)], "the glued word is highlighted")
    }

    /// An edit and a delete remove what was indexed for the glued words (SQLite's index is
    /// contentless: a removal must give the very text it added).
    @Test(arguments: StoreBackend.all)
    func editsAndDeletesOfGluedWordsLeaveNothingBehind(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let first = try await world.store.send("iPhoneを買いました", from: world.ada.id, to: .conversation(world.direct)).message
        let second = try await world.store.send("서울에서 iPhone을 샀어", from: world.ada.id, to: .conversation(world.direct)).message
        _ = try await world.act(world.ada, first.seq, .edit("Androidを買いました"))
        _ = try await world.act(world.ada, second.seq, .delete)
        func found(_ q: String) async throws -> [String] { try await SearchConformanceTests.search(world.store, q, as: world.grace).map(\.text) }
        #expect(try await found("iphone").isEmpty, "neither the edited nor the deleted message")
        #expect(try await found("android") == ["Androidを買いました"])
        #expect(try await found("買い") == ["Androidを買いました"])
    }

    @Test(arguments: StoreBackend.all)
    func aWordIsAPrefixAndAPhraseIsAsWritten(backend: StoreBackend) async throws {
        let texts = ["pizza party tonight", "a pizzeria downtown", "the piazza", "spitz dog", "Über-cool PLT-3699 db.json"]
        let searches = try await GraceSearches(backend, afterAdaSent: texts)
        let found = searches.found
        #expect(try await found("piz") == [texts[0], texts[1]], "the start of a word, from three characters, as one types")
        #expect(try await found("pizza") == [texts[0]])
        #expect(try await found("pizz tonig") == [texts[0]], "every word a prefix, all required")
        #expect(try await found("itz").isEmpty, "a word's start, not its middle")
        #expect(try await found("\"piz\"").isEmpty, "a quoted word is a whole word")
        #expect(try await found("\"pizza party\"") == [texts[0]])
        #expect(try await found("\"pizza par\"").isEmpty)
        #expect(try await found("ube") == [texts[4]], "folded first")
        #expect(try await found("db.jso") == [texts[4]], "the last part of a word with punctuation")
        #expect(try await found("PLT-369") == [texts[4]])
        #expect(try await found("pi").isEmpty, "under three characters a word is whole: a shorter start finds most messages")
        #expect(try await found("db.js").isEmpty)
        for written in ["’piz’", "piz*", "piz'", "piz\\", "'piz", "piz:*", "piz&!", "pi'z"] {
            _ = try await found(written)  // never query syntax, never an error
        }
        #expect(try await found("’piz’") == [texts[0], texts[1]], "quotes around a word are not searched for")
        let hit = try #require(try await SearchConformanceTests.search(searches.world.store, "piz", as: searches.world.grace).last)
        #expect(hit.matches == [TextRange(start: 0, length: 3)], "the typed start is highlighted")
        var relevance = try SearchQuery.parse("pizz")
        relevance.order = .relevance
        #expect(try await searches.world.store.search(relevance, as: searches.world.grace.id, limit: 5, offset: 0).count == 2)
    }

    /// Words are runs of letters and digits on every backend: a part of a word with punctuation is
    /// found by itself, and the whole as a phrase. Greek's final sigma is σ, whatever the case.
    @Test(arguments: StoreBackend.all)
    func punctuationSplitsWordsAndFinalSigmaIsSigma(backend: StoreBackend) async throws {
        let texts = [
            "open db.json now", "mail john.doe@example.com today", "ticket PLT-3699 done", "see https://example.org/path?x=1",
            "ΣΟΦΙΑ σοφίας", "ο λόγος είναι σοφός", "release v2.0.1 out", "report_final_v2.pdf attached",
        ]
        let searches = try await GraceSearches(backend, afterAdaSent: texts)
        let found = searches.found
        for (query, index) in [
            ("json", 0), ("db.json", 0), ("\"db json\"", 0), ("doe", 1), ("example.com", 1), ("john.doe@exa", 1), ("3699", 2), ("PLT-3699", 2),
            ("org", 3), ("path", 3), ("example.org/path", 3), ("σοφίας", 4), ("σοφιας", 4), ("ΣΟΦΙΑΣ", 4), ("λόγος", 5), ("ΛΟΓΟΣ", 5), ("λογο", 5),
            ("v2.0", 6), ("final", 7), ("pdf", 7),
        ] {
            #expect(try await found(query) == [texts[index]], "\(query)")
        }
        #expect(try await found("σοφ") == [texts[4], texts[5]])
    }

    /// What is marked is what was found: a whole word where the query is one, the start of a word
    /// where it is a prefix, never the inside of another word.
    @Test(arguments: StoreBackend.all)
    func matchesMarkWordsNotTheInsideOfOthers(backend: StoreBackend) async throws {
        let searches = try await GraceSearches(backend, afterAdaSent: ["pi and pizza and pie", "pizza, pizzeria, spitz and pizzas", "mixed日本語English"])
        func marked(_ q: String) async throws -> [[String]] {
            try await SearchConformanceTests.search(searches.world.store, q, as: searches.world.grace).map { hit in
                let utf16 = Array(hit.text.utf16)
                return hit.matches.map { String(decoding: utf16[$0.start..<$0.start + $0.length], as: UTF16.self) }
            }
        }
        #expect(try await marked("pi") == [["pi"]], "a short word is whole")
        #expect(try await marked("\"pizza\"") == [["pizza"], ["pizza"]], "a phrase is whole words")
        #expect(try await marked("piz") == [["piz", "piz", "piz"], ["piz"]], "the starts, not spitz")
        #expect(try await marked("english") == [["English"]])
    }

    /// Letters with a stroke or joined are their plain letters on every backend, as PostgreSQL's
    /// `unaccent` has them (``SearchText/unaccentedLetters``), and what found them is marked.
    @Test(arguments: StoreBackend.all)
    func lettersWithAStrokeOrJoinedAreTheirPlainLetters(backend: StoreBackend) async throws {
        let texts = [
            "Spotkanie w Łodzi jutro", "Ærøskøbing er smuk", "Œuvre complète", "ırmak kenarı", "Đorđe stiže sutra", "Þórsmörk trip",
            "Straße gesperrt", "Møller & Sønner",
        ]
        let searches = try await GraceSearches(backend, afterAdaSent: texts)
        let found = searches.found
        for (query, index) in [
            ("lodzi", 0), ("ŁODZI", 0), ("łódź", 0), ("aeroskobing", 1), ("ærøskøbing", 1), ("oeuvre", 2), ("œuvre", 2), ("irmak", 3),
            ("IRMAK", 3), ("kenari", 3), ("dorde", 4), ("đorđe", 4), ("thorsmork", 5), ("strasse", 6), ("straße", 6), ("moller", 7),
            ("sonner", 7), ("\"moller sonner\"", 7),
        ] {
            #expect(try await found(query) == [texts[index]], "\(query)")
        }
        #expect(try await found("aero") == [texts[1]], "Æ is two letters: the start of a word")
        #expect(try await found("lod") == [texts[0]])
        func marked(_ q: String) async throws -> [String] {
            try await SearchConformanceTests.search(searches.world.store, q, as: searches.world.grace).flatMap { hit in
                let utf16 = Array(hit.text.utf16)
                return hit.matches.map { String(decoding: utf16[$0.start..<$0.start + $0.length], as: UTF16.self) }
            }
        }
        #expect(try await marked("lodzi") == ["Łodzi"])
        #expect(try await marked("aero") == ["Ærø"], "what the typed start folds from")
        #expect(try await marked("sonner") == ["Sønner"])
    }

    /// Letters of their own keep their mark on every backend (``SearchText/keptLetters``): Cyrillic
    /// й is not и, ї is not і, ў is not у; ё is е, as people type it.
    @Test(arguments: StoreBackend.all)
    func lettersOfTheirOwnKeepTheirMark(backend: StoreBackend) async throws {
        let texts = ["Это мой дом", "Это мои дома", "Купи ЙОГУРТ и чай", "Ёлка уже стоит", "Їжак і заєць", "Ўсё добра"]
        let searches = try await GraceSearches(backend, afterAdaSent: texts)
        let found = searches.found
        for (query, expected) in [
            ("мой", [texts[0]]), ("мои", [texts[1]]), ("\"мой дом\"", [texts[0]]), ("йогурт", [texts[2]]), ("иогурт", []), ("чай", [texts[2]]),
            ("чаи", []), ("елка", [texts[3]]), ("ёлка", [texts[3]]), ("їжак", [texts[4]]), ("іжак", []), ("ўсё", [texts[5]]), ("усе", []),
        ] {
            #expect(try await found(query) == Set(expected), "\(query)")
        }
        let both = try await GraceSearches(backend, afterAdaSent: ["мои книги и мой дом"])
        let hit = try #require(try await SearchConformanceTests.search(both.world.store, "мой", as: both.world.grace).first)
        #expect(hit.matches == [TextRange(start: 12, length: 3)], "мой is marked, not мои")
    }

    /// Migration v17 writes again the word index of messages indexed before it, which an edit must
    /// then be able to remove.
    @Test func sqliteMigrationSpacesWhatWasIndexedBefore() async throws {
        let path = WALCheckpointerTests.temporaryPath()
        let store = try SQLiteStore(path: path, durability: .normal)
        let ada = try await store.makeUser("ada"), grace = try await store.makeUser("grace")
        let glued = try await store.send("iPhoneを買いました", from: ada.id, to: .user(grace.id)).message
        _ = try await store.send("plain iphone talk", from: ada.id, to: .user(grace.id))
        try await store.close()
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in  // as v16 left it: the folded text, unspaced
            let rowid = try Int64.fetchOne(db, sql: "SELECT rowid FROM messages WHERE text = ?", arguments: [glued.text])
            let folded = SearchText.fold(glued.text)
            try db.execute(
                sql: "INSERT INTO message_search (message_search, rowid, text) VALUES ('delete', ?, ?)",
                arguments: [rowid, SearchText.wordIndexText(folded)])
            try db.execute(sql: "INSERT INTO message_search (rowid, text) VALUES (?, ?)", arguments: [rowid, folded])
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v17-search-word-boundaries'")
            let matching = try Int.fetchOne(db, sql: "SELECT count(*) FROM message_search WHERE message_search MATCH 'iphone'")
            #expect(matching == 1, "before the migration the glued word is not a word")
        }
        try queue.close()
        func found(_ store: SQLiteStore, _ q: String) async throws -> [String] {
            try await store.search(try SearchQuery.parse(q), as: grace.id, limit: 20, offset: 0).map(\.text)
        }
        let old = try SQLiteStore(path: path, durability: .normal)
        #expect(try await found(old, "iphone") == ["plain iphone talk", "iPhoneを買いました"], "migrated on opening")
        let edit = NewMessageAction(actor: ada.id, clientId: .random(), conversation: glued.conversationId, seq: glued.seq, change: .edit("Androidを"))
        _ = try await old.act(edit, now: .now())
        #expect(try await found(old, "iphone") == ["plain iphone talk"], "the migrated entry removed by the edit")
        try await old.close()
    }
}
