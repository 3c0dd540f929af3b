import Foundation
import HTTPTypes
import ParleyCore
import Testing

/// `GET /v1/search` over HTTP (docs/protocol.md "Search"); every response is held to openapi.yaml by ``TestAPI``.
@Suite struct SearchRouteTests {
    static func search(_ api: TestAPI, _ account: Account, _ parameters: String) async throws -> APIResponse {
        try await api.request(.get, "/v1/search?\(parameters)", token: account.token)
    }

    static func encoded(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "" }

    @Test func findsPagesAndRefusesOnlyWhatItMust() async throws {
        try await TestServer.run { api in
            let (ada, grace, alan) = try await api.threeFriends()
            let chat = ConversationID.direct(ada.id, grace.id)
            for index in 1...5 { _ = try await api.send("Café meeting \(index)", from: ada, in: chat) }
            _ = try await api.send("東京で会いましょう", from: grace, in: chat)
            let page = try await Self.search(api, grace, "q=\(Self.encoded("cafe"))&limit=3").decode(API.SearchResults.self)
            #expect(page.results.map(\.text) == ["Café meeting 5", "Café meeting 4", "Café meeting 3"])
            // Newest first pages after the last hit: a message sent between pages is not shown again.
            let last = try #require(page.results.last)
            #expect(page.nextCursor == "n\(last.createdAt.milliseconds).\(last.seq).\(chat.rawValue)")
            _ = try await api.send("Café meeting 6", from: ada, in: chat)
            let rest = try await Self.search(api, grace, "q=cafe&limit=3&cursor=\(page.nextCursor ?? "")").decode(API.SearchResults.self)
            #expect(rest.results.map(\.text) == ["Café meeting 2", "Café meeting 1"] && rest.nextCursor == nil)
            // An offset (a cursor of an older server, and best match first's) still pages.
            let skipped = try await Self.search(api, grace, "q=cafe&limit=3&cursor=4").decode(API.SearchResults.self)
            #expect(skipped.results.map(\.text) == ["Café meeting 2", "Café meeting 1"] && skipped.nextCursor == nil)
            let best = try await Self.search(api, grace, "q=cafe&order=relevance&limit=2").decode(API.SearchResults.self)
            #expect(best.nextCursor == "2")
            let japanese = try await Self.search(api, ada, "q=\(Self.encoded("京"))").decode(API.SearchResults.self)
            #expect(japanese.results.first?.matches == [TextRange(start: 1, length: 1)])
            #expect(try await Self.search(api, alan, "q=cafe").decode(API.SearchResults.self).results.isEmpty, "not his conversation")
            let fromGrace = try await Self.search(api, ada, "q=\(Self.encoded("東京"))&from=grace").decode(API.SearchResults.self)
            #expect(fromGrace.results.count == 1)
            #expect(try await Self.search(api, ada, "q=").decode(API.SearchResults.self).results.isEmpty)
            // Form encoding, as URLSearchParams and HTML forms write it: `+` is a space, `%2B` a plus.
            _ = try await api.send("東京 タワー and C++ notes", from: ada, in: chat)
            for (parameters, found) in [
                ("q=\(Self.encoded("タワー"))+\(Self.encoded("東京"))", true), ("q=meeting+from%3Aada", true), ("q=meeting+from%3Agrace", false),
                ("q=C%2B%2B", true),
            ] {
                let page = try await Self.search(api, grace, parameters).decode(API.SearchResults.self)
                #expect(page.results.isEmpty != found, "\(parameters)")
            }
            for hostile in ["\"", "\"unbalanced", "NEAR(a b)", "a* -b ^c", "<img src=x onerror=alert(1)>", "'; DROP TABLE messages; --", "%_\\"] {
                let response = try await Self.search(api, ada, "q=\(Self.encoded(hostile))")
                #expect(response.status == .ok, "\(hostile)")
            }
            for (parameters, code) in [
                ("q=\(String(repeating: "x", count: 1001))", ErrorCode.invalidQuery), ("q=a&order=best", .invalidQuery),
                ("q=a&limit=0", .invalidQuery), ("q=a&cursor=-1", .invalidQuery), ("q=a&cursor=123456", .invalidQuery),
                ("q=a&cursor=n1.2", .invalidQuery), ("q=a&cursor=n1.x.dm_a", .invalidQuery), ("q=a&cursor=n1.2.dm%27%3B", .invalidQuery),
                ("q=a&cursor=n1234567890123456.1.dm_a", .invalidQuery), ("q=a&cursor=n1.2.b%CC%81", .invalidQuery),
                ("q=a&cursor=n1%CC%81.2.dm_a", .invalidQuery), ("q=a&cursor=n.2.dm_a", .invalidQuery), ("q=a&cursor=%2B1", .invalidQuery),
                ("q=a&cursor=-0", .invalidQuery), ("q=a&before=yesterday", .invalidQuery),
                ("q=a&before=2026-02-30", .invalidQuery), ("q=a&after=2026-04-31", .invalidQuery), ("q=a&before=2026-13-01", .invalidQuery),
            ] {
                let response = try await Self.search(api, ada, parameters)
                #expect(response.status == .badRequest && response.errorCode == code, "\(parameters.prefix(40))")
            }
            #expect(try await Self.search(api, ada, "q=cafe&cursor=99999").decode(API.SearchResults.self).results.isEmpty)
            #expect(try await Self.search(api, ada, "q=cafe&before=2028-02-29").status == .ok, "a leap day is a day")
            let anonymous = try await api.request(.get, "/v1/search?q=cafe")
            #expect(anonymous.status == .unauthorized)
        }
    }
}
