import NIOCore
import ParleyStore
import PostgresNIO

extension PostgresStore {
    /// One statement between `BEGIN` and `COMMIT`, the three queued on the connection at once:
    /// the driver sends each as soon as the one before is answered, on the connection's own
    /// thread, instead of waking this task between them (a third of a send's time under load).
    ///
    /// Rules (``QueuedTransactionTests``):
    /// 1. Answered only once `COMMIT` answered `COMMIT`: what returns is committed (and durable,
    ///    with `synchronous_commit` on), as with ``transaction(_:)``.
    /// 2. A statement that fails aborts the transaction: the queued `COMMIT` then ends it as a
    ///    rollback (PostgreSQL answers `ROLLBACK`), and the statement's error is thrown; a lost race
    ///    (deadlock, the idempotency key) runs the three again, as ``transaction(_:)`` does.
    /// 3. All three answers are awaited before the connection goes back to the pool, whatever failed.
    func queuedTransaction(_ statement: PostgresQuery) async throws -> [PostgresRow] {
        try await retryingRaces {
            try await Self.classifyingOutages {
                try await leased { [logger] connection in
                    // The future-returning overload writes each query to the connection before returning.
                    let begin: EventLoopFuture<PostgresQueryResult> = connection.query("BEGIN", logger: logger)
                    let body: EventLoopFuture<PostgresQueryResult> = connection.query(statement, logger: logger)
                    let commit: EventLoopFuture<PostgresQueryResult> = connection.query("COMMIT", logger: logger)
                    let outcomes = (await Self.settled(begin), await Self.settled(body), await Self.settled(commit))
                    let rows = try outcomes.1.get().rows
                    _ = try outcomes.0.get()
                    guard try outcomes.2.get().metadata.command == "COMMIT" else { throw StoreError.storageUnavailable }
                    return rows
                }
            }
        }
    }

    private static func settled<T: Sendable>(_ future: EventLoopFuture<T>) async -> Result<T, any Error> {
        do { return .success(try await future.get()) } catch { return .failure(error) }
    }
}
