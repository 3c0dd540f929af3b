import NIOCore
import ParleyStore
import PostgresNIO
import Synchronization

extension PostgresStore {
    /// Runs `body` on a pooled connection, ended early if that connection closes under it
    /// (``ClosedConnectionWatch``).
    ///
    /// postgres-nio's pool learns that a connection closed from its `closeFuture`, which NIO
    /// completes a turn of the event loop after the channel went inactive; a connection given back
    /// in between is counted idle and handed to the next lease, which then fails though the
    /// database is up (seen: the LISTEN connection cut, and a send right after answered 503).
    ///
    /// Rules:
    /// 1. A connection that is closed when its work ends, or whose work failed with an error that
    ///    ends the session (a FATAL from the server, a closed or broken socket), goes back to the
    ///    pool only once its close has completed, waiting at most
    ///    ``PostgresConnection/closeSettleLimit`` (``PostgresConnection/settlingCloseFirst(_:)``;
    ///    the cluster's LISTEN connection is given back the same way).
    /// 2. A lease that gets a connection already closed, so no work started on it, leases again
    ///    (rule 1 has let the pool see the close), up to three times in all; then
    ///    ``StoreError/storageUnavailable``.
    func leased<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await client.withConnection { connection in
                    try await connection.settlingCloseFirst { try await closeWatch.run(on: connection, body) }
                }
            } catch is ClosedConnectionWatch.ClosedBeforeWork {
                guard attempt < 3 else { throw StoreError.storageUnavailable }
                attempt += 1
            }
        }
    }

    /// Runs `body` on a pooled connection that it holds for as long as it runs (the cluster's
    /// `LISTEN`), with rule 1 of ``leased(_:)``: a connection cut under it goes back to the pool
    /// only once the pool can see it closed. Not watched as `leased` is: such work ends by itself
    /// when its connection closes, and must end when its task is cancelled.
    func held<T: Sendable>(_ body: @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await client.withConnection { connection in try await connection.settlingCloseFirst { try await body(connection) } }
    }
}

extension PostgresConnection {
    /// How long a dying connection is held back from the pool at most (rule 1 of
    /// ``PostgresStore/leased(_:)``): a socket whose peer sent a FATAL and vanished without a FIN
    /// closes only at a timeout.
    static let closeSettleLimit = TimeAmount.seconds(2)

    /// Runs `work`; then, if this connection is closed or `work` failed with an error that ends
    /// the session, waits for its close to complete (rule 1 of ``PostgresStore/leased(_:)``), so
    /// the pool this connection is given back to knows it is closed.
    func settlingCloseFirst<T>(_ work: () async throws -> T) async throws -> T {
        do {
            let result = try await work()
            if isClosed { await closeCompleted(within: Self.closeSettleLimit) }
            return result
        } catch {
            if isClosed || Self.endsSession(error) { await closeCompleted(within: Self.closeSettleLimit) }
            throw error
        }
    }

    /// Whether `error` means the connection's session is over.
    static func endsSession(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown: return true
        case .server: return ["FATAL", "PANIC"].contains(error.serverInfo?[.severity])
        default: return false
        }
    }

    /// Returns once `closeFuture` completed, or after `limit`.
    func closeCompleted(within limit: TimeAmount) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiting = Mutex<CheckedContinuation<Void, Never>?>(continuation)
            let resume: @Sendable () -> Void = { waiting.withLock { $0.take() }?.resume() }
            let timer = eventLoop.scheduleTask(in: limit, resume)
            closeFuture.whenComplete { _ in
                timer.cancel()
                resume()
            }
        }
    }
}
