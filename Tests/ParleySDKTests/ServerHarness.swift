import AsyncHTTPClient
import Foundation
import Logging
import ParleySDK
import ParleyCore
import ParleyServer
import ParleySQLite
import ServiceLifecycle
import Testing

/// A real Parley server in this process on a loopback port that stays the same across restarts.
@MainActor
final class ServerHarness {
    let database = FileManager.default.temporaryDirectory.appendingPathComponent("parley-e2e-\(UUID().uuidString)/db.sqlite").path
    private(set) var port = 0
    private var group: ServiceGroup?
    private var running: Task<Void, any Error>?
    /// The SDK's default shared HTTP pool: its connections stay open while the server shuts down.
    var http: HTTPClient { .shared }

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    func start() async throws {
        var configuration = ServerConfiguration()
        configuration.port = port
        configuration.bcryptCost = 4
        configuration.publicDirectory = nil
        configuration.logLevel = .critical
        configuration.loginsPerMinute = 100_000
        configuration.loginBurst = 100_000
        configuration.sendsPerSecond = 10_000
        configuration.sendBurst = 10_000
        let (ready, signal) = AsyncStream.makeStream(of: Int.self)
        configuration.onServerRunning = { port in signal.yield(port) }
        let app = try await buildApplication(configuration, store: try SQLiteStore(path: database, durability: .normal))
        let group = makeServiceGroup(app, configuration: configuration, signals: [], logger: Logger(label: "e2e"))
        self.group = group
        running = Task {
            defer { signal.finish() }  // a server that fails to start must not leave us waiting
            try await group.run()
        }
        let timeout = Task {
            try await Task.sleep(for: .seconds(20))
            signal.finish()
        }
        defer { timeout.cancel() }
        var iterator = ready.makeAsyncIterator()
        guard let bound = await iterator.next() else { throw ClientTestFailure("server did not start listening on port \(port)") }
        port = bound
    }

    /// Graceful shutdown; the port and database stay for the next start. Fails the test (instead of
    /// hanging it) if the server does not stop within 20 s.
    func stop() async {
        await group?.triggerGracefulShutdown()
        group = nil
        guard let running else { return }
        self.running = nil
        let finished = Task { _ = try? await running.value }
        let stopped = await withTaskGroup(of: Bool.self) { tasks in
            tasks.addTask { await finished.value; return true }
            tasks.addTask { try? await Task.sleep(for: .seconds(20)); return false }
            let first = await tasks.next() ?? false
            if !first { running.cancel() }  // so the other child, and this group, can end
            tasks.cancelAll()
            return first
        }
        if !stopped { Issue.record("the server did not shut down within 20 s") }
    }

    /// A started server with two registered users, Alice and Bob.
    static func withAliceAndBob() async throws -> (ServerHarness, alice: Session, bob: Session) {
        let server = ServerHarness()
        try await server.start()
        return (server, try await server.register("alice", "Alice"), try await server.register("bob", "Bob"))
    }

    func register(_ username: String, _ displayName: String) async throws -> Session {
        let response = try await HTTPParleyAPI(baseURL: url, client: http).register(username: username, displayName: displayName, password: "password123")
        return Session(serverURL: url, user: response.user, token: response.token)
    }

    /// `POST /v1/auth/logout-all` with `token`: every session of that user ends.
    func logoutEverywhere(token: String) async throws {
        var request = HTTPClientRequest(url: url.absoluteString + "/v1/auth/logout-all")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let response = try await http.execute(request, timeout: .seconds(10))
        guard response.status == .noContent else { throw ClientTestFailure("logout-all: \(response.status)") }
    }

    /// A client with its own local database in `directory` (pass the same one to "restart the app").
    func client(_ session: Session, directory: URL) throws -> ParleyClient {
        ParleyClient(session: session, api: HTTPParleyAPI(baseURL: url, client: http), transport: WebSocketTransport(serverURL: url),
                     store: try ClientStorage(directory: directory).store(for: session.user.id))
    }
}

func temporaryDirectory() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("parley-client-\(UUID().uuidString)")
}
