import ParleyStore
import PostgresNIO

extension PostgresStore {
    /// One `CALL` of a procedure that commits before it answers (``PostgresCommittedCalls``): one
    /// round trip for a whole transaction.
    ///
    /// Rules (``CommittedCallTests``):
    /// 1. Answered only once the procedure's `COMMIT` succeeded: a commit that fails (a deferred
    ///    check, a restart) is thrown, and what returns is committed and durable, as with
    ///    ``transaction(_:)``.
    /// 2. An error before the `COMMIT` rolls the whole call back and is thrown; a lost race
    ///    (deadlock, the idempotency key) runs the call again.
    /// 3. The connection goes back to the pool outside any transaction, whatever failed.
    func committedCall(_ call: PostgresQuery) async throws -> [PostgresRow] {
        try await retryingRaces {
            try await Self.classifyingOutages {
                try await leased { [logger] connection in try await connection.query(call, logger: logger).collect() }
            }
        }
    }
}
