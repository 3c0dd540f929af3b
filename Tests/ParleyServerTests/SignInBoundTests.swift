import Foundation
import HTTPTypes
import Logging
import NIOWebSocket
import ParleyCore
@testable import ParleyPostgres
import ParleyTestSupport
import PostgresNIO
import Testing
import WSCore

/// ConnectionLifecycle rule 6: a sign-in whose database step never answers is let go after
/// `--sign-in-timeout` (detached, closed 1011), and a count that lands after that is taken back:
/// nobody stays online through a socket that is gone (issue #33's stale sockets).
@Suite struct SignInBoundTests {
    @Test(.timeLimit(.minutes(10))) func aSignInTheDatabaseDoesNotAnswerIsLetGoAndItsLateCountTakenBack() async throws {
        try await TestCluster.run(nodes: 1, arguments: ["--sign-in-timeout", "1s"]) { cluster in
            try await cluster.withAPI(0) { api in try await Self.check(api, cluster) }
        }
    }

    static func check(_ api: TestAPI, _ cluster: TestCluster) async throws {
        let logger = Logger(label: "test")
        let ada = try await api.register("ada"), grace = try await api.register("grace")
        let first = try await api.send("hi", from: ada, to: grace)
        _ = try await api.send("hello", from: grace, in: first.conversationId)
        let watcher = try await api.socket(grace)
        #expect(try await connectionsCounted(api) == 1)

        // Another transaction holds the presence table, so counting Ada's connection, once she is
        // signed in and attached, waits on it: the database "does not answer" that step.
        let blocker = try await PostgresConnection.connect(
            on: PostgresClient.defaultEventLoopGroup.any(), configuration: try DatabaseURL(cluster.databaseURL).connectionConfiguration(), id: 1,
            logger: logger
        ).get()
        try await blocker.query("BEGIN", logger: logger)
        try await blocker.query("LOCK TABLE presence IN EXCLUSIVE MODE", logger: logger)
        let stuck = try await TestSocket.connect(port: api.port, hello: nil)
        stuck.send(.hello(token: ada.token, after: nil))
        let close = try await stuck.closed()
        #expect(close?.closeCode == .unexpectedServerError, "let go, so the client connects again")
        #expect(await stuck.inbox.frames.isEmpty, "never welcomed")
        #expect(try await connectionsCounted(api) == 1, "only Grace's socket is attached")

        // The count lands late and is taken back at once: no presence row holds Ada online.
        try await blocker.query("COMMIT", logger: logger)
        try await blocker.close()
        try await waitUntil("Ada's late count is taken back") {
            try await cluster.store.read { db in
                try await db.value(
                    "SELECT COALESCE(SUM(connections), 0)::BIGINT FROM presence WHERE user_id = \(ada.id.rawValue)", as: Int64.self, logger)
            } == 0
        }
        let sawOnline = await watcher.inbox.frames.contains { if case .presence(ada.id, true, _) = $0 { true } else { false } }
        #expect(!sawOnline, "Grace never saw Ada online")

        // And she signs in normally once the database answers.
        let back = try await api.socket(ada)
        _ = try await back.synced()
        _ = try await watcher.presence(ada.id, online: true)
        await back.close()
        try await waitUntil("Ada's socket is let go") { try await connectionsCounted(api) == 1 }
    }

    /// The node's `parley_websocket_connections` (a process of its own: its metrics are its own).
    static func connectionsCounted(_ api: TestAPI) async throws -> Int {
        let body = String(buffer: try await api.request(.get, "/metrics").body)
        guard let line = body.split(separator: "\n").first(where: { $0.hasPrefix("parley_websocket_connections ") }),
            let value = Double(line.split(separator: " ").last ?? "")
        else { throw TestFailure("no parley_websocket_connections in /metrics") }
        return Int(value)
    }

    /// Polls `condition` until it holds; fails after 15 s (a hang guard, not a timing check).
    static func waitUntil(_ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now.advanced(by: .seconds(15))
        while ContinuousClock.now < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestFailure("timed out waiting until \(what)")
    }
}
