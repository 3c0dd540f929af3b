import ParleyCore
import ParleyStore
import Testing

/// docs/protocol.md "Search", rule by rule, on every backend: same queries, same answers.
@Suite struct SearchConformanceTests {
    static func search(_ store: any ParleyStore, _ q: String, as user: User, limit: Int = 50, offset: Int = 0) async throws -> [SearchHit] {
        try await store.search(try SearchQuery.parse(q), as: user.id, limit: limit, offset: offset)
    }

    /// A group of Ada's with Grace, who writes `before`, then Alan is added (no shared history), she
    /// writes `during`, he is removed, she writes `after`.
    static func graceWritesWhileAlanComesAndGoes(_ world: ActionWorld, before: String, during: String, after: String) async throws {
        let group = try await world.group(with: [world.grace.id])
        _ = try await world.store.send(before, from: world.grace.id, to: .conversation(group))
        _ = try await world.store.changeGroup(
            MembershipChange(
                actor: world.ada.id, clientId: .random(), conversation: group, action: .add([world.alan.id], shareHistory: false), maxMembers: 256),
            now: .now())
        _ = try await world.store.send(during, from: world.grace.id, to: .conversation(group))
        _ = try await world.store.changeGroup(
            MembershipChange(actor: world.ada.id, clientId: .random(), conversation: group, action: .remove(world.alan.id), maxMembers: 256),
            now: .now())
        _ = try await world.store.send(after, from: world.grace.id, to: .conversation(group))
    }

    @Test(arguments: StoreBackend.all)
    func hasFileKeepsMessagesWithFilesAndAloneFindsThemAll(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        func file(_ caption: String) async throws -> SendOutcome {
            let id = UploadID.random()
            try await world.store.createUpload(
                NewUpload(id: id, owner: world.ada.id, name: "b.jpg", length: 1, sha256: nil, expiresAt: Timestamp.now().adding(seconds: 3600)),
                quota: 1 << 20, now: .now())
            _ = try await world.store.completeUpload(
                id, owner: world.ada.id, UploadReading(blob: String(repeating: "e", count: 64), mimeType: "image/jpeg", kind: .image), now: .now())
            return try await world.store.send(
                NewMessage(
                    sender: world.ada.id, clientId: .random(), target: .user(world.grace.id), text: caption, attachments: [AttachmentRequest(uploadId: id)]),
                now: .now())
        }
        _ = try await world.store.send("beach plans", from: world.ada.id, to: .user(world.grace.id))
        let captioned = try await file("beach day")
        let bare = try await file("")
        let gone = try await file("beach again")
        _ = try await world.act(world.ada, gone.message.seq, .delete)
        #expect(try await Self.search(world.store, "beach has:file", as: world.grace).map(\.seq) == [captioned.message.seq])
        #expect(try await Self.search(world.store, "has:file", as: world.grace).map(\.seq) == [bare.message.seq, captioned.message.seq])
        #expect(try await Self.search(world.store, "has:file", as: world.eve).isEmpty, "not her conversation")
        #expect(try await Self.search(world.store, "beach", as: world.grace).count == 2)
    }

    @Test(arguments: StoreBackend.all)
    func anyScriptIsFoundAndMatchesAreUTF16Ranges(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let chat = ConversationID.direct(world.ada.id, world.grace.id)
        let texts = [
            "Meet at the Café Crème at noon", "config lives in db.json now", "see ticket PLT-3699 please", "mail ada@example.com 👍🏽 ok",
            "東京で会いましょう", "한국어 공부", "the quick brown fox", "a brown dog, quick as ever", "どうもありがとうございます",
        ]
        for text in texts { _ = try await world.store.send(text, from: world.ada.id, to: .conversation(chat)) }
        func found(_ q: String) async throws -> [String] { try await Self.search(world.store, q, as: world.grace).map(\.text) }
        #expect(try await found("cafe creme") == [texts[0]], "accents and case folded")
        #expect(try await found("CAFÉ") == [texts[0]])
        #expect(try await found("db.json") == [texts[1]])
        #expect(try await found("PLT-3699") == [texts[2]])
        #expect(try await found("ada@example.com") == [texts[3]])
        #expect(try await found("東京") == [texts[4]], "two CJK characters")
        #expect(try await found("京") == [texts[4]], "one CJK character")
        #expect(try await found("会いましょう") == [texts[4]], "CJK through the trigram index")
        for pasted in ["東京。", "東京?", "「東京」", "東京！", "東京、会い", "\"東京で会い。\"", "会いましょう？"] {
            #expect(try await found(pasted) == [texts[4]], "punctuation around CJK is not searched for: \(pasted)")
        }
        #expect(try await found("東京、한국어").isEmpty, "a word's parts are all required")
        #expect(try await found("한국어") == [texts[5]])
        #expect(try await found("ありがとう") == [texts[8]], "kana keep their voicing marks")
        #expect(try await found("ありかとう").isEmpty, "か is not が")
        #expect(try await found("が") == [texts[8]])
        #expect(try await found("quick brown") == [texts[7], texts[6]], "both words, newest first")
        #expect(try await found("quick\tbrown") == [texts[7], texts[6]])
        #expect(try await found("\"quick brown\"") == [texts[6]], "a phrase as written")
        #expect(try await found("nothing-like-this").isEmpty)
        let hit = try #require(try await Self.search(world.store, "ok", as: world.grace).first)
        let utf16 = Array(hit.text.utf16)
        #expect(hit.matches.map { String(decoding: utf16[$0.start..<$0.start + $0.length], as: UTF16.self) } == ["ok"], "offsets count UTF-16")
        let cafe = try #require(try await Self.search(world.store, "cafe", as: world.grace).first)
        #expect(cafe.matches == [TextRange(start: 12, length: 4)], "the written 'Café' is highlighted")
    }

    @Test(arguments: StoreBackend.all)
    func onlyWhatTheUserCanReadAndNothingDeletedOrHidden(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let chat = ConversationID.direct(world.ada.id, world.grace.id)
        let secret = try await world.store.send("pineapple plans", from: world.ada.id, to: .conversation(chat)).message
        #expect(try await Self.search(world.store, "pineapple", as: world.eve).isEmpty, "a stranger finds nothing")
        #expect(try await Self.search(world.store, "pineapple", as: world.grace).count == 1)
        _ = try await world.act(world.ada, secret.seq, .edit("mango plans"))
        #expect(try await Self.search(world.store, "pineapple", as: world.grace).isEmpty, "an edit replaces what is found")
        #expect(try await Self.search(world.store, "mango", as: world.grace).count == 1)
        _ = try await world.act(world.grace, secret.seq, .hide)
        #expect(try await Self.search(world.store, "mango", as: world.grace).isEmpty, "hidden for me")
        #expect(try await Self.search(world.store, "mango", as: world.ada).count == 1)
        _ = try await world.act(world.ada, secret.seq, .delete)
        #expect(try await Self.search(world.store, "mango", as: world.ada).isEmpty, "deleted for everyone")
        // A group: nothing from before joining (no shared history), nothing after leaving.
        try await Self.graceWritesWhileAlanComesAndGoes(world, before: "before alan kiwi", during: "during alan kiwi", after: "after alan kiwi")
        #expect(try await Self.search(world.store, "kiwi", as: world.alan).map(\.text) == ["during alan kiwi"])
        #expect(try await Self.search(world.store, "kiwi", as: world.grace).count == 3)
    }

    /// Best match first, the same on every backend: a message that is mostly the word before a long
    /// one that mentions it once, and equal matches newest first.
    @Test(arguments: StoreBackend.all)
    func bestMatchFirstWeighsLengthAndPutsTiesNewestFirst(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let chat = ConversationID.direct(world.ada.id, world.grace.id)
        let base = Timestamp.now().milliseconds
        let texts = [
            "lime 0", "kumquat", "lime 1", "a long note that says many things about the market and kumquat once among them all", "lime 2",
        ]
        for (index, text) in texts.enumerated() {
            _ = try await world.store.send(text, from: world.ada.id, to: .conversation(chat), at: Timestamp(milliseconds: base + Int64(index) * 1000))
        }
        func best(_ q: String) async throws -> [String] {
            var query = try SearchQuery.parse(q)
            query.order = .relevance
            return try await world.store.search(query, as: world.grace.id, limit: 5, offset: 0).map(\.text)
        }
        #expect(try await best("kumquat").first == "kumquat")
        #expect(try await best("lime") == ["lime 2", "lime 1", "lime 0"])
    }

    @Test(arguments: StoreBackend.all)
    func filtersOrderPagesAndHostileInput(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let chat = ConversationID.direct(world.ada.id, world.grace.id)
        let other = ConversationID.direct(world.ada.id, world.alan.id)
        let base = Timestamp.now().milliseconds
        for index in 0..<5 {
            _ = try await world.store.send(
                "report \(index)", from: world.ada.id, to: .conversation(chat), at: Timestamp(milliseconds: base + Int64(index) * 1000))
        }
        _ = try await world.store.send("report from grace", from: world.grace.id, to: .conversation(chat), at: Timestamp(milliseconds: base + 10_000))
        _ = try await world.store.send("report to alan", from: world.ada.id, to: .conversation(other), at: Timestamp(milliseconds: base + 11_000))
        #expect(try await Self.search(world.store, "report from:grace", as: world.ada).map(\.text) == ["report from grace"])
        #expect(try await Self.search(world.store, "report from:nobody", as: world.ada).isEmpty)
        #expect(try await Self.search(world.store, "report in:\(other.rawValue)", as: world.ada).map(\.text) == ["report to alan"])
        #expect(try await Self.search(world.store, "report before:\(base + 1500) after:\(base + 500)", as: world.ada).map(\.text) == ["report 1"])
        let first = try await Self.search(world.store, "report", as: world.ada, limit: 3)
        let second = try await Self.search(world.store, "report", as: world.ada, limit: 3, offset: 3)
        #expect(first.map(\.text) == ["report to alan", "report from grace", "report 4"])
        #expect(second.map(\.text) == ["report 3", "report 2", "report 1"])
        var relevance = try SearchQuery.parse("report grace")
        relevance.order = .relevance
        #expect(try await world.store.search(relevance, as: world.ada.id, limit: 5, offset: 0).map(\.text) == ["report from grace"])
        for hostile in [
            "\"", "*", "NEAR", "-", "^", "(", ")", "report\"", "\"unbalanced report", "NEAR(report grace)", "report AND OR NOT",
            "report*", "-report", "^report", "col:report", "%", "_", "\\", "'; DROP TABLE messages; --", String(repeating: "x", count: 1000),
            String(repeating: "東", count: 1000), "🙂", "",
        ] {
            _ = try await Self.search(world.store, hostile, as: world.ada)
        }
        #expect(try await Self.search(world.store, "\"unbalanced report", as: world.ada).isEmpty, "an unbalanced quote is a phrase to the end")
        #expect(try await Self.search(world.store, "report", as: world.ada).count == 7, "the messages are all still there")
        #expect(throws: Validation.Failure.self) { try SearchQuery.parse(String(repeating: "x", count: 1001)) }
        #expect(throws: Validation.Failure.self) { try SearchQuery.parse("before:yesterday") }
    }

    /// CJK through each path: a term of one or two characters through the grams index, a longer
    /// one through the trigram index, both whatever its age (more than a page of messages
    /// since); a term mixing CJK and Latin folds its Latin; membership rules hold on every path.
    @Test(arguments: StoreBackend.all)
    func cjkPathsFindAnyAgeFoldAndFollowMembership(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let chat = ConversationID.direct(world.ada.id, world.grace.id)
        _ = try await world.store.send("古い写真を見つけた", from: world.ada.id, to: .conversation(chat))
        _ = try await world.store.send("Meet at Café東京", from: world.ada.id, to: .conversation(chat))
        _ = try await world.store.send("Tickets for Café東京駅", from: world.ada.id, to: .conversation(chat))
        for index in 0..<250 {
            _ = try await world.store.send("filler \(index)", from: world.grace.id, to: .conversation(chat))
        }
        _ = try await world.store.send("新しい写真です", from: world.ada.id, to: .conversation(chat))
        func found(_ q: String, as user: User) async throws -> [String] { try await Self.search(world.store, q, as: user).map(\.text) }
        #expect(try await found("写真", as: world.grace) == ["新しい写真です", "古い写真を見つけた"], "two characters: any age")
        #expect(try await found("古", as: world.grace) == ["古い写真を見つけた"], "one character: any age")
        #expect(try await found("写真を見", as: world.grace) == ["古い写真を見つけた"], "three or more: any age")
        #expect(try await found("e東", as: world.grace) == ["Tickets for Café東京駅", "Meet at Café東京"], "a pair of Latin and CJK")
        #expect(try await found("駅 写", as: world.grace).isEmpty, "every short term in one message")
        #expect(try await found("京駅 tickets", as: world.grace) == ["Tickets for Café東京駅"], "a short term beside a word")
        #expect(try await found("cafe東京", as: world.grace) == ["Tickets for Café東京駅", "Meet at Café東京"], "Latin folded beside CJK")
        #expect(try await found("cafe東京駅", as: world.grace) == ["Tickets for Café東京駅"], "and beside three or more CJK characters")
        #expect(try await found("写真 in:\(chat.rawValue)", as: world.eve).isEmpty, "not a member")

        try await Self.graceWritesWhileAlanComesAndGoes(world, before: "前の会議の写真", during: "中の会議の写真", after: "後の会議の写真")
        #expect(try await found("会議", as: world.alan) == ["中の会議の写真"], "short CJK inside the span")
        #expect(try await found("会議の写真", as: world.alan) == ["中の会議の写真"], "long CJK inside the span")
        #expect(try await found("会議", as: world.grace).count == 3)
    }

    /// Half-width katakana, full-width Latin: found whichever width is stored or typed, on each backend.
    @Test(arguments: StoreBackend.all)
    func widthsAreFoldedOnBothSides(backend: StoreBackend) async throws {
        let texts = ["ｶﾀｶﾅ半角", "ﾊﾟｰﾃｨｰは明日", "カタカナ全角", "ＰＡＲＴＹ ｔｉｍｅ", "\u{F900}の字"]
        let searches = try await GraceSearches(backend, afterAdaSent: texts)
        let found = searches.found
        for query in ["パーティー", "ﾊﾟｰﾃｨｰ"] {
            let hits = try await Self.search(searches.world.store, query, as: searches.world.grace)
            #expect(hits.map(\.matches) == [[TextRange(start: 0, length: 6)]], "\(query): highlighted where the half-width text is (6 UTF-16 units)")
        }
        #expect(try await found("ｶﾀｶﾅ半角") == [texts[0]], "the exact half-width text")
        #expect(try await found("カタカナ半角") == [texts[0]], "half-width stored, full-width typed")
        #expect(try await found("ｶﾀｶﾅ") == [texts[0], texts[2]], "four characters, either width")
        #expect(try await found("ｶﾀ") == [texts[0], texts[2]], "two characters, either width")
        #expect(try await found("パーティー") == [texts[1]], "voiced marks composed")
        #expect(try await found("ﾊﾟｰﾃｨｰ") == [texts[1]])
        #expect(try await found("party") == [texts[3]], "full-width Latin")
        #expect(try await found("ｐａｒｔｙ") == [texts[3]])
        #expect(try await found("\u{8C48}") == [texts[4]], "a compatibility ideograph found by its unified one")
        #expect(try await found("\u{F900}の") == [texts[4]])
    }

    /// Compatibility forms (NFKC) are folded to their plain forms on every backend, and what they
    /// turn into CJK keeps its marks: ㌀ is アパート, not アハート.
    @Test(arguments: StoreBackend.all)
    func compatibilityFormsAreFoldedOnBothSides(backend: StoreBackend) async throws {
        let texts = ["item ② done", "the ﬁnal draft", "㍻の記録", "㌀の三階", "x² is x squared", "초성 ㄱ 쓰기"]
        let searches = try await GraceSearches(backend, afterAdaSent: texts)
        let found = searches.found
        #expect(try await found("2") == [texts[0]], "a circled digit is its digit")
        let circled = try await SearchConformanceTests.search(searches.world.store, "2", as: searches.world.grace)
        #expect(circled.map(\.matches) == [[TextRange(start: 5, length: 1)]], "and highlighted")
        #expect(try await found("②") == [texts[0]])
        let dollar = try await SearchConformanceTests.search(searches.world.store, "$2", as: searches.world.grace)
        #expect(dollar.map(\.matches) == [[TextRange(start: 5, length: 1)]], "its word found through the fold is highlighted too")
        #expect(try await found("final") == [texts[1]], "a ligature is its letters")
        #expect(try await found("ﬁnal") == [texts[1]])
        #expect(try await found("平成") == [texts[2]], "a square era name is its characters (a short search)")
        #expect(try await found("平成の記録") == [texts[2]], "and through the trigram index")
        #expect(try await found("㍻") == [texts[2]])
        #expect(try await found("アパート") == [texts[3]], "its voiced mark kept")
        #expect(try await found("アハート").isEmpty)
        #expect(try await found("x2") == [texts[4]], "a superscript is its digit")
        #expect(try await found("ㄱ") == [texts[5]], "a compatibility jamo, one character (U+1100 once folded)")
    }

    /// Hangul written decomposed (conjoining jamo, as macOS file names and some keyboards give it) and
    /// composed find each other, in short searches (read message by message) and long ones (indexed).
    @Test(arguments: StoreBackend.all)
    func decomposedHangulIsFoundByComposedSearchesAndTheOtherWayRound(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let chat = ConversationID.direct(world.ada.id, world.grace.id)
        let decomposed = "\u{1112}\u{1161}\u{11AB}\u{1100}\u{116E}\u{11A8}\u{110B}\u{1165} 공부"  // 한국어 공부, as jamo
        let composed = "서울에서 한국어 수업"
        for text in [decomposed, composed] { _ = try await world.store.send(text, from: world.ada.id, to: .conversation(chat)) }
        func found(_ q: String) async throws -> [String] { try await Self.search(world.store, q, as: world.grace).map(\.text).sorted() }
        let both = [composed, decomposed].sorted()
        #expect(try await found("한국") == both, "two characters, composed")
        #expect(try await found("한국어") == both, "three characters, composed")
        #expect(try await found("\u{1112}\u{1161}\u{11AB}\u{1100}\u{116E}\u{11A8}") == both, "two characters, decomposed")
        #expect(try await found("수업") == [composed])
    }
}

/// Ada has sent some texts to Grace; what Grace's searches find, as a set of texts.
struct GraceSearches {
    let world: ActionWorld

    init(_ backend: StoreBackend, afterAdaSent texts: [String]) async throws {
        world = try await ActionWorld(backend)
        for text in texts { _ = try await world.store.send(text, from: world.ada.id, to: .conversation(world.direct)) }
    }

    func found(_ q: String) async throws -> Set<String> {
        Set(try await SearchConformanceTests.search(world.store, q, as: world.grace).map(\.text))
    }
}
