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
        let expiry = now.adding(seconds: 60)
        #expect(try await store.session(tokenHash: "h1", now: now) == SessionInfo(user: user.id, expiresAt: expiry))
        #expect(try await store.session(tokenHash: "h1", now: now.adding(seconds: 61)) == nil)
        try await store.deleteSession(tokenHash: "h1")
        #expect(try await store.session(tokenHash: "h1", now: now) == nil)
        #expect(try await store.session(tokenHash: "h2", now: now)?.user == user.id, "revoking one session leaves the others")
        #expect(try await store.session(tokenHash: "unknown", now: now) == nil)
    }

    @Test(arguments: StoreBackend.all)
    func loggingOutEverywhereRevokesEverySessionOfThatUserOnly(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let alice = try await store.makeUser("alice"), bob = try await store.makeUser("bob")
        let now = Timestamp.now(), later = now.adding(seconds: 60)
        for hash in ["a1", "a2", "a3"] { try await store.createSession(tokenHash: hash, user: alice.id, expiresAt: later, now: now) }
        try await store.createSession(tokenHash: "b1", user: bob.id, expiresAt: later, now: now)
        try await store.deleteSessions(of: alice.id, keeping: "a2")
        #expect(try await store.session(tokenHash: "a1", now: now) == nil)
        #expect(try await store.session(tokenHash: "a2", now: now)?.user == alice.id, "the kept session stays")
        #expect(try await store.session(tokenHash: "a3", now: now) == nil)
        try await store.deleteSessions(of: alice.id, keeping: nil)
        #expect(try await store.session(tokenHash: "a2", now: now) == nil)
        #expect(try await store.session(tokenHash: "b1", now: now)?.user == bob.id, "other users keep their sessions")
    }

    @Test(arguments: StoreBackend.all)
    func changingThePasswordReplacesTheHashAndRevokesOtherSessions(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let alice = try await store.makeUser("alice")
        let now = Timestamp.now(), later = now.adding(seconds: 60)
        for hash in ["here", "phone"] { try await store.createSession(tokenHash: hash, user: alice.id, expiresAt: later, now: now) }
        try await store.changePassword(of: alice.id, to: "new-hash", keeping: "here")
        #expect(try await store.credentials(username: "alice")?.passwordHash == "new-hash")
        #expect(try await store.session(tokenHash: "here", now: now)?.user == alice.id)
        #expect(try await store.session(tokenHash: "phone", now: now) == nil)
        await #expect(throws: StoreError.userNotFound) { try await store.changePassword(of: .random(), to: "x", keeping: nil) }
    }

    @Test(arguments: StoreBackend.all)
    func aNewDisplayNameIsReadEverywhereAndFoundBySearchInsteadOfTheOld(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let alice = try await store.makeUser("alice", displayName: "Ada Lovelace"), bob = try await store.makeUser("bob")
        #expect(try await store.searchUsers(prefix: "lovelace", excluding: bob.id, limit: 5).map(\.id) == [alice.id])
        let renamed = try await store.setDisplayName(of: alice.id, to: "Zoë Quill")
        #expect(renamed.id == alice.id && renamed.username == "alice" && renamed.displayName == "Zoë Quill")
        #expect(try await store.user(alice.id)?.displayName == "Zoë Quill")
        #expect(try await store.credentials(username: "alice")?.user.displayName == "Zoë Quill")
        #expect(try await store.searchUsers(prefix: "quill", excluding: bob.id, limit: 5).map(\.id) == [alice.id])
        #expect(try await store.searchUsers(prefix: "lovelace", excluding: bob.id, limit: 5).isEmpty)
        #expect(try await store.user(bob.id)?.displayName == bob.displayName, "nobody else changes")
        let direct = try await store.createDirectConversation(between: bob.id, and: alice.id, now: .now()).conversation.id
        let members = try await store.conversation(direct, as: bob.id).members
        #expect(members.first { $0.userId == alice.id }?.displayName == "Zoë Quill", "members are read with the name as now")
        await #expect(throws: StoreError.userNotFound) { try await store.setDisplayName(of: .random(), to: "Nobody") }
    }

    @Test(arguments: StoreBackend.all)
    func lastSeenIsRecorded(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let alice = try await store.makeUser("alice"), bob = try await store.makeUser("bob")
        try await store.recordLastSeen(alice.id, at: Timestamp(milliseconds: 1234))
        #expect(try await store.lastSeen([alice.id, bob.id]) == [alice.id: Timestamp(milliseconds: 1234)])
    }
}
