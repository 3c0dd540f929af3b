import ParleyTestSupport
import Foundation
import HTTPTypes
import NIOCore
import ParleyCore
import Testing
import ParleyServer

@Suite struct AccountRouteTests {
    @Test func registerLoginMeAndLogout() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("Alice", displayName: "  Alice Liddell ")
            #expect(alice.user.username == "alice" && alice.user.displayName == "Alice Liddell")
            let me = try await api.request(.get, "/v1/me", token: alice.token)
            #expect(try me.status == .ok && me.decode(User.self) == alice.user)

            let login = try await api.request(.post, "/v1/auth/login", encoding: API.LoginRequest(username: "ALICE", password: "correct horse"))
            #expect(login.status == .ok)
            let second = try login.decode(API.SessionResponse.self)
            #expect(second.token != alice.token && second.user == alice.user)

            #expect(try await api.request(.post, "/v1/auth/logout", token: alice.token).status == .noContent)
            let revoked = try await api.request(.get, "/v1/me", token: alice.token)
            #expect(revoked.status == .unauthorized && revoked.errorCode == .unauthorized)
            #expect(try await api.request(.get, "/v1/me", token: second.token).status == .ok, "other sessions survive a logout")
        }
    }

    @Test func registrationValidatesEachField() async throws {
        try await TestServer.run { api in
            _ = try await api.register("taken")
            let cases: [(String, ErrorCode, HTTPResponse.Status)] = [
                (#"{"username":"taken","displayName":"X","password":"password1"}"#, .usernameTaken, .conflict),
                (#"{"username":"a","displayName":"X","password":"password1"}"#, .invalidUsername, .badRequest),
                (#"{"username":"bad name","displayName":"X","password":"password1"}"#, .invalidUsername, .badRequest),
                (#"{"username":"okname","displayName":"  ","password":"password1"}"#, .invalidDisplayName, .badRequest),
                // "You" is every client's name for the user's own messages; fillers draw nothing.
                (#"{"username":"okname","displayName":"You","password":"password1"}"#, .invalidDisplayName, .badRequest),
                (#"{"username":"okname","displayName":" yOU ","password":"password1"}"#, .invalidDisplayName, .badRequest),
                (#"{"username":"okname","displayName":"\uFF39\uFF4F\uFF55","password":"password1"}"#, .invalidDisplayName, .badRequest),
                (#"{"username":"okname","displayName":"Y\u200Bou","password":"password1"}"#, .invalidDisplayName, .badRequest),
                (#"{"username":"okname","displayName":"\u3164","password":"password1"}"#, .invalidDisplayName, .badRequest),
                (#"{"username":"okname","displayName":"\u2800\u2800","password":"password1"}"#, .invalidDisplayName, .badRequest),
                (#"{"username":"okname","displayName":"\u115F\u1160\uFFA0","password":"password1"}"#, .invalidDisplayName, .badRequest),
                (#"{"username":"okname","displayName":"X","password":"short"}"#, .invalidPassword, .badRequest),
                (#"{"username":"okname","displayName":"X"}"#, .invalidJSON, .badRequest),
                (#"{"username":"okname","displayName":"X","password":12345678}"#, .invalidJSON, .badRequest),
                (#"{"username":"#, .invalidJSON, .badRequest),
                ("", .invalidJSON, .badRequest),
            ]
            for (body, code, status) in cases {
                let response = try await api.request(.post, "/v1/auth/register", json: body)
                #expect(response.status == status && response.errorCode == code, "\(body)")
            }
            #expect(try await api.register("youssef", displayName: "Youssef").user.displayName == "Youssef", "only the whole name is kept back")
            let invalidUTF8 = try await api.request(
                .post, "/v1/auth/register", body: ByteBuffer(bytes: Array(#"{"username":""#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8)))
            #expect(invalidUTF8.status == .badRequest && invalidUTF8.errorCode == .invalidUTF8)
            let huge = try await api.request(.post, "/v1/auth/register", json: String(repeating: " ", count: 300_000) + "{}")
            #expect(huge.status == .contentTooLarge && huge.errorCode == .payloadTooLarge)
        }
    }

    @Test func loginFailuresDoNotRevealWhetherTheUserExists() async throws {
        try await TestServer.run { api in
            _ = try await api.register("alice")
            let wrongPassword = try await api.request(.post, "/v1/auth/login", encoding: API.LoginRequest(username: "alice", password: "wrong password"))
            let noSuchUser = try await api.request(.post, "/v1/auth/login", encoding: API.LoginRequest(username: "nobody", password: "wrong password"))
            #expect(wrongPassword.status == .unauthorized && noSuchUser.status == .unauthorized)
            #expect(wrongPassword.body == noSuchUser.body)
            #expect(wrongPassword.errorCode == .invalidCredentials)
        }
    }

    /// Per client address (see LoginThrottleTests for the per-account rules).
    @Test func loginsAreThrottledWithRetryAfter() async throws {
        try await TestServer.run(configure: {
            $0.loginBurst = 3; $0.loginsPerMinute = 1; $0.stopRateLimitClock()
        }) { api in
            _ = try await api.register("alice")
            for _ in 0..<3 {
                let attempt = try await api.request(.post, "/v1/auth/login", encoding: API.LoginRequest(username: "alice", password: "wrong password"))
                #expect(attempt.status == .unauthorized)
            }
            let limited = try await api.request(.post, "/v1/auth/login", encoding: API.LoginRequest(username: "alice", password: "correct horse"))
            #expect(limited.status == .tooManyRequests && limited.errorCode == .rateLimited)
            #expect(Int(limited.headers[.retryAfter] ?? "") ?? 0 >= 1)
        }
    }

    /// The scheme's name is case-insensitive (RFC 9110 §11.1).
    @Test func theBearerSchemeIsReadInAnyCase() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice")
            for header in ["bearer \(alice.token)", "BEARER \(alice.token)", "Bearer  \(alice.token)"] {
                let me = try await api.request(.get, "/v1/me", headers: [.authorization: header])
                #expect(me.status == .ok, "\(header)")
            }
            #expect(try await api.request(.get, "/v1/me", headers: [.authorization: "Bearerx \(alice.token)"]).status == .unauthorized)
        }
    }

    @Test func expiredAndMalformedTokensAreRefused() async throws {
        try await TestServer.run(configure: { $0.sessionLifetimeSeconds = -1 }) { api in
            let alice = try await api.register("alice")
            let expired = try await api.request(.get, "/v1/me", token: alice.token)
            #expect(expired.status == .unauthorized && expired.errorCode == .unauthorized)
            for header in ["Basic abc", "Bearer", "Bearer short", "Bearer " + String(repeating: "é", count: 43)] {
                let response = try await api.request(.get, "/v1/me", headers: [.authorization: header])
                #expect(response.status == .unauthorized, "\(header)")
            }
        }
    }

    /// A client that still sends its old header (logged out, expired, malformed) can sign in again,
    /// and a probe that sends one still sees the server up: routes that need no session ignore it.
    @Test func routesThatNeedNoSessionIgnoreAStaleAuthorizationHeader() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice")
            #expect(try await api.request(.post, "/v1/auth/logout", token: alice.token).status == .noContent)
            for header in ["Bearer \(alice.token)", "Bearer short", "Basic abc"] {
                let headers: HTTPFields = [.authorization: header]
                let login = try await api.login("alice", headers: headers)
                #expect(login.user.id == alice.id, "\(header)")
                let register = try await api.request(
                    .post, "/v1/auth/register", json: #"{"username":"user\#(header.count)","displayName":"U","password":"correct horse"}"#,
                    headers: headers)
                #expect(register.status == .created, "\(header)")
                #expect(try await api.request(.get, "/healthz", headers: headers).status == .ok, "\(header)")
                #expect(try await api.request(.get, "/readyz", headers: headers).status == .ok, "\(header)")
                let me = try await api.request(.get, "/v1/me", headers: headers)
                #expect(me.status == .unauthorized && me.errorCode == .unauthorized, "routes that need a session still refuse it")
            }
        }
    }

    @Test func everyRouteButRegisterLoginAndHealthNeedsAToken() async throws {
        try await TestServer.run { api in
            let someone = try await api.register("someone")
            let conversation = ConversationID.direct(someone.id, .random()).rawValue
            let routes: [(HTTPRequest.Method, String)] = [
                (.post, "/v1/auth/logout"), (.get, "/v1/me"), (.get, "/v1/users?query=so"), (.get, "/v1/users/\(someone.id)"),
                (.get, "/v1/conversations"), (.post, "/v1/conversations"), (.get, "/v1/conversations/\(conversation)"),
                (.get, "/v1/conversations/\(conversation)/messages"), (.post, "/v1/conversations/\(conversation)/receipts"),
                (.post, "/v1/messages"),
            ]
            for (method, uri) in routes {
                let response = try await api.request(method, uri, json: method == .post ? "{}" : nil)
                #expect(response.status == .unauthorized && response.errorCode == .unauthorized, "\(method) \(uri)")
            }
            #expect(try await api.request(.get, "/healthz").status == .ok)
        }
    }

    @Test func userSearchAndLookup() async throws {
        try await TestServer.run { api in
            let me = try await api.register("ada", displayName: "Ada Lovelace")
            let grace = try await api.register("grace", displayName: "Grace Hopper")
            let found = try await api.request(.get, "/v1/users?query=hop", token: me.token)
            #expect(try found.decode(API.UserList.self).users == [grace.user])
            let notMe = try await api.request(.get, "/v1/users?query=ada", token: me.token)
            #expect(try notMe.decode(API.UserList.self).users.isEmpty)
            for bad in ["/v1/users", "/v1/users?query=", "/v1/users?query=a&limit=0", "/v1/users?query=a&limit=x"] {
                let response = try await api.request(.get, bad, token: me.token)
                #expect(response.status == .badRequest && response.errorCode == .invalidQuery, "\(bad)")
            }
            #expect(try await api.request(.get, "/v1/users/\(grace.id)", token: me.token).decode(User.self) == grace.user)
            #expect(try await api.request(.get, "/v1/users/\(UUID())", token: me.token).errorCode == .userNotFound)
            #expect(try await api.request(.get, "/v1/users/not-an-id", token: me.token).status == .notFound)
        }
    }
}

@Suite struct DisplayNameRouteTests {
    @Test func aNewNameFollowsRegistrationsRulesAndIsWhatEveryAnswerCarries() async throws {
        try await TestServer.run { api in
            let ada = try await api.register("ada", displayName: "Ada Lovelace"), bob = try await api.register("bob")
            let renamed = try await api.request(.patch, "/v1/me", token: ada.token, json: #"{"displayName":"  Ada   King "}"#)
            #expect(try renamed.status == .ok && renamed.decode(User.self).displayName == "Ada King", "trimmed, spaces run together")
            #expect(try await api.request(.get, "/v1/me", token: ada.token).decode(User.self).displayName == "Ada King")
            #expect(try await api.request(.get, "/v1/users/\(ada.id)", token: bob.token).decode(User.self).displayName == "Ada King")
            let login = try await api.request(.post, "/v1/auth/login", encoding: API.LoginRequest(username: "ada", password: "correct horse"))
            #expect(try login.decode(API.SessionResponse.self).user.displayName == "Ada King")
            let found = try await api.request(.get, "/v1/users?query=king", token: bob.token).decode(API.UserList.self)
            #expect(found.users.map(\.id) == [ada.id])

            let refused: [(String, ErrorCode)] = [
                (#"{"displayName":"   "}"#, .invalidDisplayName),
                (#"{"displayName":"You"}"#, .invalidDisplayName),
                (#"{"displayName":"@bob"}"#, .invalidDisplayName),
                (#"{"displayName":"Ada\u200BKing"}"#, .invalidDisplayName),
                (#"{"displayName":"\#(String(repeating: "x", count: 65))"}"#, .invalidDisplayName),
                (#"{"displayName":7}"#, .invalidJSON),
                (#"{}"#, .invalidJSON),
                (#"{"displayName":null}"#, .invalidJSON),
            ]
            for (body, code) in refused {
                let response = try await api.request(.patch, "/v1/me", token: ada.token, json: body)
                #expect(response.status == .badRequest && response.errorCode == code, "\(body)")
            }
            #expect(try await api.request(.get, "/v1/me", token: ada.token).decode(User.self).displayName == "Ada King", "nothing refused was kept")
            #expect(try await api.request(.patch, "/v1/me", json: #"{"displayName":"Eve"}"#).status == .unauthorized)
        }
    }

    @Test func renamesAreLimitedPerUserAndTheSameNameAgainCostsNothing() async throws {
        try await TestServer.run { api in
            let ada = try await api.register("ada"), bob = try await api.register("bob")
            let limit = 20  // as docs/protocol.md says
            for number in 0..<limit {
                #expect(try await api.request(.patch, "/v1/me", token: ada.token, encoding: API.ProfileRequest(displayName: "Ada \(number)")).status == .ok)
            }
            let same = try await api.request(.patch, "/v1/me", token: ada.token, encoding: API.ProfileRequest(displayName: "Ada \(limit - 1)"))
            #expect(same.status == .ok, "the name as it is changes nothing, so it is never limited")
            let limited = try await api.request(.patch, "/v1/me", token: ada.token, encoding: API.ProfileRequest(displayName: "Ada again"))
            #expect(limited.status == .tooManyRequests && limited.errorCode == .rateLimited && limited.headers[.retryAfter] != nil)
            #expect(try await api.request(.get, "/v1/me", token: ada.token).decode(User.self).displayName == "Ada \(limit - 1)")
            #expect(try await api.request(.patch, "/v1/me", token: bob.token, encoding: API.ProfileRequest(displayName: "Bob B")).status == .ok)
        }
    }
}
