import Foundation
import ParleyCore
import ParleySDK
import Testing

/// Signing in, restoring, waiting for sync, and what a revoked session does to a running client.
@MainActor
@Suite struct AccountLifecycleTests {
    @Test func registerConnectRestoreAndSignOut() async throws {
        let server = try ServerHarness()
        try await server.start()
        let storage = ClientStorage(directory: temporaryDirectory())
        #expect(try ParleyClient.restore(from: storage) == nil, "nothing saved yet")
        let client = try await ParleyClient.register(to: server.url, username: "ada", displayName: "Ada", password: "analytical-1843", storage: storage)
        try await client.connect()
        #expect(client.connectionState == .online && client.listState == .loaded)
        client.stop()

        // The token and the messages are the owner's only.
        func mode(_ path: String) -> Int? { (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int }
        #expect(mode(storage.directory.path) == 0o700 && mode(storage.directory.appendingPathComponent("session.json").path) == 0o600)
        #expect(mode(storage.directory.appendingPathComponent("account-\(client.me.id.rawValue).sqlite").path) == 0o600)

        let restored = try #require(try ParleyClient.restore(from: storage))
        #expect(restored.me.username == "ada")
        try await restored.connect()
        let token = restored.session.token
        await restored.signOut(storage: storage)
        #expect(restored.connectionState == .offline)
        #expect(try ParleyClient.restore(from: storage) == nil, "the saved session is gone")
        await #expect(throws: ParleyClientError.self, "and so is the token") {
            try await HTTPParleyAPI(baseURL: server.url, client: server.http).conversations(token: token)
        }
        let again = try await ParleyClient.signIn(to: server.url, username: "ada", password: "analytical-1843", storage: storage)
        try await again.connect()
        again.stop()
        await server.stop()
    }

    @Test func aWrongPasswordIsAnErrorWithItsCode() async throws {
        let (server, _, _) = try await ServerHarness.withAliceAndBob()
        let storage = ClientStorage(directory: temporaryDirectory())
        do {
            _ = try await ParleyClient.signIn(to: server.url, username: "alice", password: "not the password", storage: storage)
            Issue.record("signed in with a wrong password")
        } catch let error as ParleyClientError {
            #expect(error.code == .invalidCredentials)
        }
        await server.stop()
    }

    /// Logging out everywhere ends the running client's session: it says `unauthorized` and stops
    /// reconnecting (it used to loop connecting → offline forever).
    @Test func aRevokedSessionStopsTheClientAndTellsTheApp() async throws {
        let (server, aliceSession, _) = try await ServerHarness.withAliceAndBob()
        let alice = try server.client(aliceSession, directory: temporaryDirectory())
        let events = alice.events()
        try await alice.connect()
        let other = try await HTTPParleyAPI(baseURL: server.url, client: server.http).login(username: "alice", password: "password123")
        try await server.logoutEverywhere(token: other.token)
        _ = try await eventually("unauthorized") { alice.connectionState == .unauthorized ? true : nil }
        try await Task.sleep(for: .seconds(1))
        #expect(alice.connectionState == .unauthorized, "no reconnecting with a dead token")
        await #expect(throws: ParleyClientError.self) { try await alice.connect() }
        var seen: [ClientEvent] = []
        for await event in events {
            seen.append(event)
            if event == .connection(.unauthorized) { break }
        }
        #expect(seen.contains(.connection(.unauthorized)))
        await server.stop()
    }
}
