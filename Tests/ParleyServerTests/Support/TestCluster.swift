import Foundation
import HummingbirdTesting
import Logging
import ParleyCore
import ParleyBench
@testable import ParleyPostgres
import ParleyStore
import ParleyTestSupport
import PostgresNIO

/// Real `parley serve` processes on one fresh PostgreSQL database (the test server's): a cluster.
/// `api(node)` talks to one node; `store` reads the shared database behind them.
final class TestCluster: Sendable {
    let nodes: [ServerLauncher]
    let store: PostgresStore
    let databaseURL: String

    private init(nodes: [ServerLauncher], store: PostgresStore, databaseURL: String) {
        self.nodes = nodes
        self.store = store
        self.databaseURL = databaseURL
    }

    /// Starts `count` nodes, runs `body`, and stops every node still running. The nodes share a
    /// fresh database on the test server, or `database` (a ``DedicatedPostgres`` the test restarts).
    static func run<T: Sendable>(
        nodes count: Int = 2, database: String? = nil, arguments: [String] = [], _ body: @Sendable (TestCluster) async throws -> T
    ) async throws -> T {
        let url = if let database { database } else { try await PostgresTestServer.freshDatabaseAsync() }
        var nodes: [ServerLauncher] = []
        for _ in 0..<count { nodes.append(try await launchNode(url, arguments: arguments)) }
        let cluster = TestCluster(
            nodes: nodes, store: try await PostgresStore.connect(DatabaseURL(url), poolSize: 4, logger: Logger(label: "test")),
            databaseURL: url)
        do {
            let result = try await body(cluster)
            await cluster.stopAll()
            return result
        } catch {
            await cluster.stopAll()
            throw error
        }
    }

    static func launchNode(_ url: String, arguments: [String] = []) async throws -> ServerLauncher {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("parley").path
        return try await ServerLauncher(binary: binary, database: url, extraArguments: arguments)
    }

    private func stopAll() async {
        for node in nodes where node.isRunning { _ = try? await offCooperativePool { node.stop() } }
    }

    /// SIGKILLs node `index` and waits for it to be gone.
    func crash(_ index: Int) async throws {
        let node = nodes[index]
        try await offCooperativePool { node.crash() }
    }

    /// Ends every node's LISTEN connection from the database side (as a failover or a network cut would).
    /// Returns how many were ended.
    func terminateListeners() async throws -> Int {
        try await store.read { db in
            try await db.values(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'",
                as: Bool.self, self.store.logger
            ).filter { $0 }.count
        }
    }

    /// Ends every session of `user` in the database without telling any node (a revocation whose
    /// signal was lost).
    func deleteSessionsSilently(of user: UserID) async throws {
        try await store.transaction { db in
            try await db.query("DELETE FROM sessions WHERE user_id = \(user.rawValue)", logger: self.store.logger)
        }
    }

    /// Deletes the node that counts `user`'s connection, with its presence counts, from the cluster
    /// tables, as the other nodes do when a node's heartbeat expires.
    @discardableResult
    func dropNode(holding user: UserID) async throws -> [String] {
        try await store.transaction { db in
            let nodes = try await db.values("SELECT node_id FROM presence WHERE user_id = \(user.rawValue)", as: String.self, self.store.logger)
            try await db.query("DELETE FROM presence WHERE node_id = ANY(\(nodes))", logger: self.store.logger)
            try await db.query("DELETE FROM cluster_nodes WHERE node_id = ANY(\(nodes))", logger: self.store.logger)
            return nodes
        }
    }

    /// ``dropNode(holding:)``, then `body` while the dropped node cannot beat: its heartbeat (an
    /// insert into `cluster_nodes`, after which it restores its presence) waits on a lock that
    /// reads do not. A beat that came between the drop and the lock undoes it, so then it drops again.
    func whileDropped(holding user: UserID, _ body: @escaping @Sendable () async throws -> Void) async throws {
        for _ in 0..<10 {
            let nodes = try await dropNode(holding: user)
            let held = try await store.transaction { db in
                try await db.query("LOCK TABLE cluster_nodes IN SHARE ROW EXCLUSIVE MODE", logger: self.store.logger)
                let back = try await db.values("SELECT node_id FROM cluster_nodes WHERE node_id = ANY(\(nodes))", as: String.self, self.store.logger)
                guard back.isEmpty else { return false }
                try await body()
                return true
            }
            if held { return }
        }
        throw TestFailure("the node beat again before each of ten drops could be held")
    }

    /// REST and WebSocket calls against node `index`.
    func withAPI<T: Sendable>(_ index: Int, _ body: @escaping @Sendable (TestAPI) async throws -> T) async throws -> T {
        let port = nodes[index].port
        return try await TestClient.withClient(host: "127.0.0.1", port: port) { client in
            try await body(TestAPI(connectedTo: client, port: port, store: self.store))
        }
    }
}
