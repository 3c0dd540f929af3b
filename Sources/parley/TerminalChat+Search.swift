import Foundation
import ParleySDK
import ParleyCore
import ParleyViewModels

/// Message search in the interactive client: `/search QUERY` prints the results numbered and
/// grouped by conversation, the matches in bold on a terminal (in [brackets] when the output is
/// not one, or `NO_COLOR` is set); `/more` prints the next page; `/open N` then opens result N at
/// that message, until `/list` makes `/open N` open list entries again.
extension TerminalChat {
    static let searchHelp = [
        #"Search: /search QUERY (words, "a phrase", from:USER, before:/after:YYYY-MM-DD) · /more (next results)"#,
        "  /open N opens result N after a /search, list entry N again after /list",
    ]
    /// How many rows are printed on each side of a message opened from search.
    static let searchContext = 5

    func runSearch(_ query: String) async {
        guard !query.isEmpty else { return say("Usage: /search QUERY") }
        search.query = query
        await search.submit()
        searchHits = []
        switch search.state {
        case .error(let message): return say("Search failed: \(message)")
        case .empty: return say("\(SearchViewModel.emptyText) for “\(query)”.")
        case .idle, .loading, .loaded: break
        }
        printResults(from: 0)
    }

    func showMoreResults() async {
        guard !searchHits.isEmpty, search.canLoadMore else { return say(searchHits.isEmpty ? "Search first: /search QUERY" : "(no more results)") }
        let before = search.hits.count
        await search.loadMore()
        if let error = search.loadMoreError { return say("Could not load more: \(error)") }
        printResults(from: before)
    }

    /// Prints the results from the `first`-th hit on, numbered in the order shown (grouped by
    /// conversation, so the numbers are those of `searchHits`, not of the server's order).
    private func printResults(from first: Int) {
        let shown = Set(searchHits.map(\.ref))
        var heading = first == 0 ? "Results for “\(search.query)”:" : "More results:"
        for group in search.groups {
            let fresh = group.results.filter { !shown.contains($0.id) }
            guard !fresh.isEmpty else { continue }
            if !heading.isEmpty {
                say(heading)
                heading = ""
            }
            say("  \(group.title)\(group.isGroup ? " [group]" : "")")
            for result in fresh {
                searchHits.append(result.hit)
                say("    \(searchHits.count). \(result.timestamp) \(result.sender): \(Self.highlighted(result.snippet))")
            }
        }
        say(search.canLoadMore ? "/open N to see one · /more for more results" : "/open N to see one")
    }

    func openSearchResult(_ number: Int?) async {
        guard let number, searchHits.indices.contains(number - 1) else { return say("Usage: /open N (a result of the last /search)") }
        let hit = searchHits[number - 1]
        guard client.conversations[hit.conversationId] != nil else { return say("That conversation is not available.") }
        let chat = await search.open(hit)
        await open(chat, loaded: true)
        if chat.highlightedSeq == nil { say("(that message is no longer in the history)") }
    }

    /// The rows to print for a chat opened at `seq`: a few on each side of it, after the day
    /// separator above the first one; every row when there is no `seq` or it is not shown.
    static func window(of items: [ChatViewModel.Item], around seq: Int64?) -> [ChatViewModel.Item] {
        let position = items.firstIndex {
            if case .message(let item, _, _, _) = $0 { item.seq == seq } else { false }
        }
        guard let seq, seq > 0, let position else { return items }
        let start = max(0, position - searchContext)
        let end = min(items.count, position + searchContext + 1)
        var window = Array(items[start..<end])
        if let first = window.first, !isDay(first), let day = items[..<start].last(where: isDay) { window.insert(day, at: 0) }
        return window
    }

    /// How many rows `/older` and `/newer` print of those already loaded.
    static let rowsAtATime = 20

    /// The open chat's loaded rows not printed yet: before the first printed (`older`), or after it
    /// (a search result's window leaves both; rows printed live later leave a gap, which `/newer` fills).
    /// Mine typed here count as printed: their status line (``printStatusChanges()``) printed them.
    func unprinted(in chat: ChatViewModel, older: Bool) -> [TimelineItem] {
        let items = client.timeline(chat.conversation)
        let printed = { (item: TimelineItem) in self.numbers.shown.contains(item.id) || self.numbers.printed[item.id] != nil }
        guard let first = items.firstIndex(where: printed) else { return older ? [] : items }
        return (older ? items[..<first] : items[(first + 1)...]).filter { !printed($0) }
    }

    /// `/older`: the loaded rows before the first printed, nearest first page; then older ones from the server.
    func showOlder(in chat: ChatViewModel) async {
        var waiting = unprinted(in: chat, older: true)
        if waiting.isEmpty {
            await chat.loadOlder()
            waiting = unprinted(in: chat, older: true)
            guard !waiting.isEmpty else { return say("(no older messages)") }
            return waiting.forEach { printItem($0) }
        }
        waiting.suffix(Self.rowsAtATime).forEach { printItem($0) }
    }

    /// `/newer`: the next loaded rows after the first printed that were not printed.
    func showNewer(in chat: ChatViewModel) {
        let waiting = unprinted(in: chat, older: false)
        guard !waiting.isEmpty else { return say("(no newer messages)") }
        waiting.prefix(Self.rowsAtATime).forEach { printItem($0) }
        let left = waiting.count - min(waiting.count, Self.rowsAtATime)
        if left > 0 { say("(\(left) newer message\(left == 1 ? "" : "s") — /newer)") }
    }

    private static func isDay(_ item: ChatViewModel.Item) -> Bool {
        if case .separator = item { true } else { false }
    }

    /// A hit's text on one line, its matches in bold (a terminal) or in [brackets].
    static func highlighted(_ segments: [SearchHit.Segment]) -> String {
        let bold = isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
        return segments.map { segment in
            let text = segment.text.replacingOccurrences(of: "\n", with: " ")
            guard segment.isMatch else { return text }
            return bold ? "\u{1B}[1m\(text)\u{1B}[22m" : "[\(text)]"
        }.joined()
    }
}
