import Dispatch
import Logging
import ParleyCore
import ParleyStore
import ServiceLifecycle
import Synchronization
import Metrics

/// The live side of the server: which users are connected where, fan-out of committed events,
/// typing signals and presence.
///
/// The hub never decides what is true (the store does); it only forwards what was committed, so a
/// connection that misses something here recovers it from the store by position.
final class ConnectionHub: Service, Sendable {
    private struct State {
        var connections: [UserID: [Int: ClientConnection]] = [:]
        var typing = TypingTracker()
        var closed = false
        /// Closed connections still finishing (last seen, presence): ``drain(timeout:)`` waits for them.
        var finishing = 0
    }

    private let state = Mutex(State())
    private let clock = ContinuousClock()
    private let typingTimeout: Duration
    /// A socket write taking longer than this is aborted (``ClientConnection`` rule 2).
    private let writeTimeoutMilliseconds: Int64
    /// A writer behind its queue for longer than this ends the connection as a slow consumer.
    private let maxLagMilliseconds: Int64
    /// A client silent for longer than this is closed (``ClientConnection`` rule 5).
    private let idleMilliseconds: Int64
    /// An answer stuck for longer than this drops the connection (``ClientConnection`` rule 7).
    private let answerTimeoutMilliseconds: Int64
    private let logger: Logger
    let metrics: ServerMetrics
    /// The other nodes of a cluster; `nil` on a single node.
    let bus: (any ClusterBus)?
    /// Told of every write that reached someone's stream (the push queue's entries).
    let pushWakeup = PushWakeup()

    init(
        typingTimeoutSeconds: Double, writeTimeoutSeconds: Double = 15, maxLagSeconds: Double = 15, idleTimeoutSeconds: Double = 90,
        answerTimeoutSeconds: Double = 30, metrics: ServerMetrics, bus: (any ClusterBus)? = nil, logger: Logger
    ) {
        self.bus = bus
        self.answerTimeoutMilliseconds = Int64(answerTimeoutSeconds * 1000)
        self.idleMilliseconds = Int64(idleTimeoutSeconds * 1000)
        self.typingTimeout = .milliseconds(Int64(typingTimeoutSeconds * 1000))
        self.writeTimeoutMilliseconds = Int64(writeTimeoutSeconds * 1000)
        self.maxLagMilliseconds = Int64(maxLagSeconds * 1000)
        self.metrics = metrics
        self.logger = logger
    }

    // MARK: Connections

    /// Registers a connection; returns true when it is the user's first (they just came online),
    /// or `nil` when the server is shutting down.
    func attach(_ connection: ClientConnection) -> Bool? {
        let first: Bool? = state.withLock { state in
            guard !state.closed else { return nil }
            let first = state.connections[connection.userId, default: [:]].isEmpty
            state.connections[connection.userId, default: [:]][connection.id] = connection
            return first
        }
        if first != nil { metrics.connections.increment() }
        return first
    }

    /// Unregisters a connection; returns true when it was the user's last (they went offline).
    /// Their typing signals end at once.
    @discardableResult
    func detach(_ connection: ClientConnection) -> Bool {
        let (last, ended): (Bool, [(TypingTracker.Key, [UserID])]) = state.withLock { state in
            guard state.connections[connection.userId]?.removeValue(forKey: connection.id) != nil else { return (false, []) }
            guard state.connections[connection.userId]?.isEmpty == true else { return (false, []) }
            state.connections.removeValue(forKey: connection.userId)
            return (true, state.typing.stopAll(of: connection.userId))
        }
        metrics.connections.decrement()
        announceTypingEnded(ended)
        return last
    }

    func online(among users: [UserID]) -> Set<UserID> {
        state.withLock { state in Set(users.filter { state.connections[$0]?.isEmpty == false }) }
    }

    /// Live connections per user on this node.
    func connectionCounts() -> [UserID: Int] {
        state.withLock { state in state.connections.mapValues(\.count).filter { $0.value > 0 } }
    }

    /// Who among `users` is online anywhere: on this node, or on any node of the cluster.
    func onlineAnywhere(among users: [UserID]) async throws -> Set<UserID> {
        guard let bus else { return online(among: users) }
        return try await bus.online(among: users)
    }

    // MARK: Sessions

    /// Ends, with `unauthorized` and close 1008, every connection of `user` signed in with a session
    /// that `isRevoked` says is gone. Returns how many were ended.
    /// In a cluster, the other nodes are told to check their connections of `user` against the store.
    @discardableResult
    func endSessions(of user: UserID, where isRevoked: (String) -> Bool) -> Int {
        let ended = state.withLock { state in
            (state.connections[user]?.values).map { $0.filter { isRevoked($0.tokenHash) } } ?? []
        }
        for connection in ended { connection.end(.unauthorized) }
        bus?.broadcast(.sessionsRevoked(user))
        return ended.count
    }

    /// The sessions (token hashes) `user`'s connections on this node signed in with.
    func sessionTokens(of user: UserID) -> Set<String> {
        state.withLock { state in Set((state.connections[user]?.values).map { $0.map(\.tokenHash) } ?? []) }
    }

    /// Ends this node's connections of `user` signed in with one of `revoked`, without telling other nodes.
    func endLocalSessions(of user: UserID, revoked: Set<String>) {
        let ended = state.withLock { state in
            (state.connections[user]?.values).map { $0.filter { revoked.contains($0.tokenHash) } } ?? []
        }
        for connection in ended { connection.end(.unauthorized) }
    }

    /// One pass over the live connections (once a second), ending those that broke a rule of
    /// ``ClientConnection``: a write stuck past the write timeout is aborted (the client stopped
    /// reading; not even a close frame would reach it), and so is one that cannot make progress
    /// (an answer or its own end stuck on the store, rule 7); an expired session ends `unauthorized`; a
    /// writer behind its queue past the lag limit ends as a slow consumer (1008); a client silent
    /// past the idle limit is closed (1000). Only the offenders are collected under the lock.
    func checkConnections(now: Timestamp) {
        let clock = MonotonicClock.milliseconds
        var stalled: [ClientConnection] = [], stuck: [ClientConnection] = []
        var ending: [(ClientConnection, ClientConnection.EndReason)] = []
        state.withLock { state in
            for connections in state.connections.values {
                for connection in connections.values {
                    if connection.isWriteStalled(since: clock - writeTimeoutMilliseconds) {
                        stalled.append(connection)
                    } else if connection.isStuck(since: clock - answerTimeoutMilliseconds) {
                        stuck.append(connection)
                    } else if connection.expiresAt <= now {
                        ending.append((connection, .unauthorized))
                    } else if connection.isLagging(since: clock - maxLagMilliseconds) {
                        ending.append((connection, .slowConsumer))
                    } else if connection.isIdle(since: clock - idleMilliseconds) {
                        ending.append((connection, .idle))
                    }
                }
            }
        }
        for (connection, reason) in ending { connection.end(reason) }
        if !stuck.isEmpty {
            logger.warning("Dropping connections stuck waiting on the database", metadata: ["count": "\(stuck.count)"])
            for connection in stuck { connection.abort() }
        }
        guard !stalled.isEmpty else { return }
        metrics.slowConsumersDisconnected.increment(by: stalled.count)
        logger.notice("Dropping connections that stopped reading", metadata: ["count": "\(stalled.count)"])
        for connection in stalled { connection.abort() }
    }

    // MARK: Fan-out

    /// Pushes committed events to their recipients' connections, each user's in position order.
    /// Each payload is encoded once, and only for recipients who are connected.
    /// `answered` is the connection a send came in on and its message's position in the sender's
    /// stream: that one event is not queued there (the connection's ack stands in for it).
    /// `wakingPushes` is false for events another node committed (its dispatcher was woken).
    func publish(_ deliveries: [Delivery], answered: (connection: ClientConnection, position: Int64)? = nil, wakingPushes: Bool = true) {
        guard !deliveries.isEmpty else { return }
        if wakingPushes { pushWakeup.signal() }
        // One lookup per delivery (a group message's go to as many different people); each event is
        // handed over on its own (LiveDeliveries), so a user's events reach each connection in the
        // order delivered.
        let targets: [[ClientConnection]] = state.withLock { state in
            deliveries.map { delivery in state.connections[delivery.recipient].map { Array($0.values) } ?? [] }
        }
        var encoder = EventFrameEncoder()
        var live = LiveDeliveries()
        for (delivery, connections) in zip(deliveries, targets) where !connections.isEmpty {
            let event: EncodedEvent
            do {
                event = try encoder.encode(delivery.event, previous: delivery.previous)
            } catch {
                // The connection will find the gap and fetch the event from the store.
                logger.error("Could not encode an event", metadata: ["error": "\(error)"])
                continue
            }
            for connection in connections {
                if let answered, answered.connection === connection, answered.position == event.position { continue }
                live.add(.event(event), for: connection)
            }
        }
        live.hand()
    }

    /// Sends an ephemeral frame to every connection of the given users, on every node.
    func send(_ frame: ServerFrame, to users: [UserID]) {
        sendLocally(frame, to: users)
        if let bus, !users.isEmpty { bus.broadcast(.frame(frame, recipients: users)) }
    }

    /// Sends an ephemeral frame to the given users' connections on this node.
    func sendLocally(_ frame: ServerFrame, to users: [UserID]) {
        let connections = state.withLock { state in users.flatMap { state.connections[$0].map { Array($0.values) } ?? [] } }
        var live = LiveDeliveries()  // behind what this thread published before (its rule 1)
        for connection in connections { live.add(.frame(frame), for: connection) }
        live.hand()
    }

    /// Another node committed events to these users' streams: their connections here fetch them
    /// from the store up to the position (``ClientConnection/Outbound/catchUp(_:)``).
    func streamsMoved(_ heads: [UserID: Int64]) {
        let targets: [(ClientConnection, Int64)] = state.withLock { state in
            heads.flatMap { user, position in (state.connections[user]?.values).map { $0.map { ($0, position) } } ?? [] }
        }
        for (connection, position) in targets { connection.enqueue(.catchUp(position)) }
    }

    /// Every connection here catches up with the store (after signals may have been missed).
    func catchUpAll() {
        let all = state.withLock { $0.connections.values.flatMap(\.values) }
        for connection in all { connection.enqueue(.catchUp(nil)) }
    }

    // MARK: Typing

    /// Starts, renews or stops a user's typing signal; `audience` are the conversation's other members.
    func setTyping(_ isTyping: Bool, user: UserID, in conversation: ConversationID, audience: [UserID]) {
        let key = TypingTracker.Key(conversation: conversation, user: user)
        let expires = clock.now.advanced(by: typingTimeout)
        let announce: [UserID]? = state.withLock { state in
            if isTyping { return state.typing.start(key, audience: audience, until: expires) ? audience : nil }
            return state.typing.stop(key)
        }
        if let announce { send(.typing(conversationId: conversation, userId: user, isTyping: isTyping), to: announce) }
    }

    /// Ends a typing signal because the user sent a message.
    func stopTyping(user: UserID, in conversation: ConversationID) {
        let key = TypingTracker.Key(conversation: conversation, user: user)
        if let audience = state.withLock({ $0.typing.stop(key) }) {
            send(.typing(conversationId: conversation, userId: user, isTyping: false), to: audience)
        }
    }

    private func announceTypingEnded(_ ended: [(TypingTracker.Key, [UserID])]) {
        for (key, audience) in ended {
            send(.typing(conversationId: key.conversation, userId: key.user, isTyping: false), to: audience)
        }
    }

    // MARK: Service

    /// Expires typing signals and checks the connections' rules every second
    /// (``checkConnections(now:)``), until shutdown; then closes every connection.
    func run() async throws {
        let tick = Duration.milliseconds(min(500, max(50, typingTimeout.components.seconds * 100)))
        var lastCheck = clock.now
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: tick) }
            let ended = state.withLock { $0.typing.expire(now: clock.now) }
            announceTypingEnded(ended)
            if clock.now - lastCheck >= .seconds(1) {
                lastCheck = clock.now
                checkConnections(now: .now())
            }
        }
        let all = state.withLock { state in
            state.closed = true
            return state.connections.values.flatMap(\.values)
        }
        logger.info("Closing live connections", metadata: ["count": "\(all.count)"])
        for connection in all { connection.finish() }
    }

    /// Graceful shutdown of every live connection (``ClientConnection`` rule 4): no new frame is
    /// handled, frames being handled finish and their answers are queued, then each writer flushes
    /// its queue and closes 1001. New connections are refused from now on. Waits at most `timeout`.
    func drain(timeout: Duration) async {
        let deadline = clock.now.advanced(by: timeout)
        let (all, finishing) = state.withLock { state in
            state.closed = true
            return (state.connections.values.flatMap(\.values), state.finishing)
        }
        guard !all.isEmpty || finishing > 0 else { return }
        logger.info("Draining live connections", metadata: ["count": "\(all.count)"])
        for connection in all { connection.end(.shutdown) }
        while all.contains(where: { $0.framesInFlight > 0 }), clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        // What those frames published to connections on other event loops is queued before the queues end.
        await LiveDeliveries.settle(all)
        for connection in all { connection.finish() }
        // A connection leaves the hub before its user's last seen is recorded: the store must
        // stay open until that is done too.
        while state.withLock({ !$0.connections.isEmpty || $0.finishing > 0 }), clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Runs the end of a closed connection (which detaches it, then records last seen and tells
    /// contacts); ``drain(timeout:)`` waits for it. Call while the connection is still attached.
    func finishing(_ body: () async -> Void) async {
        state.withLock { $0.finishing += 1 }
        defer { state.withLock { $0.finishing -= 1 } }
        await body()
    }
}

/// Milliseconds of a clock that never jumps (time since boot), for timeouts.
enum MonotonicClock {
    static var milliseconds: Int64 { Int64(DispatchTime.now().uptimeNanoseconds / 1_000_000) }
}
