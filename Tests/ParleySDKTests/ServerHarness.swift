import AsyncHTTPClient
import Foundation
import Logging
import ParleyBench
import ParleySDK
import ParleyCore
import ParleyPostgres
import ParleyServer
import ParleySQLite
import ParleyStore
import ParleyTestSupport
import ServiceLifecycle
import Testing
import NIOCore
import NIOHTTP1

/// Where the end-to-end tests run: one node on SQLite, or two nodes on one PostgreSQL database
/// with the users spread over them (the first registered on node 0, the next on node 1, …).
enum Topology: String, CustomTestStringConvertible, Sendable, CaseIterable {
    case singleNode = "one node (SQLite)"
    case twoNodes = "two nodes (PostgreSQL)"
    var testDescription: String { rawValue }
}

/// A real Parley server (or cluster) in this process on loopback ports that stay the same across restarts.
@MainActor
final class ServerHarness {
    let topology: Topology
    /// The SQLite file, or the PostgreSQL URL (made at the first start, off the cooperative pool).
    private(set) var database: String
    private var nodes: [Node]
    /// Which node each registered user's clients talk to.
    private var homes: [UserID: Int] = [:]
    /// Where the nodes keep files: one directory for all of them (a cluster's nodes must share it)
    /// and across restarts.
    let files = FileManager.default.temporaryDirectory.appendingPathComponent("parley-e2e-files-\(UUID().uuidString)").path
    /// The SDK's default shared HTTP pool: its connections stay open while the server shuts down.
    var http: HTTPClient { .shared }

    /// Ports below the ephemeral range, so a restart finds its port free (see `LoopbackPort`).
    private struct Node {
        var port: Int
        var group: ServiceGroup?
        var running: Task<Void, any Error>?
    }

    init(topology: Topology = .singleNode) throws {
        self.topology = topology
        switch topology {
        case .singleNode:
            database = FileManager.default.temporaryDirectory.appendingPathComponent("parley-e2e-\(UUID().uuidString)/db.sqlite").path
            nodes = [Node(port: try LoopbackPort.reservable())]
        case .twoNodes:
            database = ""
            nodes = [Node(port: try LoopbackPort.reservable()), Node(port: try LoopbackPort.reservable())]
        }
    }

    var port: Int { nodes[0].port }
    var url: URL { url(of: 0) }
    func url(of node: Int) -> URL { URL(string: "http://127.0.0.1:\(nodes[node].port)")! }

    func start() async throws {
        if topology == .twoNodes, database.isEmpty { database = try await PostgresTestServer.freshDatabaseAsync() }
        for index in nodes.indices { try await start(node: index) }
    }

    private func makeStore() async throws -> (any ParleyStore, (any ClusterBus)?) {
        switch topology {
        case .singleNode:
            return (try SQLiteStore(path: database, durability: .normal), nil)
        case .twoNodes:
            let store = try await PostgresStore.connect(DatabaseURL(database), poolSize: 6, logger: Logger(label: "e2e"))
            return (store, PostgresClusterBus(store: store, logger: Logger(label: "e2e")))
        }
    }

    private func start(node index: Int) async throws {
        var configuration = ServerConfiguration.forTests()
        configuration.port = nodes[index].port
        configuration.logLevel = .critical
        configuration.files.blobStore = files
        let (ready, signal) = AsyncStream.makeStream(of: Int.self)
        configuration.onServerRunning = { port in signal.yield(port) }
        let (store, bus) = try await makeStore()
        let app = try await buildApplication(configuration, store: store, bus: bus)
        let group = makeServiceGroup(app, configuration: configuration, signals: [], logger: Logger(label: "e2e"))
        nodes[index].group = group
        nodes[index].running = Task {
            defer { signal.finish() }  // a server that fails to start must not leave us waiting
            try await group.run()
        }
        let timeout = Task {
            try await Task.sleep(for: .seconds(20))
            signal.yield(-1)  // no answer: the server may still be starting
        }
        defer { timeout.cancel() }
        var iterator = ready.makeAsyncIterator()
        let answer = await iterator.next()
        guard let bound = answer, bound > 0 else {
            // Why it did not start (a port taken, a service that failed), rather than only that.
            var reason = "no answer in 20 s"
            if answer == nil {
                reason = "it stopped"
                if case .failure(let error) = await nodes[index].running?.result { reason = "\(error)" }
            }
            throw ClientTestFailure("server did not start listening on port \(nodes[index].port): \(reason)")
        }
        nodes[index].port = bound
    }

    /// Graceful shutdown; the port and database stay for the next start. Fails the test (instead of
    /// hanging it) if the server does not stop within 20 s.
    func stop() async {
        for index in nodes.indices { await stop(node: index) }
    }

    private func stop(node index: Int) async {
        await nodes[index].group?.triggerGracefulShutdown()
        nodes[index].group = nil
        guard let running = nodes[index].running else { return }
        nodes[index].running = nil
        let finished = Task { _ = try? await running.value }
        let stopped = await withTaskGroup(of: Bool.self) { tasks in
            tasks.addTask {
                await finished.value; return true
            }
            tasks.addTask {
                try? await Task.sleep(for: .seconds(20)); return false
            }
            let first = await tasks.next() ?? false
            if !first { running.cancel() }  // so the other child, and this group, can end
            tasks.cancelAll()
            return first
        }
        if !stopped { Issue.record("the server did not shut down within 20 s") }
    }

    /// A started server with two registered users, Alice and Bob.
    static func withAliceAndBob(_ topology: Topology = .singleNode) async throws -> (ServerHarness, alice: Session, bob: Session) {
        let server = try ServerHarness(topology: topology)
        try await server.start()
        return (server, try await server.register("alice", "Alice"), try await server.register("bob", "Bob"))
    }

    func register(_ username: String, _ displayName: String) async throws -> Session {
        let home = homes.count % nodes.count
        let response = try await HTTPParleyAPI(baseURL: url(of: home), client: http)
            .register(username: username, displayName: displayName, password: "password123")
        homes[response.user.id] = home
        return Session(serverURL: url(of: home), user: response.user, token: response.token)
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
        let url = url(of: homes[session.user.id] ?? 0)
        return ParleyClient(
            session: session, api: HTTPParleyAPI(baseURL: url, client: http), transport: WebSocketTransport(serverURL: url),
            store: try ClientStorage(directory: directory).store(for: session.user.id))
    }
}

func temporaryDirectory() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("parley-client-\(UUID().uuidString)")
}
