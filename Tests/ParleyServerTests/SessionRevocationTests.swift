import Foundation
import HTTPTypes
import ParleyCore
import ParleyStore
import Testing
import NIOWebSocket
import ParleyServer
import WSCore

/// Ending a session ends its sockets at once: logout, log out everywhere, a password change, and
/// expiry. A revoked socket gets an `unauthorized` error and close 1008, and can neither send nor
/// receive in between.
@Suite struct SessionRevocationTests {
    @Test func loggingOutClosesThatSessionsSocketOnly() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let otherDevice = try await api.login("alice")
            let revoked = try await api.socket(alice), kept = try await api.socket(otherDevice)

            #expect(try await api.request(.post, "/v1/auth/logout", token: alice.token).status == .noContent)
            #expect(try await revoked.firstError().code == .unauthorized)
            #expect(try await revoked.closed()?.closeCode == .policyViolation)

            _ = try await api.send("still there?", from: bob, to: alice)
            #expect(try await kept.message(seq: 1).text == "still there?", "the other session goes on")
            #expect(await revoked.inbox.messages.isEmpty, "nothing reaches the revoked socket")
        }
    }

    @Test func aRevokedSocketCannotSendInTheMeantime() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let socket = try await api.socket(alice)
            _ = try await api.request(.post, "/v1/auth/logout", token: alice.token)
            socket.send(.send(SendRequest(ref: "late", clientId: .random(), recipientId: bob.id, text: "after logout")))
            _ = try await socket.closed()
            #expect(await !socket.inbox.frames.contains { if case .sent = $0 { true } else { false } })
            #expect(try await api.conversations(of: bob).isEmpty, "the frame was not handled")
        }
    }

    @Test func loggingOutEverywhereClosesEverySocketAndEndsEveryToken() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice")
            let phone = try await api.login("alice")
            let sockets = [try await api.socket(alice), try await api.socket(phone)]
            #expect(try await api.request(.post, "/v1/auth/logout-all", token: phone.token).status == .noContent)
            for socket in sockets {
                #expect(try await socket.firstError().code == .unauthorized)
                #expect(try await socket.closed()?.closeCode == .policyViolation)
            }
            for token in [alice.token, phone.token] {
                #expect(try await api.request(.get, "/v1/me", token: token).status == .unauthorized)
            }
        }
    }

    @Test func changingThePasswordKeepsThisSessionAndEndsTheOthers() async throws {
        try await TestServer.run { api in
            let here = try await api.register("alice", password: "old password")
            let elsewhere = try await api.login("alice", password: "old password")
            let hereSocket = try await api.socket(here), elsewhereSocket = try await api.socket(elsewhere)

            let wrong = try await api.request(
                .post, "/v1/auth/password", token: here.token,
                encoding: API.ChangePasswordRequest(currentPassword: "not my password", newPassword: "new password"))
            #expect(wrong.status == .unauthorized && wrong.errorCode == .invalidCredentials)
            let weak = try await api.request(
                .post, "/v1/auth/password", token: here.token,
                encoding: API.ChangePasswordRequest(currentPassword: "old password", newPassword: "short"))
            #expect(weak.errorCode == .invalidPassword)

            let changed = try await api.request(
                .post, "/v1/auth/password", token: here.token,
                encoding: API.ChangePasswordRequest(currentPassword: "old password", newPassword: "new password"))
            #expect(changed.status == .noContent)
            #expect(try await elsewhereSocket.closed()?.closeCode == .policyViolation)
            #expect(try await api.request(.get, "/v1/me", token: elsewhere.token).status == .unauthorized)
            #expect(try await api.request(.get, "/v1/me", token: here.token).status == .ok)
            hereSocket.send(.ping(ref: "alive"))
            _ = try await hereSocket.inbox.waitFor("pong") { $0.contains(.pong(ref: "alive")) ? true : nil }
            #expect(try await api.login("alice", password: "new password").user.id == here.id)
            let old = try await api.request(.post, "/v1/auth/login", encoding: API.LoginRequest(username: "alice", password: "old password"))
            #expect(old.status == .unauthorized)
        }
    }

    @Test func anExpiredSessionsSocketIsClosed() async throws {
        try await TestServer.run(configure: { $0.sessionLifetimeSeconds = 1.5 }) { api in
            let alice = try await api.register("alice")
            let socket = try await api.socket(alice)
            let start = ContinuousClock.now
            #expect(try await socket.firstError().code == .unauthorized)
            #expect(try await socket.closed()?.closeCode == .policyViolation)
            #expect(ContinuousClock.now - start < .seconds(10), "expiry is checked about once a second")
        }
    }
}
