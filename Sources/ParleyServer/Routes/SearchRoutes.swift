import Hummingbird
import ParleyCore
import ParleyStore

/// `GET /v1/search` (docs/protocol.md "Search"): what the query and its parameters ask, over what
/// the caller can read, a page at a time.
struct SearchRoutes {
    let store: any ParleyStore
    let limiter: RateLimiter
    let inFlight = SearchesInFlight()

    /// The deepest page a cursor may ask for (an offset): past it, narrow the search.
    static let maxOffset = 10_000

    func add(to router: Router<ParleyRequestContext>) {
        router.get("/v1/search") { request, context in
            let me = try context.requireUser()
            if let wait = limiter.acquire(me.rawValue) {
                throw ParleyError(.rateLimited, "Too many searches; try again in \(wait) s.", retryAfter: wait)
            }
            let reader = QueryReader(request: request)
            var query = try Self.query(reader)
            let limit = try reader.int("limit", default: 20, range: 1...50)
            var offset = 0
            if let cursor = reader.string("cursor") {
                if let position = SearchPosition(cursor: cursor) {
                    query.olderThan = position
                } else if (1...5).contains(cursor.utf8.count), cursor.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let skip = Int(cursor) {
                    offset = skip
                } else {
                    throw ParleyError(.invalidQuery, "'cursor' is not one this server gave.")
                }
            }
            // A search waits for the user's earlier ones (``SearchesInFlight``); it is stopped only as the server stops.
            guard await inFlight.enter(me.rawValue) else {
                throw ParleyError(.rateLimited, "The search was stopped before it ran; try again.", retryAfter: 1)
            }
            defer { inFlight.leave(me.rawValue) }
            // Past the deepest page there is nothing more (narrow the search instead).
            let hits = offset > Self.maxOffset ? [] : try await store.search(query, as: me, limit: limit + 1, offset: offset)
            let page = Array(hits.prefix(limit))
            return try JSONBody.response(API.SearchResults(results: page, nextCursor: Self.nextCursor(query, page, more: hits.count > limit, offset: offset)))
        }
    }

    /// Newest first pages after its last hit (``SearchPosition``: nothing skipped or repeated when
    /// messages come and go between pages); best match first by offset, since ranks are not a key.
    static func nextCursor(_ query: SearchQuery, _ page: [SearchHit], more: Bool, offset: Int) -> String? {
        guard more, let last = page.last else { return nil }
        if query.order == .newest || query.terms.isEmpty { return SearchPosition(last).cursor }
        return offset + page.count <= maxOffset ? String(offset + page.count) : nil
    }

    /// The query text, then the parameters, which take precedence over the same filters in it.
    static func query(_ reader: QueryReader) throws -> SearchQuery {
        let raw = reader.text("q") ?? ""
        var query = try SearchQuery.parse(raw)
        if let order = reader.string("order") {
            guard let parsed = SearchOrder(rawValue: order) else { throw ParleyError(.invalidQuery, "'order' is newest or relevance.") }
            query.order = parsed
        }
        if let from = reader.string("from"), !from.isEmpty {
            // A username is at most 32 characters; openapi.yaml allows 64 and refuses more.
            guard from.unicodeScalars.count <= 64, !Validation.holdsControlCharacters(from) else {
                throw ParleyError(.invalidQuery, "'from' is a username.")
            }
            query.fromUsername = from.lowercased()
        }
        if let conversation = reader.string("in") {
            // Shaped like an id (openapi's pattern) or refused; one that names no conversation of mine finds
            // nothing, like one I am not in.
            guard Self.isShapedLikeConversationID(conversation) else { throw ParleyError(.invalidQuery, "'in' is not a conversation id.") }
            query.conversation = ConversationID(validating: conversation) ?? ConversationID(rawValue: conversation)
        }
        if let before = reader.string("before") { query.before = try SearchQuery.time(before, endOfDay: false) }
        if let after = reader.string("after") { query.after = try SearchQuery.time(after, endOfDay: true) }
        return query
    }

    /// `dm_<uuid>_<uuid>` or `grp_<uuid>`, lower-case hex: the shape, not whether it could exist.
    static func isShapedLikeConversationID(_ text: String) -> Bool {
        func isUUID(_ part: Substring) -> Bool {
            part.count == 36 && part.allSatisfy { $0 == "-" || $0.isNumber || ("a"..."f").contains($0) }
                && part.split(separator: "-", omittingEmptySubsequences: false).map(\.count) == [8, 4, 4, 4, 12]
        }
        if text.hasPrefix("grp_") { return isUUID(text.dropFirst(4)) }
        guard text.hasPrefix("dm_"), text.count == 3 + 36 + 1 + 36 else { return false }
        let body = text.dropFirst(3)
        return isUUID(body.prefix(36)) && body.dropFirst(36).first == "_" && isUUID(body.suffix(36))
    }
}
