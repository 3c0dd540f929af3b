import Logging
import ParleyCore
import ParleyStore
import PostgresNIO
import ServiceLifecycle

/// The cluster bus on PostgreSQL: LISTEN/NOTIFY on one channel for signals (``ClusterWire``), and
/// two tables for presence: `cluster_nodes` (a heartbeat per node, by the database's clock) and
/// `presence` (connections per user per node). See ``ClusterBus`` for the rules.
///
/// A service: it listens on a dedicated connection (re-listening after a drop, then reporting
/// ``ClusterSignal/reconnected`` so the node catches its users up from the store), sends queued
/// broadcasts in order, heartbeats, and drops nodes whose heartbeat expired. On shutdown it leaves
/// the cluster: its node row and presence counts go at once.
public final class PostgresClusterBus: ClusterBus, Service {
    public var nodeID: String { store.nodeID }
    public let signals: AsyncStream<ClusterSignal>
    private let signalSink: AsyncStream<ClusterSignal>.Continuation
    private let outbox: AsyncStream<String>
    private let outboxSink: AsyncStream<String>.Continuation
    private let store: PostgresStore
    private let heartbeat: Duration
    /// A node silent for this long is dead (seconds).
    private let expirySeconds: Double
    private let logger: Logger

    public init(store: PostgresStore, heartbeatSeconds: Double = 2, expirySeconds: Double = 10, logger: Logger) {
        self.store = store
        self.heartbeat = .milliseconds(Int64(heartbeatSeconds * 1000))
        self.expirySeconds = expirySeconds
        self.logger = logger
        (signals, signalSink) = AsyncStream.makeStream(bufferingPolicy: .bufferingOldest(100_000))
        (outbox, outboxSink) = AsyncStream.makeStream(bufferingPolicy: .bufferingOldest(100_000))
    }

    public func broadcast(_ signal: ClusterSignal) {
        for payload in ClusterWire.payloads(signal, node: nodeID) { outboxSink.yield(payload) }
    }

    // MARK: Presence

    public func connectionOpened(_ user: UserID) async throws -> Bool {
        try await store.transaction { db in
            try await self.lock(user, db)
            try await db.query(
                """
                INSERT INTO presence (user_id, node_id, connections) VALUES (\(user.rawValue), \(self.nodeID), 1)
                ON CONFLICT (user_id, node_id) DO UPDATE SET connections = presence.connections + 1
                """, logger: self.logger)
            return try await self.liveConnections(of: user, db) == 1
        }
    }

    public func connectionClosed(_ user: UserID) async throws -> Bool {
        try await store.transaction { db in
            try await self.lock(user, db)
            try await db.query(
                """
                UPDATE presence SET connections = connections - 1 WHERE user_id = \(user.rawValue) AND node_id = \(self.nodeID)
                """, logger: self.logger)
            try await db.query(
                "DELETE FROM presence WHERE user_id = \(user.rawValue) AND node_id = \(self.nodeID) AND connections <= 0", logger: self.logger)
            return try await self.liveConnections(of: user, db) == 0
        }
    }

    public func restore(_ connections: [UserID: Int]) async throws -> [UserID] {
        var cameBack: [UserID] = []
        for (user, count) in connections.sorted(by: { $0.key < $1.key }) where count > 0 {
            let wasOffline: Bool = try await store.transaction { db in
                try await self.lock(user, db)
                let offline = try await self.liveConnections(of: user, db) == 0
                try await db.query(
                    """
                    INSERT INTO presence (user_id, node_id, connections) VALUES (\(user.rawValue), \(self.nodeID), \(count))
                    ON CONFLICT (user_id, node_id) DO UPDATE SET connections = EXCLUDED.connections
                    """, logger: self.logger)
                return offline
            }
            if wasOffline { cameBack.append(user) }
        }
        return cameBack
    }

    public func dropStalePresence(isLiveHere: @escaping @Sendable (UserID) -> Bool) async throws -> [UserID] {
        let counted = try await store.read { db in
            try await db.values("SELECT user_id FROM presence WHERE node_id = \(self.nodeID)", as: String.self, self.logger)
        }
        var left: [UserID] = []
        for user in counted.map(UserID.init(rawValue:)) where !isLiveHere(user) {
            // Under the lock a connection that opens here is already in the hub (it is attached
            // before it is counted), so a user who is not live here now has no count on its way.
            let offline: Bool = try await store.transaction { db in
                try await self.lock(user, db)
                guard !isLiveHere(user) else { return false }
                let removed = try await db.values(
                    "DELETE FROM presence WHERE user_id = \(user.rawValue) AND node_id = \(self.nodeID) RETURNING user_id", as: String.self, self.logger)
                guard !removed.isEmpty else { return false }
                return try await self.liveConnections(of: user, db) == 0
            }
            if offline { left.append(user) }
        }
        return left
    }

    public func online(among users: [UserID]) async throws -> Set<UserID> {
        guard !users.isEmpty else { return [] }
        return try await store.read { db in
            Set(
                try await db.values(
                    """
                    SELECT DISTINCT p.user_id FROM presence p JOIN cluster_nodes n ON n.node_id = p.node_id
                    WHERE p.user_id = ANY(\(users.map(\.rawValue))) AND p.connections > 0
                      AND n.heartbeat_at > now() - make_interval(secs => \(self.expirySeconds))
                    """, as: String.self, self.logger
                ).map(UserID.init(rawValue:)))
        }
    }

    /// Serialises presence changes of one user across the cluster (until commit).
    private func lock(_ user: UserID, _ db: PostgresConnection) async throws {
        try await db.query("SELECT pg_advisory_xact_lock(hashtext('parley-presence'), hashtext(\(user.rawValue)))", logger: logger)
    }

    private func liveConnections(of user: UserID, _ db: PostgresConnection) async throws -> Int64 {
        try await db.value(
            """
            SELECT COALESCE(SUM(p.connections), 0)::BIGINT FROM presence p JOIN cluster_nodes n ON n.node_id = p.node_id
            WHERE p.user_id = \(user.rawValue) AND n.heartbeat_at > now() - make_interval(secs => \(expirySeconds))
            """, as: Int64.self, logger) ?? 0
    }

    // MARK: Service

    public func run() async throws {
        _ = try await beat()
        logger.info("Joined the cluster", metadata: ["node": "\(nodeID)"])
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.listen() }
                group.addTask { await self.send() }
                group.addTask { await self.keepBeating() }
                await group.waitForAll()
            }
        }
        signalSink.finish()
        outboxSink.finish()
        await leave()
    }

    /// Listens until cancelled; after every (re)connection, reports `reconnected`.
    private func listen() async {
        while !Task.isCancelled {
            do {
                try await store.held { connection in
                    try await connection.listen(on: ClusterWire.channel) { notifications in
                        signalSink.yield(.reconnected)
                        for try await notification in notifications {
                            guard let (_, signal) = ClusterWire.decode(notification.payload, ignoring: nodeID) else { continue }
                            signalSink.yield(signal)
                        }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning("Lost the cluster channel; listening again", metadata: ["error": "\(String(reflecting: error))"])
            }
            try? await Task.sleep(for: .milliseconds(500))
        }
    }

    /// Sends queued broadcasts one by one, in order; a failed one is dropped (ephemeral).
    private func send() async {
        for await payload in outbox {
            do {
                try await store.executeUnacknowledged("SELECT pg_notify(\(ClusterWire.channel), \(payload))")
            } catch {
                logger.warning("Could not send a cluster signal", metadata: ["error": "\(String(reflecting: error))"])
            }
        }
    }

    private func keepBeating() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: heartbeat)
            if Task.isCancelled { return }
            do {
                if try await beat() {
                    logger.warning("This node was taken for dead (a stall past the heartbeat expiry); restoring its presence")
                    signalSink.yield(.rejoined)
                }
                try await reapDeadNodes()
            } catch {
                logger.warning("Cluster heartbeat failed", metadata: ["error": "\(String(reflecting: error))"])
            }
        }
    }

    /// Records a heartbeat, and that this node reads carried events (``PostgresCarriedEvents``);
    /// true when the node's row was gone (another node dropped it as dead).
    @discardableResult
    private func beat() async throws -> Bool {
        try await store.read { db in
            try await db.value(
                """
                INSERT INTO cluster_nodes (node_id, heartbeat_at, carries_events) VALUES (\(self.nodeID), now(), true)
                ON CONFLICT (node_id) DO UPDATE SET heartbeat_at = now(), carries_events = true RETURNING xmax = 0
                """, as: Bool.self, self.logger) ?? false
        }
    }

    /// Drops nodes silent past the expiry and their counts; their users with no connection on a
    /// live node left (reported once, on the node that dropped them).
    func reapDeadNodes() async throws {
        let left: [UserID] = try await store.transaction { db in
            let dead = try await db.values(
                """
                DELETE FROM cluster_nodes WHERE heartbeat_at < now() - make_interval(secs => \(self.expirySeconds)) RETURNING node_id
                """, as: String.self, self.logger)
            guard !dead.isEmpty else { return [] }
            self.logger.notice("Dropping cluster nodes that stopped heartbeating", metadata: ["nodes": "\(dead)"])
            let users = Set(
                try await db.values(
                    "DELETE FROM presence WHERE node_id = ANY(\(dead)) RETURNING user_id", as: String.self, self.logger))
            var left: [UserID] = []
            for user in users.sorted().map(UserID.init(rawValue:)) {
                try await self.lock(user, db)
                if try await self.liveConnections(of: user, db) == 0 { left.append(user) }
            }
            return left
        }
        if !left.isEmpty { signalSink.yield(.usersLeft(left)) }
    }

    /// Removes this node and its counts (graceful shutdown); other nodes see its users leave.
    private func leave() async {
        do {
            try await store.transaction { db in
                try await db.query("DELETE FROM presence WHERE node_id = \(self.nodeID)", logger: self.logger)
                try await db.query("DELETE FROM cluster_nodes WHERE node_id = \(self.nodeID)", logger: self.logger)
            }
        } catch {
            logger.warning("Could not leave the cluster cleanly", metadata: ["error": "\(String(reflecting: error))"])
        }
    }
}
