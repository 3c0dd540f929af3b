import Foundation
import ParleySDK
import ParleyCore
import ParleyViewModels
import Synchronization
import Testing

/// One test per rule of `SearchViewModel.swift`, on fakes, with the debounce's wait in the test's
/// hands (no real sleeps).
@MainActor
@Suite struct SearchViewModelTests {
    let fixture = GroupFixture()
    let sleeper = ManualSleeper()

    /// A search over a client that knows the direct chat with Grace and the group "Trip".
    func makeSearch() async throws -> SearchViewModel {
        fixture.api.conversationList = [fixture.summary(), fixture.base.summary()]
        let client = try fixture.base.makeClient()
        _ = try await fixture.base.connect(client)
        _ = try await eventually("both conversations") { client.conversations.count == 2 ? true : nil }
        let sleeper = sleeper
        return SearchViewModel(client: client, sleep: { try await sleeper.sleep($0) })
    }

    func hit(_ conversation: ConversationID, _ seq: Int64, from sender: User, _ text: String, match: (Int, Int) = (0, 1)) -> SearchHit {
        SearchHit(
            conversationId: conversation, seq: seq, senderId: sender.id, createdAt: Timestamp(milliseconds: 1000 * seq), text: text,
            matches: [TextRange(start: match.0, length: match.1)])
    }

    @Test func rule1_typingSearchesOnceAfterThePauseAndSubmitSearchesAtOnce() async throws {
        let search = try await makeSearch()
        fixture.api.searchAnswer = { query, _, _ in API.SearchResults(results: [hit(fixture.base.conversation, 1, from: fixture.grace, query)], nextCursor: nil)
        }
        for prefix in ["c", "ca", "caf", "café"] { search.query = prefix }
        _ = try await eventually("the waits") { sleeper.waiting == 4 ? true : nil }
        #expect(fixture.api.searches.isEmpty && search.state == .idle, "nothing asked while typing")
        sleeper.fire()
        _ = try await eventually("the search") { search.state == .loaded ? true : nil }
        #expect(fixture.api.searches.map(\.query) == ["café"], "one request, for the last text")
        #expect(search.debounce == .milliseconds(300))

        search.query = "café au lait"
        await search.submit()
        #expect(fixture.api.searches.map(\.query) == ["café", "café au lait"] && search.hits.map(\.text) == ["café au lait"])
        sleeper.fire()
        try await Task.sleep(for: .milliseconds(20))
        #expect(fixture.api.searches.count == 2, "submit cancelled the pending wait")
    }

    @Test func rule2_anEmptyQueryClearsWithoutAsking() async throws {
        let search = try await makeSearch()
        fixture.api.searchAnswer = { _, _, _ in API.SearchResults(results: [hit(fixture.base.conversation, 1, from: fixture.grace, "x")], nextCursor: "more") }
        search.query = "x"
        await search.submit()
        #expect(search.state == .loaded && search.canLoadMore)
        search.query = "   "
        #expect(search.state == .idle && search.hits.isEmpty && !search.canLoadMore)
        await search.submit()
        #expect(fixture.api.searches.count == 1 && search.state == .idle)
    }

    @Test func rule3_anAnswerToAnEarlierQueryIsDropped() async throws {
        let search = try await makeSearch()
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        fixture.api.searchAnswer = { query, _, _ in
            if query == "old" { for await _ in gate { break } }
            return API.SearchResults(results: [hit(fixture.base.conversation, 1, from: fixture.grace, query)], nextCursor: nil)
        }
        search.query = "old"
        let slow = Task { await search.submit() }
        _ = try await eventually("the slow search") { search.state == .loading ? true : nil }
        search.query = "new"
        await search.submit()
        #expect(search.hits.map(\.text) == ["new"])
        open.yield()
        await slow.value
        #expect(search.hits.map(\.text) == ["new"] && search.state == .loaded)
    }

    @Test func rule4_resultsAreGroupedByConversationInTheOrderOfTheirBestHit() async throws {
        let search = try await makeSearch()
        let former = User(id: .random(), username: "lin", displayName: "Lin Former", createdAt: Timestamp(milliseconds: 0))
        fixture.api.users = [former]
        let direct = fixture.base.conversation
        fixture.api.searchAnswer = { _, _, _ in
            API.SearchResults(
                results: [
                    hit(direct, 9, from: fixture.grace, "東京 trip", match: (0, 2)), hit(fixture.group, 8, from: fixture.me, "tokyo 東京", match: (6, 2)),
                    hit(direct, 7, from: fixture.me, "東京?"), hit(fixture.group, 6, from: former, "東京 too"),
                ], nextCursor: nil)
        }
        search.query = "東京"
        await search.submit()
        let groups = search.groups
        #expect(groups.map(\.title) == ["Grace Hopper", "Trip"] && groups.map(\.isGroup) == [false, true])
        #expect(groups[0].results.map(\.hit.seq) == [9, 7] && groups[1].results.map(\.hit.seq) == [8, 6])
        #expect(groups[0].results.map(\.sender) == ["Grace Hopper", "You"])
        #expect(groups[1].results[1].sender == "Lin Former", "a former member is looked up before the page shows")
        #expect(groups[1].results[0].segments == [SearchHit.Segment(text: "tokyo ", isMatch: false), SearchHit.Segment(text: "東京", isMatch: true)])
        #expect(groups[0].results[0].id == MessageRef(conversationId: direct, seq: 9) && !groups[0].results[0].timestamp.isEmpty)
    }

    @Test func rule5_loadMoreAppendsTheNextPageAndAFailureKeepsWhatIsShown() async throws {
        let search = try await makeSearch()
        let direct = fixture.base.conversation
        let failing = Mutex(false)
        fixture.api.searchAnswer = { _, _, cursor in
            if failing.withLock({ $0 }) { throw ParleyClientError(status: 429, code: .rateLimited, message: "Too many searches.") }
            switch cursor {
            case nil:
                return API.SearchResults(results: [hit(direct, 5, from: fixture.grace, "a"), hit(fixture.group, 4, from: fixture.me, "a")], nextCursor: "p2")
            case "p2":
                return API.SearchResults(results: [hit(direct, 4, from: fixture.grace, "a"), hit(direct, 5, from: fixture.grace, "a")], nextCursor: "p3")
            default: return API.SearchResults(results: [hit(fixture.group, 1, from: fixture.grace, "a")], nextCursor: nil)
            }
        }
        search.query = "a"
        search.order = .relevance
        await search.submit()
        #expect(search.canLoadMore && fixture.api.searches.last?.order == .relevance)
        await search.loadMore()
        #expect(search.groups.map { $0.results.map(\.hit.seq) } == [[5, 4], [4]], "appended to its group, the repeated hit once")
        #expect(fixture.api.searches.last?.cursor == "p2" && fixture.api.searches.last?.order == .relevance)
        failing.withLock { $0 = true }
        await search.loadMore()
        #expect(search.loadMoreError == "Too many searches." && search.hits.count == 3 && search.canLoadMore && !search.isLoadingMore)
        failing.withLock { $0 = false }
        await search.loadMore()
        #expect(search.loadMoreError == nil && search.hits.count == 4 && !search.canLoadMore)
    }

    @Test func statesLoadingEmptyAndError() async throws {
        let search = try await makeSearch()
        fixture.api.searchAnswer = { _, _, _ in API.SearchResults(results: [], nextCursor: nil) }
        search.query = "nothing"
        await search.submit()
        #expect(search.state == .empty && search.groups.isEmpty && SearchViewModel.emptyText == "No messages found")
        fixture.api.searchAnswer = { _, _, _ in throw ParleyClientError(status: 400, code: .invalidQuery, message: "The query is too long.") }
        await search.submit()
        #expect(search.state == .error("The query is too long.") && search.hits.isEmpty)
        fixture.api.searchAnswer = { _, _, _ in throw ParleyClientError(status: 0, code: nil, message: "Cannot reach the server.") }
        await search.submit()
        #expect(search.state == .error("Cannot reach the server."))
    }

    @Test func rule6_openingAResultLoadsTheChatBackToThatMessageAndMarksIt() async throws {
        let search = try await makeSearch()
        fixture.api.pages[fixture.group] = (1...130).map { fixture.message($0, from: fixture.grace, "message \($0)") }
        fixture.api.searchAnswer = { _, _, _ in API.SearchResults(results: [hit(fixture.group, 12, from: fixture.grace, "message 12")], nextCursor: nil) }
        search.query = "message 12"
        await search.submit()
        let chat = await search.open(try #require(search.hits.first))
        #expect(chat.conversation == fixture.group && chat.highlightedSeq == 12)
        let seqs = chat.client.timeline(fixture.group).compactMap(\.seq)
        #expect(seqs.contains(12) && seqs.last == 130 && seqs == Array(seqs.min()!...130), "one unbroken run from the newest back")
        let row = try #require(chat.items.first { $0.id == chat.highlightedItemID })
        guard case .message(let item, _, _, _) = row else { throw ClientTestFailure("not a message row") }
        #expect(item.seq == 12)
        chat.clearHighlight()
        #expect(chat.highlightedItemID == nil)

        let gone = await search.open(hit(fixture.group, 500, from: fixture.grace, "deleted for me"))
        #expect(gone.highlightedSeq == nil, "not in the history: nothing marked")
    }
}

/// The debounce's wait, ended by the test: `fire()` ends every wait begun so far.
final class ManualSleeper: Sendable {
    private let continuations = Mutex<[CheckedContinuation<Void, Never>]>([])

    var waiting: Int { continuations.withLock { $0.count } }

    func sleep(_ duration: Duration) async throws {
        await withCheckedContinuation { continuation in continuations.withLock { $0.append(continuation) } }
        try Task.checkCancellation()
    }

    func fire() {
        for continuation in continuations.withLock({ list in
            defer { list = [] }; return list
        }) { continuation.resume() }
    }
}
