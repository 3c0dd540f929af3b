import Foundation
import Logging
import ParleyCore
@testable import ParleyServer
import ParleySQLite
import ParleyStore
import ServiceLifecycle
import Testing
import NIOWebSocket
import WSCore

/// Graceful shutdown under load: no new frame is handled, every send that was committed still gets
/// its `sent` answer, and sockets close with 1001 ("going away"), not 1000.
@Suite struct GracefulDrainTests {
    static func account(_ username: String, in store: SQLiteStore) async throws -> Account {
        let user = try await store.createUser(NewUser(username: username, displayName: username, passwordHash: "x"), now: .now())
        let token = SessionTokens.generate()
        try await store.createSession(tokenHash: SessionTokens.hash(token), user: user.id, expiresAt: Timestamp.now().adding(seconds: 600), now: .now())
        return Account(user: user, token: token)
    }

    /// A server on `store`, run by its service group as `parley serve` runs it; returns once it listens.
    static func serve(_ store: SQLiteStore) async throws -> (port: Int, group: ServiceGroup, running: Task<Void, any Error>) {
        var configuration = TestServer.configuration()
        // What these tests check does not depend on the limit, and a loaded machine (the whole
        // suite at once) has taken more than the default 10 s to drain: the group then cancels.
        configuration.shutdownGraceSeconds = 120
        let (ready, signal) = AsyncStream.makeStream(of: Int.self)
        configuration.onServerRunning = { signal.yield($0) }
        let app = try await buildApplication(configuration, store: store)
        let group = makeServiceGroup(app, configuration: configuration, signals: [], logger: Logger(label: "drain"))
        let running = Task { try await group.run() }
        var iterator = ready.makeAsyncIterator()
        return (try #require(await iterator.next()), group, running)
    }

    @Test func committedSendsAreAnsweredAndSocketsCloseWith1001() async throws {
        let database = TestServer.temporaryDatabase()
        let store = try SQLiteStore(path: database, durability: .normal)
        let alice = try await Self.account("alice", in: store), bob = try await Self.account("bob", in: store)
        let (port, group, running) = try await Self.serve(store)

        let a = try await TestSocket.connect(port: port, hello: .hello(token: alice.token, after: nil))
        let b = try await TestSocket.connect(port: port, hello: .hello(token: bob.token, after: nil))
        let sending = Task {
            for index in 0..<5_000 where !Task.isCancelled {
                a.send(.send(SendRequest(ref: "\(index)", clientId: .random(), recipientId: bob.id, text: "m\(index)")))
                try await Task.sleep(for: .microseconds(300))
            }
        }
        // Under way (the flood goes on to 5,000): the shutdown meets sends in flight, whatever the
        // machine's pace. Waiting for a long run of them here only measured the disk under load.
        _ = try await b.message(seq: 20)
        await group.triggerGracefulShutdown()
        try await running.value
        sending.cancel()

        #expect(try await a.closed()?.closeCode == .goingAway)
        #expect(try await b.closed()?.closeCode == .goingAway)
        let reopened = try SQLiteStore(path: database)
        let conversation = ConversationID.direct(alice.id, bob.id)
        let committed = try await reopened.messages(in: conversation, as: alice.id, query: HistoryQuery(limit: 200, after: 0))
        var stored = committed.messages
        while stored.count % 200 == 0, let last = stored.last {
            stored += try await reopened.messages(in: conversation, as: alice.id, query: HistoryQuery(limit: 200, after: last.seq)).messages
            if stored.last == last { break }
        }
        let acked = Set(await a.inbox.frames.compactMap { if case .sent(_, let message, _, _) = $0 { message.clientId } else { nil } })
        let unanswered = stored.filter { !acked.contains($0.clientId) }
        #expect(stored.count >= 20)
        #expect(unanswered.isEmpty, "\(unanswered.count) of \(stored.count) committed sends got no answer")
    }

    /// Shutdown waits for closed connections to finish, so each user's last seen is recorded before
    /// the database closes.
    @Test func shutdownRecordsLastSeenOfEveryConnectedUser() async throws {
        let database = TestServer.temporaryDatabase()
        let store = try SQLiteStore(path: database, durability: .normal)
        var accounts: [Account] = []
        for index in 0..<20 { accounts.append(try await Self.account("user\(index)", in: store)) }
        let (port, group, running) = try await Self.serve(store)
        var sockets: [TestSocket] = []
        for account in accounts { sockets.append(try await TestSocket.connect(port: port, hello: .hello(token: account.token, after: nil))) }

        await group.triggerGracefulShutdown()
        try await running.value

        let reopened = try SQLiteStore(path: database)
        let seen = try await reopened.lastSeen(accounts.map(\.user.id))
        #expect(seen.count == accounts.count, "last seen recorded for \(seen.count) of \(accounts.count) users")
        for socket in sockets { #expect(try await socket.closed()?.closeCode == .goingAway) }
    }
}
