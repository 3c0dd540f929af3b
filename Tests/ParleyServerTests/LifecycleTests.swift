import Foundation
import NIOCore
import Synchronization
import HummingbirdTesting
import ParleyBench
import ParleyCore
import ParleySQLite
import ParleyStore
import Testing
import HTTPTypes
import Logging
import ParleyServer
import NIOWebSocket
import WSCore

/// Guarantee 3 across restarts and crashes, and graceful shutdown.
@Suite struct LifecycleTests {
    @Test func gracefulShutdownClosesSocketsAndTheDatabaseAfterCommittedWork() async throws {
        let database = TestServer.temporaryDatabase()
        let (a, b, store) = try await TestServer.run(database: database) { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let a = try await api.socket(alice), b = try await api.socket(bob)
            a.send(.send(SendRequest(clientId: .random(), recipientId: bob.id, text: "before shutdown")))
            _ = try await b.message(seq: 1)
            for i in 0..<20 { a.send(.send(SendRequest(clientId: .random(), recipientId: bob.id, text: "in flight \(i)"))) }
            return (a, b, api.store)
        }
        // The server has stopped: both sockets were closed by it, cleanly.
        for socket in [a, b] {
            let close = try await socket.closed()
            #expect(close?.closeCode == .normalClosure || close?.closeCode == .goingAway)
        }
        await #expect(throws: (any Error).self, "the database is closed last") { try await store.ping() }
        // Everything acknowledged before the stop is stored.
        let reopened = try SQLiteStore(path: database)
        let acked = await a.inbox.frames.compactMap { if case .sent(_, let message, _, _) = $0 { message } else { nil } }
        let stored = try await reopened.messages(in: acked[0].conversationId, as: acked[0].senderId, query: HistoryQuery(limit: 200)).messages
        #expect(Set(acked).isSubset(of: Set(stored)))
        #expect(stored.map(\.seq) == Array(1...Int64(stored.count)))
    }

    /// A server given no files location keeps them in a temporary directory, removed when it stops.
    @Test func aTemporaryFilesDirectoryIsRemovedAtShutdown() async throws {
        let log = CapturedLog()
        let directory = try await TestServer.run(logger: log.logger, configure: { $0.logLevel = .notice }) { _ in
            let line = try #require(log.lines.first { $0.contains("temporary directory") })
            let directory = String(try #require(line.firstMatch(of: /\/[^"\]\s]*parley-files-[0-9A-F-]+/)).output)
            #expect(FileManager.default.fileExists(atPath: directory + "/blobs"))
            return directory
        }
        #expect(!FileManager.default.fileExists(atPath: directory))
    }

    @Test func sigtermShutsTheRealBinaryDownCleanly() async throws {
        let server = try await launch(database: TestServer.temporaryDatabase())
        #expect(server.stop() == 0)
        let log = server.output
        #expect(log.contains("Database closed"), "\(log)")
    }

    @Test func acknowledgedMessagesSurviveARestartAndResumeWorksAcrossIt() async throws {
        let database = TestServer.temporaryDatabase()
        let (alice, bob, position, acked) = try await TestServer.run(database: database) { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let b = try await api.socket(bob, after: 0)
            _ = try await b.synced()
            let a = try await api.socket(alice)
            for i in 1...150 { a.send(.send(SendRequest(clientId: .random(), recipientId: bob.id, text: "m\(i)"))) }
            let acked = try await a.sentAcks(count: 150).map(\.message)
            _ = try await b.message(seq: 50)
            let position = try #require(
                await b.inbox.streamEvents.first { event in
                    if case .message(let message) = event.payload { message.seq == 50 } else { false }
                }?.position)
            return (alice, bob, position, acked)
        }
        try await TestServer.run(database: database) { api in
            let id = acked[0].conversationId
            let page = try await api.request(.get, "/v1/conversations/\(id)/messages?limit=200", token: bob.token).decode(API.MessagePage.self)
            #expect(page.messages == acked)
            // The session tokens and the stream survive too: bob resumes where he left off.
            let b = try await api.socket(bob, after: position)
            _ = try await b.synced()
            #expect(await b.inbox.messages.map(\.seq) == Array(51...150))
            let next = try await api.send("after restart", from: alice, in: id)
            #expect(next.seq == 151)
        }
    }

    @Test func aCrashLosesNoAcknowledgedMessageAndRetriesHealTheRest() async throws {
        let database = TestServer.temporaryDatabase()
        let texts = (1...300).map { "crash test \($0)" }
        let clientIds = texts.map { _ in ClientMessageID.random() }

        let first = try await launch(database: database)
        defer { first.stop() }  // a no-op after the crash; stops it if the test fails before
        let store = try SQLiteStore(path: database)
        // The crash closes the test client's connection under it: its shutdown may then find the
        // channel mid-close ("I/O on closed channel"), which says nothing about the server.
        let (alice, bob, acked) = try await Self.withClientAcrossACrash(port: first.port) { client in
            let api = TestAPI(connectedTo: client, port: first.port, store: store)
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let a = try await api.socket(alice)
            for (text, clientId) in zip(texts, clientIds) {
                a.send(.send(SendRequest(clientId: clientId, recipientId: bob.id, text: text)))
            }
            _ = try await a.sentAcks(count: 40)
            first.crash()
            let acked = await a.inbox.frames.compactMap { if case .sent(_, let message, _, _) = $0 { message } else { nil } }
            return (alice, bob, acked)
        }
        #expect(acked.count >= 40)
        let id = ConversationID.direct(alice.id, bob.id)
        let afterCrash = try await Self.wholeHistory(of: id, as: bob.id, in: store)  // more than one page under load
        #expect(Set(acked).isSubset(of: Set(afterCrash)), "every acknowledged message is on disk")

        // The client retries everything it has no ack for; the server stores each exactly once.
        let second = try await launch(database: database)
        defer { second.stop() }
        try await TestClient.withClient(host: "127.0.0.1", port: second.port) { client in
            let api = TestAPI(connectedTo: client, port: second.port, store: store)
            let ackedIds = Set(acked.map(\.clientId))
            let a = try await api.socket(alice)
            let retries = zip(texts, clientIds).filter { !ackedIds.contains($0.1) }
            for (text, clientId) in retries { a.send(.send(SendRequest(clientId: clientId, recipientId: bob.id, text: text))) }
            _ = try await a.sentAcks(count: retries.count)
        }
        let all = try await Self.wholeHistory(of: id, as: bob.id, in: store)
        #expect(all.count == 300)
        #expect(all.map(\.seq) == Array(1...300))
        #expect(Set(all.map(\.clientId)) == Set(clientIds))
    }

    /// ``TestClient/withClient(host:port:configuration:eventLoopGroupProvider:operation:)`` whose
    /// operation's value survives a shutdown that finds the channel already closing.
    static func withClientAcrossACrash<Value: Sendable>(port: Int, _ operation: @escaping @Sendable (TestClient) async throws -> Value)
        async throws -> Value
    {
        let result = Mutex<Result<Value, any Error>?>(nil)
        do {
            try await TestClient.withClient(host: "127.0.0.1", port: port) { client in
                do {
                    let value = try await operation(client)
                    result.withLock { $0 = .success(value) }
                } catch {
                    result.withLock { $0 = .failure(error) }
                    throw error
                }
            }
        } catch ChannelError.ioOnClosedChannel {
            // From the shutdown, when the operation returned; its own errors are thrown below.
        }
        return try #require(result.withLock { $0 }, "the operation neither returned nor threw").get()
    }

    static func wholeHistory(of id: ConversationID, as reader: UserID, in store: SQLiteStore) async throws -> [Message] {
        var all: [Message] = []
        var before: Int64?
        repeat {
            let page = try await store.messages(in: id, as: reader, query: HistoryQuery(limit: 200, before: before))
            all = page.messages + all
            before = page.hasMore ? page.messages.first?.seq : nil
        } while before != nil
        return all
    }
}

/// The real `parley` binary (built next to the test bundle) as a child process, durable, as deployed.
func launch(database: String) async throws -> ServerLauncher {
    let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("parley").path
    return try await ServerLauncher(binary: binary, database: database, extraArguments: ["--durability", "full", "--sends-per-second", "100000"])
}
