import Foundation
import Logging
import ParleyCore
import ParleyStore
import PostgresNIO
import Synchronization

/// The scale-out backend: every Parley node of a cluster shares one PostgreSQL database.
///
/// Every write is one explicit transaction on a pooled connection (read committed, row locks where
/// order matters), and a write returns only after its `COMMIT` was answered: with
/// `synchronous_commit = on` it is then durable, and PostgreSQL flushes the WAL of concurrent
/// commits together (group commit), so one fsync serves many sends. Each transaction that commits
/// stream events also sends a `NOTIFY`, which PostgreSQL delivers only if the transaction commits:
/// it carries the events themselves when they fit (``PostgresCarriedEvents``), else whose streams
/// moved, and a node then fetches those events from the store by position.
///
/// Why never autocommit: in the extended query protocol (the only one postgres-nio speaks) a
/// statement outside a transaction block commits at the `Sync` that follows it, *after* its rows and
/// its CommandComplete were sent, and postgres-nio ends a query when CommandComplete arrives. A send
/// in autocommit could therefore be acknowledged, then rolled back by a shutdown that interrupted its
/// commit (seen: "terminating connection due to administrator command" while the commit waited for
/// the `NOTIFY` queue's lock), and its seq handed to the next message. An explicit `COMMIT` is
/// different: PostgreSQL commits before it answers one.
public final class PostgresStore: ParleyStore, Sendable {
    let client: PostgresClient
    let logger: Logger
    /// Ends the work on a leased connection that closes under it (``ClosedConnectionWatch``).
    let closeWatch = ClosedConnectionWatch()
    /// This process's id in the cluster: new at every start, so a restarted node is a new node.
    public let nodeID = UUID().uuidString.lowercased()
    /// Plain sends written together (``PostgresSendQueue``).
    let sendQueue = PostgresSendQueue()
    /// Pages of the search indexes' pending lists merged (``PostgresSearchIndexUpkeep``).
    let searchIndexPagesMerged = Atomic<Int>(0)
    private let runner: Task<Void, Never>
    /// Ends when the runner calls `client.run()`: a lease before that is logged as a mistake.
    private let running: AsyncStream<Void>
    private let upkeep = Mutex<Task<Void, Never>?>(nil)

    /// Connects, checks the credentials and applies pending migrations (one node at a time).
    /// - Throws: ``DatabaseConnectionError`` with one clear line for operators.
    /// - Parameter searchIndexUpkeep: how often the search indexes' pending lists are merged
    ///   (``PostgresSearchIndexUpkeep``); `nil` leaves them to PostgreSQL.
    public static func connect(
        _ url: DatabaseURL, poolSize: Int = 24, searchIndexUpkeep: Duration? = .seconds(1), logger: Logger
    ) async throws -> PostgresStore {
        // One plain connection first: the pool would retry a refused connection or a wrong password
        // quietly until a timeout, and the operator deserves the real reason at once.
        do {
            let probe = try await PostgresConnection.connect(
                on: PostgresClient.defaultEventLoopGroup.any(), configuration: try url.connectionConfiguration(), id: 0, logger: logger
            ).get()
            try await probe.close()
        } catch {
            throw DatabaseConnectionError(url: url, underlying: error)
        }
        let store = PostgresStore(configuration: url.clientConfiguration(poolSize: poolSize), logger: logger)
        for await _ in store.running {}
        do {
            try await store.ping(timeout: .seconds(10))
            try await PostgresSchema.migrate(store.client, logger: logger)
        } catch {
            try? await store.close()
            throw DatabaseConnectionError(url: url, underlying: error)
        }
        if let interval = searchIndexUpkeep {
            store.upkeep.withLock { $0 = PostgresSearchIndexUpkeep.start(store, every: interval) }
        }
        return store
    }

    private init(configuration: PostgresClient.Configuration, logger: Logger) {
        var background = logger
        background.logLevel = max(logger.logLevel, .notice)
        let client = PostgresClient(configuration: configuration, backgroundLogger: background)
        self.client = client
        self.logger = logger
        let (running, started) = AsyncStream<Void>.makeStream()
        self.running = running
        runner = Task {
            started.finish()  // run() marks itself running before its first suspension
            await client.run()
        }
    }

    /// Runs `body` in one transaction. A deadlock, serialization failure or a unique-key race
    /// (two sends with one client id) rolls back and runs the whole transaction again: the retry
    /// then sees what the winner committed. Outages become ``StoreError/storageUnavailable``.
    @discardableResult
    func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await retryingRaces {
            try await Self.classifyingOutages {
                try await leased { connection in
                    try await connection.query("BEGIN", logger: self.logger)
                    do {
                        let result = try await body(connection)
                        try await connection.query("COMMIT", logger: self.logger)
                        return result
                    } catch {
                        _ = try? await connection.query("ROLLBACK", logger: self.logger)
                        throw error
                    }
                }
            }
        }
    }

    /// One write statement in a transaction of its own, answered once committed (see the type's
    /// doc comment for why not autocommit).
    func execute(_ query: PostgresQuery) async throws {
        try await transaction { [logger] connection in _ = try await connection.query(query, logger: logger).collect() }
    }

    /// One statement in autocommit, for what needs no acknowledgement that it committed (a cluster
    /// signal's `NOTIFY`: a lost one only delays, see ``PostgresClusterBus``). Never for a write
    /// whose answer a client relies on.
    func executeUnacknowledged(_ query: PostgresQuery) async throws {
        try await read { [logger] connection in _ = try await connection.query(query, logger: logger).collect() }
    }

    /// Runs `operation` again when it lost a race (see ``transaction(_:)``), and turns Parley's
    /// own SQLSTATEs (``PostgresSendFunction``) into store errors.
    func retryingRaces<T>(_ operation: () async throws -> T) async throws -> T {
        var attempt = 0
        while true {
            do {
                return try await operation()
            } catch let error as PSQLError where attempt < 8 && error.isRetryableRace {
                attempt += 1
            } catch let error as PSQLError {
                throw error.sqlState.flatMap(Self.storeError(sqlState:)) ?? error
            }
        }
    }

    /// The store error a Parley SQLSTATE (``PostgresSendFunction``) stands for.
    static func storeError(sqlState: String) -> StoreError? {
        switch sqlState {
        case PostgresSendFunction.clientIdConflict: .clientIdConflict
        case PostgresSendFunction.invalidRecipient: .invalidRecipient
        case PostgresSendFunction.userNotFound: .userNotFound
        case PostgresSendFunction.conversationNotFound: .conversationNotFound
        case PostgresSendFunction.cursorBeyondEnd: .cursorBeyondEnd
        default: nil
        }
    }

    /// A read on any pooled connection.
    func read<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await Self.classifyingOutages { try await leased(body) }
    }

    static func classifyingOutages<T>(_ operation: () async throws -> T) async throws -> T {
        do {
            return try await operation()
        } catch let error as PSQLError where error.isOutage {
            throw StoreError.storageUnavailable
        }
    }

    /// Answers within about a second, as a readiness probe must (HAProxy's check and Kubernetes'
    /// probe time out at 1 s by default): during an outage the pool would otherwise wait for a
    /// connection it cannot open.
    public func ping() async throws {
        try await ping(timeout: Self.readinessTimeout)
    }

    static let readinessTimeout = Duration.seconds(1)

    private func ping(timeout: Duration) async throws {
        try await answered(within: timeout) { _ = try await self.client.query("SELECT 1", logger: self.logger).collect() }
    }

    /// Writable means a small write transaction commits (disk full, read-only standby and lost
    /// connections all fail it); bounded as ``ping()`` is.
    public func checkWritable() async throws {
        try await answered(within: Self.readinessTimeout) {
            try await self.execute("UPDATE parley_meta SET checked_at = now() WHERE id = 1")
        }
    }

    /// `operation`'s result, or ``DatabaseTimeout`` after `timeout`.
    private func answered(within timeout: Duration, _ operation: @escaping @Sendable () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask(operation: operation)
            group.addTask {
                try await Task.sleep(for: timeout)
                throw DatabaseTimeout()
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    public func close() async throws {
        if let upkeep = upkeep.withLock({ $0 }) {
            upkeep.cancel()
            await upkeep.value
        }
        runner.cancel()
        await runner.value
    }
}

/// The database did not answer in time.
struct DatabaseTimeout: Error, CustomStringConvertible {
    var description: String { "no answer (timed out)" }
}

extension PSQLError {
    var sqlState: String? { serverInfo?[.sqlState] }

    /// Races the transaction loses by design and wins when run again: deadlock, serialization
    /// failure, and a unique violation on the idempotency key.
    var isRetryableRace: Bool {
        switch sqlState {
        case "40P01", "40001": true
        case "23505": ["messages_sender_id_client_id_key", "message_actions_pkey"].contains(serverInfo?[.constraintName])
        default: false
        }
    }

    /// The database is unreachable or cannot write: disk full, I/O error, read-only, shutting down.
    var isOutage: Bool {
        if code != .server { return code != .queryCancelled }
        guard let state = sqlState else { return false }
        return state.hasPrefix("53") || state.hasPrefix("58") || state.hasPrefix("08") || state == "25006" || state.hasPrefix("57P")
            || state == "55P03" || state == "25P03"  // lock_timeout, idle_in_transaction_session_timeout
    }
}
