import Foundation
import HTTPTypes
import Logging
import ParleyCore
import ParleyPostgres
import ParleyServer
import ParleyTestSupport
import Testing

/// A NUL or another control character where a search, an address or an id goes gets the route's
/// own error, never a 500: PostgreSQL refuses NUL in text ("invalid byte sequence"), and SQLite's
/// full-text syntax broke on it. Both backends, as a client would send it.
@Suite struct ControlCharacterTests {
    static func run(on backend: PushDeliveryTests.Backend, _ body: @Sendable @escaping (TestAPI) async throws -> Void) async throws {
        let configure: @Sendable (inout ServerConfiguration) -> Void = { $0.push.allowLoopbackEndpoints = true }
        switch backend {
        case .sqlite:
            try await TestServer.run(configure: configure, body)
        case .postgres:
            let url = try DatabaseURL(try await PostgresTestServer.freshDatabaseAsync())
            let store = try await PostgresStore.connect(url, poolSize: 4, logger: Logger(label: "test"))
            try await TestServer.run(store: store, configure: configure, body)
        }
    }

    @Test(arguments: PushDeliveryTests.Backend.allCases)
    func aNulInASearchAnAddressOrAnIdIsRefusedInWords(backend: PushDeliveryTests.Backend) async throws {
        try await Self.run(on: backend) { api in
            let ada = try await api.register("ada"), grace = try await api.register("grace")
            let chat = try await api.send("東京で会いましょう", from: ada, to: grace).conversationId
            for query in ["q=hello%00world", "q=%E6%9D%B1%E4%BA%AC%00", "q=%00", "q=x&from=gra%00ce", "q=x%01y"] {
                let answer = try await api.request(.get, "/v1/search?\(query)", token: grace.token)
                #expect(answer.status == .badRequest && answer.errorCode == .invalidQuery, "\(query): \(answer.status)")
            }
            let found = try await api.request(.get, "/v1/search?q=%E6%9D%B1%E4%BA%AC", token: grace.token)
            #expect(found.status == .ok, "the same search without the NUL")

            let keys = [
                "p256dh": "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM",
                "auth": "tBHItJI5svbpez7KI4CCXg",
            ]
            struct Subscription: Encodable {
                let endpoint: String
                let keys: [String: String]
            }
            let subscribe = try await api.request(
                .post, "/v1/push/subscriptions", token: ada.token, encoding: Subscription(endpoint: "https://push.example.com/a\u{0}b", keys: keys))
            #expect(subscribe.status == .badRequest && subscribe.errorCode == .invalidPushSubscription)
            let unsubscribe = try await api.request(
                .delete, "/v1/push/subscriptions", token: ada.token, encoding: ["endpoint": "https://push.example.com/\u{0}"])
            #expect(unsubscribe.status == .notFound && unsubscribe.errorCode == .notFound)

            let socket = try await api.socket(ada)
            socket.send(.typing(conversationId: ConversationID(rawValue: chat.rawValue + "\u{0}"), isTyping: true, ref: "t"))
            let code = try await socket.inbox.waitFor("the typing frame's error") { frames in
                frames.lazy.compactMap { if case .error("t", _, let code, _) = $0 { code } else { nil } }.first
            }
            #expect(code == .conversationNotFound)
            socket.send(.ping(ref: "still open"))
            _ = try await socket.inbox.waitFor("pong") { $0.contains(.pong(ref: "still open")) ? true : nil }
        }
    }
}
