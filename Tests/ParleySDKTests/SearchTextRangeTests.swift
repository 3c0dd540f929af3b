import Foundation
import ParleySDK
import ParleyCore
import Synchronization
import Testing

/// `SearchHit`'s UTF-16 match ranges as ranges of its text (rule 3 of `ParleyClient+Search.swift`),
/// and the query's encoding on the wire.
@Suite struct SearchTextRangeTests {
    func hit(_ text: String, _ matches: [(Int, Int)]) -> SearchHit {
        SearchHit(
            conversationId: ConversationID(rawValue: "grp_test"), seq: 1, senderId: .random(), createdAt: Timestamp(milliseconds: 0), text: text,
            matches: matches.map { TextRange(start: $0.0, length: $0.1) })
    }

    func matched(_ text: String, _ start: Int, _ length: Int) -> String? {
        let hit = hit(text, [(start, length)])
        return hit.characterRange(of: hit.matches[0]).map { String(hit.text[$0]) }
    }

    @Test func plainAccentedAndCJKTextMapOneToOne() {
        #expect(matched("a café au lait", 2, 4) == "café")
        #expect(matched("東京タワーへ行く", 0, 2) == "東京")
        #expect(matched("東京タワーへ行く", 1, 1) == "京")
        #expect(matched("한국어 공부", 0, 3) == "한국어")
    }

    @Test func emojiCountTwoUnitsAndAMatchAfterOneLandsRight() {
        // "👍" is a surrogate pair: "ok" starts at UTF-16 offset 3.
        #expect(matched("👍 ok", 3, 2) == "ok")
        #expect(matched("👍 ok", 0, 2) == "👍")
        // A family emoji is one character of 8 code units.
        #expect(matched("👨‍👩‍👧 family", 9, 6) == "family")
    }

    @Test func aRangeInsideASurrogatePairOrACombiningMarkTakesTheWholeCharacter() {
        #expect(matched("x👍y", 2, 1) == "👍", "starts on the low surrogate")
        #expect(matched("x👍y", 1, 1) == "👍", "ends on the high surrogate")
        // "e" + U+0301 COMBINING ACUTE: a match of the bare "e" (accents folded) shows the whole "é".
        #expect(matched("cafe\u{301} noir", 3, 1) == "e\u{301}")
        #expect(matched("cafe\u{301} noir", 0, 4) == "cafe\u{301}")
        #expect(matched("🇫🇷 paris", 2, 1) == "🇫🇷", "inside a flag")
    }

    @Test func badRangesAreClampedOrDroppedNeverACrash() {
        #expect(matched("hello", 3, 100) == "lo", "past the end: clamped")
        #expect(matched("hello", -2, 4) == "he", "before the start: clamped")
        #expect(matched("hello", 5, 1) == nil, "at the end")
        #expect(matched("hello", 50, 1) == nil)
        #expect(matched("hello", 1, 0) == nil, "empty")
        #expect(matched("hello", 1, -3) == nil, "negative length")
        #expect(matched("hello", Int.max, Int.max) == nil, "overflow")
        #expect(matched("hello", Int.min, Int.max) == nil)
        #expect(matched("", 0, 1) == nil)
    }

    @Test func segmentsAlternateAndMergeOverlappingMatches() {
        let segments = hit("café and CAFÉ", [(9, 4), (0, 4), (1, 2)]).segments
        #expect(segments.map(\.text) == ["café", " and ", "CAFÉ"])
        #expect(segments.map(\.isMatch) == [true, false, true])
        #expect(hit("nothing", []).segments == [SearchHit.Segment(text: "nothing", isMatch: false)])
        #expect(hit("bad", [(7, 2)]).segments == [SearchHit.Segment(text: "bad", isMatch: false)])
    }

    /// A long message shows 200 characters around its first match, "…" where text is left out;
    /// characters, not UTF-16 units (the emoji before the match count once each).
    @Test func aLongTextIsCutAroundItsFirstMatch() {
        let text = String(repeating: "🙂", count: 1_000) + "needle" + String(repeating: "x", count: 2_000)
        let snippet = hit(text, [(2_000, 6)]).snippet()
        #expect(snippet.map(\.text) == ["…", Substring(String(repeating: "🙂", count: 50)), "needle", Substring(String(repeating: "x", count: 144)), "…"])
        #expect(snippet.map(\.isMatch) == [false, false, true, false, false])
        let early = hit("needle " + String(repeating: "y", count: 300), [(0, 6)]).snippet()
        #expect(early.map(\.text) == ["needle", Substring(" " + String(repeating: "y", count: 193)), "…"], "no lead before the start")
        let late = hit(String(repeating: "z", count: 300) + " needle", [(301, 6)]).snippet()
        #expect(late.first?.text == "…" && late.last?.text == "needle" && late.map(\.text.count).reduce(0, +) == 201, "the last 200, not past the end")
        #expect(hit("short needle", [(6, 6)]).snippet() == hit("short needle", [(6, 6)]).segments)
    }

    @Test func theQueryIsPercentEncodedWhole() async throws {
        let requester = RecordingRequester()
        let api = HTTPParleyAPI(baseURL: URL(string: "http://127.0.0.1:1/")!, requester: requester)
        let query = "a+b & c=d #1 \"quoted\" 100% 東京 café/é?"
        _ = try await api.search(query: query, order: .relevance, limit: 5, cursor: "x+y/z=", token: "t")
        let url = try #require(requester.urls.withLock { $0.first })
        let items = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems)
        #expect(url.path == "/v1/search")
        #expect(items.first { $0.name == "q" }?.value == query)
        #expect(items.first { $0.name == "order" }?.value == "relevance")
        #expect(items.first { $0.name == "limit" }?.value == "5")
        #expect(items.first { $0.name == "cursor" }?.value == "x+y/z=")
        #expect(!url.absoluteString.contains("+"), "a literal + would read as a space")
        #expect(url.absoluteString.contains("q=a%2Bb%20%26%20c%3Dd%20%231%20%22quoted%22%20100%25%20%E6%9D%B1"))
    }
}

/// Records the URLs asked and answers an empty page.
final class RecordingRequester: HTTPRequester {
    let urls = Mutex<[URL]>([])
    func send(_ method: String, _ url: URL, headers: [String: String], body: Data?) async throws -> (status: Int, body: Data) {
        urls.withLock { $0.append(url) }
        return (200, Data(#"{"results":[]}"#.utf8))
    }
}
