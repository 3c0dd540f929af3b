import ParleyTestSupport
import Foundation
import HTTPTypes
import ParleyCore
@testable import ParleyServer
import ParleySQLite
import Testing
import NIOCore
import ParleyStore

/// Limits on what strangers can do, and the smaller hardening items of the security review.
@Suite struct AbuseLimitTests {
    @Test func startingConversationsIsRateLimitedButOldOnesAreFree() async throws {
        try await TestServer.run(configure: {
            $0.conversationsPerHour = 3; $0.stopRateLimitClock()
        }) { api in
            let spammer = try await api.register("spammer")
            var targets: [Account] = []
            for index in 0..<5 { targets.append(try await api.register("target\(index)")) }
            for target in targets.prefix(2) {
                #expect(try await api.request(.post, "/v1/conversations", token: spammer.token, encoding: ["userId": target.id]).status == .created)
            }
            _ = try await api.send("hi", from: spammer, to: targets[2])
            let refused = try await api.request(.post, "/v1/conversations", token: spammer.token, encoding: ["userId": targets[3].id])
            #expect(refused.status == .tooManyRequests && refused.headers[.retryAfter] != nil)
            let bySend = try await api.request(
                .post, "/v1/messages", token: spammer.token,
                encoding: SendRequest(clientId: .random(), recipientId: targets[4].id, text: "hi"))
            #expect(bySend.status == .tooManyRequests, "a first message by recipientId counts too")
            #expect(
                try await api.request(.post, "/v1/conversations", token: spammer.token, encoding: ["userId": targets[0].id]).status == .ok,
                "an existing conversation costs nothing")
            _ = try await api.send("still fine", from: spammer, to: targets[1])
        }
    }

    @Test func typingBeyondItsBudgetIsDropped() async throws {
        try await TestServer.run(configure: {
            $0.typingPerSecond = 0.05; $0.stopRateLimitClock()
        }) { api in  // the burst of 5, no refill
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let conversation = try await api.send("hi", from: alice, to: bob).conversationId
            let a = try await api.socket(alice), b = try await api.socket(bob)
            for _ in 0..<40 {
                a.send(.typing(conversationId: conversation, isTyping: false))
                a.send(.typing(conversationId: conversation, isTyping: true))
            }
            a.send(.ping(ref: "done"))
            _ = try await a.inbox.waitFor("pong") { $0.contains(.pong(ref: "done")) ? true : nil }
            // Alice's frames were all handled before her pong; bob's pong is queued after whatever
            // they relayed to him.
            b.send(.ping(ref: "flushed"))
            _ = try await b.inbox.waitFor("pong") { $0.contains(.pong(ref: "flushed")) ? true : nil }
            let starts = await b.inbox.frames.filter { if case .typing(_, _, true) = $0 { true } else { false } }.count
            #expect(starts == 5, "40 typing frames in a burst reach bob \(starts) times: the burst")
        }
    }

    @Test func theDirectoryCannotBeListedBySearching() async throws {
        try await TestServer.run(configure: {
            $0.searchesPerMinute = 4; $0.stopRateLimitClock()
        }) { api in
            let me = try await api.register("searcher")
            for name in ["alice", "alfred", "albert", "bob"] { _ = try await api.register(name, displayName: "\(name.capitalized) Smith") }
            for short in ["a", "al", "al%00"] {
                #expect(try await api.request(.get, "/v1/users?query=\(short)", token: me.token).errorCode == .invalidQuery, "\(short)")
            }
            let found = try await api.request(.get, "/v1/users?query=alf", token: me.token).decode(API.UserList.self)
            #expect(found.users.map(\.username) == ["alfred"])
            let byWord = try await api.request(.get, "/v1/users?query=smi", token: me.token).decode(API.UserList.self)
            #expect(byWord.users.count == 4, "display names match by word prefix")
            let inside = try await api.request(.get, "/v1/users?query=lic", token: me.token).decode(API.UserList.self)
            #expect(inside.users.isEmpty, "no match in the middle of a name")
            #expect(try await api.request(.get, "/v1/users?query=ali&limit=21", token: me.token).errorCode == .invalidQuery, "at most 20")
            #expect(try await api.request(.get, "/v1/users?query=bob", token: me.token).status == .ok)
            let limited = try await api.request(.get, "/v1/users?query=bob", token: me.token)
            #expect(limited.status == .tooManyRequests)
        }
    }

    @Test func staticFilesServeOnlyWhatIsInThePublicFolder() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parley-public-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("js"), withIntermediateDirectories: true)
        try Data("<svg/>".utf8).write(to: folder.appendingPathComponent("favicon.svg"))
        try Data("ok".utf8).write(to: folder.appendingPathComponent("js/app.js"))
        let secret = FileManager.default.temporaryDirectory.appendingPathComponent("parley-secret-\(UUID().uuidString)")
        try Data("secret".utf8).write(to: secret)
        try FileManager.default.createSymbolicLink(at: folder.appendingPathComponent("leak.txt"), withDestinationURL: secret)
        try await TestServer.run(configure: { $0.publicDirectory = folder.path }) { api in
            #expect(try await api.request(.get, "/js/app.js").status == .ok)
            #expect(try await api.request(.get, "/favicon.svg").status == .ok)
            let nul = try await api.request(.get, "/favicon.svg%00.html")
            #expect(nul.status == .notFound && nul.headers[.contentType]?.contains("html") != true)
            let doubleSlash = try await api.request(.get, "//js")
            #expect(doubleSlash.status == .notFound && doubleSlash.headers[.location] == nil)
            let link = try await api.request(.get, "/leak.txt")
            #expect(link.status == .notFound && !String(buffer: link.body).contains("secret"))
            #expect(try await api.request(.get, "/js/../favicon.svg").status == .notFound)
        }
    }

    @Test func jsonRoutesRefuseOtherContentTypes() async throws {
        try await TestServer.run { api in
            let body = #"{"username":"alice","password":"correct horse"}"#
            let plain = try await api.request(.post, "/v1/auth/login", json: body, headers: [.contentType: "text/plain"])
            #expect(plain.status == .unsupportedMediaType && plain.errorCode == .unsupportedMediaType)
            let form = try await api.request(.post, "/v1/auth/register", json: body, headers: [.contentType: "application/x-www-form-urlencoded"])
            #expect(form.status == .unsupportedMediaType)
        }
    }

    @Test func unsupportedMethodsGet405WithAllow() async throws {
        try await TestServer.run { api in
            let me = try await api.request(.delete, "/v1/me")
            #expect(me.status == .methodNotAllowed && me.headers[.allow] == "GET, PATCH" && me.errorCode == .methodNotAllowed)
            let conversations = try await api.request(.put, "/v1/conversations")
            #expect(conversations.status == .methodNotAllowed && conversations.headers[.allow] == "GET, POST")
            let login = try await api.request(.get, "/v1/auth/login")
            #expect(login.headers[.allow] == "POST")
            let byID = try await api.request(.patch, "/v1/conversations/\(ConversationID.direct(.random(), .random()).rawValue)/messages")
            #expect(byID.status == .methodNotAllowed)
            let socket = try await api.request(.get, "/v1/ws")
            #expect(socket.status.code == 426 && socket.headers[.upgrade] == "websocket")
        }
    }

    @Test func metricsNeedTheTokenWhenOneIsSet() async throws {
        try await TestServer.run(configure: { $0.metricsToken = "metrics-secret-0123456789" }) { api in
            #expect(try await api.request(.get, "/metrics").status == .unauthorized)
            let wrong = try await api.request(.get, "/metrics", headers: [.authorization: "Bearer metrics-secret-0123456780"])
            #expect(wrong.status == .unauthorized)
            let right = try await api.request(.get, "/metrics", headers: [.authorization: "Bearer metrics-secret-0123456789"])
            #expect(right.status == .ok && String(buffer: right.body).contains("parley_"))
        }
    }

    @Test func withoutATokenMetricsAnswerLoopbackClientsOnly() async throws {
        try await TestServer.run(configure: { $0.trustedProxies = TrustedProxies([IPNetwork("127.0.0.1")].compactMap { $0 }) }) { api in
            #expect(try await api.request(.get, "/metrics").status == .ok)
            let remote = try await api.request(.get, "/metrics", headers: [HTTPField.Name("X-Forwarded-For")!: "203.0.113.7"])
            #expect(remote.status == .unauthorized)
        }
    }

    @Test func theErrorAnsweringHelloCarriesItsRef() async throws {
        try await TestServer.run { api in
            let socket = try await TestSocket.connect(port: api.port, hello: nil)
            socket.sendRaw(#"{"type":"hello","token":"nope","ref":"h1"}"#)
            let error = try await socket.firstError()
            #expect(error.code == .unauthorized && error.ref == "h1")
        }
    }

    @Test func theDatabaseFilesAreReadableByTheirOwnerOnly() async throws {
        let path = TestServer.temporaryDatabase()
        let store = try SQLiteStore(path: path)
        _ = try await store.createUser(.init(username: "alice", displayName: "Alice", passwordHash: "x"), now: .now())
        for file in [path, path + "-wal", path + "-shm"] {
            let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file): \(String(mode ?? 0, radix: 8))")
        }
        try await store.close()
    }
}
