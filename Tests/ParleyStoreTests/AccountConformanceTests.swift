import ParleyCore
import ParleyStore
import Testing

@Suite struct AccountConformanceTests {
    @Test(arguments: StoreBackend.all)
    func usernamesAreUnique(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let alice = try await store.makeUser("alice")
        await #expect(throws: StoreError.usernameTaken) { try await store.makeUser("alice") }
        #expect(try await store.user(alice.id) == alice)
        #expect(try await store.credentials(username: "alice")?.passwordHash == "hash")
        #expect(try await store.credentials(username: "nobody") == nil)
    }

    @Test(arguments: StoreBackend.all)
    func searchMatchesUsernameDisplayNameAndWordPrefixesButNotMe(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let me = try await store.makeUser("ada", displayName: "Ada Lovelace")
        _ = try await store.makeUser("adam", displayName: "Adam Smith")
        _ = try await store.makeUser("grace", displayName: "Grace Hopper")
        _ = try await store.makeUser("a_b", displayName: "Under Score")
        _ = try await store.makeUser("axb", displayName: "Ex Bee")
        #expect(try await store.searchUsers(prefix: "ad", excluding: me.id, limit: 10).map(\.username) == ["adam"])
        #expect(try await store.searchUsers(prefix: "HOP", excluding: me.id, limit: 10).map(\.username) == ["grace"])
        #expect(try await store.searchUsers(prefix: "grace h", excluding: me.id, limit: 10).map(\.username) == ["grace"])
        // LIKE wildcards in the query are literal characters.
        #expect(try await store.searchUsers(prefix: "a_", excluding: me.id, limit: 10).map(\.username) == ["a_b"])
        #expect(try await store.searchUsers(prefix: "%", excluding: me.id, limit: 10).isEmpty)
        #expect(try await store.searchUsers(prefix: "a", excluding: me.id, limit: 2).count == 2)
    }

    @Test(arguments: StoreBackend.all)
    func sessionsExpireAndCanBeRevoked(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let user = try await store.makeUser("alice")
        let now = Timestamp.now()
        try await store.createSession(tokenHash: "h1", user: user.id, expiresAt: now.adding(seconds: 60), now: now)
        try await store.createSession(tokenHash: "h2", user: user.id, expiresAt: now.adding(seconds: 60), now: now)
        #expect(try await store.sessionUser(tokenHash: "h1", now: now) == user.id)
        #expect(try await store.sessionUser(tokenHash: "h1", now: now.adding(seconds: 61)) == nil)
        try await store.deleteSession(tokenHash: "h1")
        #expect(try await store.sessionUser(tokenHash: "h1", now: now) == nil)
        #expect(try await store.sessionUser(tokenHash: "h2", now: now) == user.id, "revoking one session leaves the others")
        #expect(try await store.sessionUser(tokenHash: "unknown", now: now) == nil)
    }

    @Test(arguments: StoreBackend.all)
    func lastSeenIsRecorded(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let alice = try await store.makeUser("alice"), bob = try await store.makeUser("bob")
        try await store.recordLastSeen(alice.id, at: Timestamp(milliseconds: 1234))
        #expect(try await store.lastSeen([alice.id, bob.id]) == [alice.id: Timestamp(milliseconds: 1234)])
    }
}
