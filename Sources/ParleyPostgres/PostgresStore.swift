import Foundation
import Logging
import ParleyCore
import ParleyStore
import PostgresNIO

/// The scale-out backend: every Parley node of a cluster shares one PostgreSQL database.
///
/// Every write is one transaction on a pooled connection (read committed, row locks where order
/// matters); with `synchronous_commit = on` a commit is durable before the call returns, and
/// PostgreSQL flushes the WAL of concurrent commits together (group commit), so one fsync serves
/// many sends. Each transaction that commits stream events also sends a `NOTIFY` naming whose
/// streams moved (``StreamNotice``); PostgreSQL delivers it only if the transaction commits, and
/// every node fetches the events themselves from the store by position.
public final class PostgresStore: ParleyStore, Sendable {
    let client: PostgresClient
    let logger: Logger
    /// This process's id in the cluster: new at every start, so a restarted node is a new node.
    public let nodeID = UUID().uuidString.lowercased()
    private let runner: Task<Void, Never>

    /// Connects, checks the credentials and applies pending migrations (one node at a time).
    /// - Throws: ``DatabaseConnectionError`` with one clear line for operators.
    public static func connect(_ url: DatabaseURL, poolSize: Int = 24, logger: Logger) async throws -> PostgresStore {
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
        do {
            try await store.ping(timeout: .seconds(10))
            try await PostgresSchema.migrate(store.client, logger: logger)
        } catch {
            try? await store.close()
            throw DatabaseConnectionError(url: url, underlying: error)
        }
        return store
    }

    private init(configuration: PostgresClient.Configuration, logger: Logger) {
        var background = logger
        background.logLevel = max(logger.logLevel, .notice)
        let client = PostgresClient(configuration: configuration, backgroundLogger: background)
        self.client = client
        self.logger = logger
        runner = Task { await client.run() }
    }

    /// Runs `body` in one transaction. A deadlock, serialization failure or a unique-key race
    /// (two sends with one client id) rolls back and runs the whole transaction again: the retry
    /// then sees what the winner committed. Outages become ``StoreError/storageUnavailable``.
    @discardableResult
    func transaction<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await retryingRaces {
            try await Self.classifyingOutages {
                try await client.withConnection { connection in
                    try await connection.query("BEGIN", logger: logger)
                    do {
                        let result = try await body(connection)
                        try await connection.query("COMMIT", logger: logger)
                        return result
                    } catch {
                        _ = try? await connection.query("ROLLBACK", logger: logger)
                        throw error
                    }
                }
            }
        }
    }

    /// One statement on its own (autocommit: a commit without BEGIN/COMMIT round trips).
    func execute(_ query: PostgresQuery) async throws {
        try await Self.classifyingOutages { _ = try await client.query(query, logger: logger).collect() }
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
                switch error.sqlState {
                case PostgresSendFunction.clientIdConflict: throw StoreError.clientIdConflict
                case PostgresSendFunction.invalidRecipient: throw StoreError.invalidRecipient
                case PostgresSendFunction.userNotFound: throw StoreError.userNotFound
                case PostgresSendFunction.conversationNotFound: throw StoreError.conversationNotFound
                case PostgresSendFunction.cursorBeyondEnd: throw StoreError.cursorBeyondEnd
                default: throw error
                }
            }
        }
    }

    /// A read on any pooled connection.
    func read<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await Self.classifyingOutages { try await client.withConnection { try await body($0) } }
    }

    static func classifyingOutages<T>(_ operation: () async throws -> T) async throws -> T {
        do {
            return try await operation()
        } catch let error as PSQLError where error.isOutage {
            throw StoreError.storageUnavailable
        }
    }

    public func ping() async throws {
        try await ping(timeout: .seconds(5))
    }

    private func ping(timeout: Duration) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { _ = try await self.client.query("SELECT 1", logger: self.logger).collect() }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw DatabaseTimeout()
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    /// Writable means a small write transaction commits (disk full, read-only standby and lost
    /// connections all fail it).
    public func checkWritable() async throws {
        try await execute("UPDATE parley_meta SET checked_at = now() WHERE id = 1")
    }

    public func close() async throws {
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
        case "23505": serverInfo?[.constraintName] == "messages_sender_id_client_id_key"
        default: false
        }
    }

    /// The database is unreachable or cannot write: disk full, I/O error, read-only, shutting down.
    var isOutage: Bool {
        if code != .server { return code != .queryCancelled }
        guard let state = sqlState else { return false }
        return state.hasPrefix("53") || state.hasPrefix("58") || state.hasPrefix("08") || state == "25006" || state.hasPrefix("57P")
    }
}
