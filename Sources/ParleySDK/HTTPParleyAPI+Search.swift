import Foundation
import ParleyCore

/// The search route (docs/protocol.md "Search").
extension HTTPParleyAPI {
    /// Finds the messages I can read that match `query` (at most 1,000 characters; empty finds
    /// nothing), newest first or by relevance, `limit` (1–50) at a time.
    public func search(query: String, order: SearchOrder, limit: Int?, cursor: String?, token: String) async throws -> API.SearchResults {
        var path = "/v1/search?q=\(Self.queryValue(query))&order=\(order.rawValue)"
        if let limit { path += "&limit=\(limit)" }
        if let cursor { path += "&cursor=\(Self.queryValue(cursor))" }
        return try await call(.GET, path, token: token)
    }

    /// `text` as one value of a query string: everything but the unreserved characters of RFC 3986
    /// is percent-encoded as UTF-8, so `+`, `&`, `=`, `#`, `%`, quotes, spaces and any script
    /// arrive as written (a `+` is not read as a space, nor `&` as the next parameter).
    static func queryValue(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
