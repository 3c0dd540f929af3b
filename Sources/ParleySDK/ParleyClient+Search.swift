import Foundation
import ParleyCore

/// Message search (docs/protocol.md "Search").
///
/// Rules:
/// 1. Search is a REST call: it works while the live connection is down (it needs the server, not
///    the stream), and finds exactly what the server lets me read, never the local cache.
/// 2. A page is ``API/SearchResults``: hits newest first (or by relevance), each with its
///    conversation, seq, sender, time, text and match ranges; its `nextCursor` asks for the next
///    page with the same query and order.
/// 3. Match ranges are UTF-16 offsets (what JavaScript counts); ``SearchHit/characterRange(of:)``
///    turns one into a `Range<String.Index>` of the hit's text, widened to whole characters and
///    clamped to the text, so no range from the server can crash the app.
/// 4. Before a page is returned, what it names is made known: a conversation not held yet (the
///    list holds the 100 most recent) is read, and senders whom no conversation of mine lists
///    (former members) are looked up, as for messages (``displayName(of:in:)``).
extension ParleyClient {
    /// The messages I can read that match `query`, a page at a time (pass the last page's
    /// `nextCursor` as `cursor` for the next). An empty query finds nothing, without asking.
    public func search(_ query: String, order: SearchOrder = .newest, cursor: String? = nil, limit: Int? = nil) async throws -> API.SearchResults {
        guard !query.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return API.SearchResults(results: [], nextCursor: nil) }
        let page = try await api.search(query: query, order: order, limit: limit, cursor: cursor, token: session.token)
        for id in Set(page.results.map(\.conversationId)) where conversations[id] == nil { try? await refresh(id) }
        let unknown = Set(page.results.filter { displayName(of: $0.senderId, in: $0.conversationId) == nil }.map(\.senderId))
        for fetch in fetches(of: unknown) { await fetch.value }
        return page
    }

    /// What a conversation is called here: a group's title, or the other person's display name,
    /// with their username when the person of another direct conversation has a name that reads
    /// alike (``distinguishableName(of:in:)``; `nil` when the conversation is not known locally).
    /// `marks`: ``directNameMarks()`` worked out beforehand, for a list's pass over its rows.
    public func title(of id: ConversationID, marks: LookAlikeMarks? = nil) -> String? {
        guard let summary = conversations[id] else { return nil }
        if summary.kind == .group { return summary.title ?? "Group" }
        return otherMember(of: summary).flatMap { distinguishableName(of: $0.userId, in: id, marks: marks) }
    }
}

extension SearchHit {
    /// A match as a range of ``text`` (rule 3): widened to the characters it touches (a match inside
    /// an emoji, between a letter and its combining accent, or splitting a surrogate pair takes the
    /// whole character), clamped to the text; `nil` when nothing of it is inside the text.
    public func characterRange(of match: TextRange) -> Range<String.Index>? {
        text.characterRange(utf16: match)
    }

    /// Every match as a range of ``text``, in order, overlapping ones merged; bad ones left out.
    public var matchRanges: [Range<String.Index>] {
        var merged: [Range<String.Index>] = []
        for range in matches.compactMap(characterRange(of:)).sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, range.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }

    /// ``text`` cut into runs that alternate between plain and matched, for highlighting as text
    /// (bold, a color, brackets): never markup. Empty runs are left out.
    public var segments: [Segment] {
        var segments: [Segment] = []
        var position = text.startIndex
        for range in matchRanges {
            if position < range.lowerBound { segments.append(Segment(text: text[position..<range.lowerBound], isMatch: false)) }
            segments.append(Segment(text: text[range], isMatch: true))
            position = range.upperBound
        }
        if position < text.endIndex { segments.append(Segment(text: text[position...], isMatch: false)) }
        return segments
    }

    /// ``segments`` of a long text cut to `length` characters around its first match (`lead` of
    /// them before it), with "…" where text is left out: what a result line shows of a message of
    /// thousands of characters (the web client cuts alike, counting UTF-16 units where this counts
    /// characters). A text of at most `length` characters is whole.
    public func snippet(length: Int = 200, lead: Int = 50) -> [Segment] {
        let count = text.count
        guard count > length else { return segments }
        let before = matchRanges.first.map { text.distance(from: text.startIndex, to: $0.lowerBound) } ?? 0
        let from = text.index(text.startIndex, offsetBy: max(0, min(before - lead, count - length)))
        let to = text.index(from, offsetBy: length)
        var cut = from > text.startIndex ? [Segment(text: "…", isMatch: false)] : []
        for segment in segments {
            let lower = max(segment.text.startIndex, from), upper = min(segment.text.endIndex, to)
            if lower < upper { cut.append(Segment(text: text[lower..<upper], isMatch: segment.isMatch)) }
        }
        if to < text.endIndex { cut.append(Segment(text: "…", isMatch: false)) }
        return cut
    }

    /// A run of a hit's text, matched or not (``segments``).
    public struct Segment: Hashable, Sendable {
        /// The run's text.
        public var text: Substring
        /// Whether it is part of a match.
        public var isMatch: Bool
        /// Creates a run.
        public init(text: Substring, isMatch: Bool) {
            self.text = text
            self.isMatch = isMatch
        }
    }
}

extension String {
    /// The characters that UTF-16 offsets `range` touch (see ``SearchHit/characterRange(of:)``).
    func characterRange(utf16 range: TextRange) -> Range<String.Index>? {
        let (end, overflow) = range.start.addingReportingOverflow(range.length)
        let lower = Swift.max(0, range.start)
        let upper = Swift.min(utf16.count, overflow ? Int.max : end)
        guard lower < upper else { return nil }
        var offset = 0
        var start: String.Index?
        for index in indices {
            let next = offset + self[index].utf16.count
            if start == nil, next > lower { start = index }
            if next >= upper, let start { return start..<self.index(after: index) }
            offset = next
        }
        return nil
    }
}
