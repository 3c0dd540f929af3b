import Foundation
import Observation
import ParleySDK
import ParleyCore

/// Message search: the query box, results grouped by conversation with their matches, more pages,
/// and opening a result as a chat at that message (docs/protocol.md "Search").
///
/// Rules:
/// 1. Typing in ``query`` searches after a pause (``debounce``); each change restarts the wait, so
///    a burst of keys makes one request. ``submit()`` (Return) searches at once. The wait is
///    injected (`sleep`), so tests and previews decide when it is over.
/// 2. An empty query clears the results without asking the server (``State/idle``).
/// 3. Only the latest search shows: an answer to an earlier query, or a page of one, is dropped.
/// 4. Results are grouped by conversation, in the order of their best hit (newest first, or most
///    relevant), each group named as in the list (the group's title, the other person's name).
/// 5. ``loadMore()`` appends the next page (``canLoadMore``) to the groups; a failure keeps what
///    is shown and says why in ``loadMoreError``.
/// 6. ``open(_:)`` gives the chat of a result, its history loaded back to that message and the
///    message marked (``ChatViewModel/highlightedSeq``).
@MainActor
@Observable
public final class SearchViewModel {
    /// Nothing asked, searching, results, none, or failed with a message to show.
    public enum State: Equatable, Sendable {
        case idle
        case loading
        case loaded
        case empty
        case error(String)
    }

    /// What an empty answer says.
    public static let emptyText = "No messages found"

    /// The client searched through.
    public let client: ParleyClient
    /// The query box; changes search after ``debounce`` (rule 1).
    public var query = "" {
        didSet { if query != oldValue { scheduleSearch() } }
    }
    /// Newest first or by relevance; a change searches again.
    public var order: SearchOrder = .newest {
        didSet { if order != oldValue { scheduleSearch() } }
    }
    /// What the screen shows.
    public private(set) var state: State = .idle
    /// The hits so far, in the order of the search.
    public private(set) var hits: [SearchHit] = []
    /// True while the next page loads.
    public private(set) var isLoadingMore = false
    /// Why the last ``loadMore()`` failed, to show under the results.
    public private(set) var loadMoreError: String?
    /// How long typing must pause before a search.
    public let debounce: Duration
    private var nextCursor: String?
    /// The query and order the results answer (what ``loadMore()`` pages on).
    @ObservationIgnored private var searched: (query: String, order: SearchOrder) = ("", .newest)
    @ObservationIgnored private let sleep: @Sendable (Duration) async throws -> Void
    @ObservationIgnored private var waiting: Task<Void, Never>?
    @ObservationIgnored private var generation = 0
    @ObservationIgnored let formatter: SmartDateFormatter
    @ObservationIgnored let now: () -> Date

    /// A search through `client`. `sleep` is how the debounce waits (rule 1); `formatter` and
    /// `now` make times testable.
    public init(
        client: ParleyClient, debounce: Duration = .milliseconds(300),
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        formatter: SmartDateFormatter = SmartDateFormatter(), now: @escaping () -> Date = Date.init
    ) {
        self.client = client
        self.debounce = debounce
        self.sleep = sleep
        self.formatter = formatter
        self.now = now
    }

    /// Whether another page may follow (rule 5).
    public var canLoadMore: Bool { nextCursor != nil && state == .loaded }

    /// Rule 1: searches now (Return), without waiting for the pause.
    public func submit() async {
        waiting?.cancel()
        waiting = nil
        await search()
    }

    /// Rule 5.
    public func loadMore() async {
        guard let cursor = nextCursor, state == .loaded, !isLoadingMore else { return }
        let asked = generation
        isLoadingMore = true
        defer { if asked == generation { isLoadingMore = false } }
        do {
            let page = try await client.search(searched.query, order: searched.order, cursor: cursor)
            guard asked == generation else { return }
            let held = Set(hits.map(\.ref))
            hits += page.results.filter { !held.contains($0.ref) }
            nextCursor = page.nextCursor
            loadMoreError = nil
        } catch {
            guard asked == generation else { return }
            loadMoreError = Self.reason(error)
        }
    }

    /// Rule 6: the chat of `hit`, loaded back to it, with it marked.
    public func open(_ hit: SearchHit) async -> ChatViewModel {
        let chat = ChatViewModel(client: client, conversation: hit.conversationId, otherUser: nil, formatter: formatter, now: now)
        await chat.load(around: hit.seq)
        return chat
    }

    // MARK: running

    /// Rules 1 and 2.
    private func scheduleSearch() {
        waiting?.cancel()
        waiting = nil
        guard !isBlank else {
            generation += 1
            (hits, nextCursor, state, isLoadingMore, loadMoreError) = ([], nil, .idle, false, nil)
            return
        }
        let sleep = sleep
        let debounce = debounce
        waiting = Task { [weak self] in
            guard (try? await sleep(debounce)) != nil, !Task.isCancelled else { return }
            await self?.search()
        }
    }

    /// One search of the current query; rule 3 drops what answers an older one.
    private func search() async {
        generation += 1
        let asked = generation
        guard !isBlank else {
            (hits, nextCursor, state) = ([], nil, .idle)
            return
        }
        (state, isLoadingMore, loadMoreError) = (.loading, false, nil)
        searched = (query, order)
        do {
            let page = try await client.search(query, order: order)
            guard asked == generation else { return }
            (hits, nextCursor) = (page.results, page.nextCursor)
            state = page.results.isEmpty ? .empty : .loaded
        } catch {
            guard asked == generation else { return }
            (hits, nextCursor, state) = ([], nil, .error(Self.reason(error)))
        }
    }

    private var isBlank: Bool { query.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }

    private static func reason(_ error: any Error) -> String {
        (error as? ParleyClientError)?.message ?? "Search failed."
    }
}
