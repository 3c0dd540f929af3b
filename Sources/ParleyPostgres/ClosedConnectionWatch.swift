import ParleyStore
import PostgresNIO
import Synchronization

/// Ends the work on a pooled connection as soon as that connection closes, with
/// ``StoreError/storageUnavailable``, instead of waiting for an answer that will never come.
///
/// postgres-nio (1.33) hands a query to its connection with `channel.write(task, promise: nil)`: if
/// the channel closed a moment before (PostgreSQL restarting: "terminating connection due to
/// administrator command") while the pool still counted the connection idle, the write fails
/// silently and the query's promise is never completed, so the caller waits for ever (upstream's
/// fix, pull request 487, was reverted). A send that never answers holds its client's outbox, and a
/// closing WebSocket that waits on one stays counted online.
///
/// Rules:
/// 1. A connection already seen closed is refused at once, with ``ClosedBeforeWork``: nothing was
///    started on it, so the caller may lease another (``PostgresStore/leased(_:)``).
/// 2. Each connection's close is watched once (one callback on its `closeFuture`, not one per
///    query: a connection lives for millions of queries); a close seen before a later lease of the
///    same connection is watched again, and its callback, on a completed future, fires at once.
/// 3. The work runs in a task of its own; when the connection closes first, the caller gets
///    `storageUnavailable` (the client retries; every write is idempotent) and the work is left to
///    whatever postgres-nio does with it.
final class ClosedConnectionWatch: Sendable {
    private struct State {
        var watched: Set<PostgresConnection.ID> = []
        var waiting: [PostgresConnection.ID: [Int: @Sendable () -> Void]] = [:]
        var nextToken = 0
    }

    private let state = Mutex(State())

    /// Rule 1: the connection was closed before any work was handed to it.
    struct ClosedBeforeWork: Error {}

    /// Runs `work` on `connection`, ending early if the connection closes (rules above).
    func run<T: Sendable>(
        on connection: PostgresConnection, _ work: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        let id = connection.id
        let answer = FirstResult<T>()
        return try await withCheckedThrowingContinuation { continuation in
            answer.wait(continuation)
            let registration = state.withLock { state -> (token: Int, firstWatch: Bool)? in
                guard !connection.isClosed else { return nil }
                let token = state.nextToken
                state.nextToken += 1
                state.waiting[id, default: [:]][token] = { answer.settle(.failure(StoreError.storageUnavailable)) }
                return (token, state.watched.insert(id).inserted)
            }
            guard let registration else {
                answer.settle(.failure(ClosedBeforeWork()))
                return
            }
            if registration.firstWatch {
                connection.closeFuture.whenComplete { [self] _ in closed(id) }
            }
            Task {
                let result: Result<T, any Error>
                do { result = .success(try await work(connection)) } catch { result = .failure(error) }
                state.withLock { _ = $0.waiting[id]?.removeValue(forKey: registration.token) }
                answer.settle(result)
            }
        }
    }

    private func closed(_ id: PostgresConnection.ID) {
        let waiters = state.withLock { state in
            state.watched.remove(id)
            return state.waiting.removeValue(forKey: id).map { Array($0.values) } ?? []
        }
        for fail in waiters { fail() }
    }
}

/// A throwing continuation that the first of several racers resumes; the others find it taken.
private final class FirstResult<T: Sendable>: Sendable {
    private let slot = Mutex<CheckedContinuation<T, any Error>?>(nil)

    func wait(_ continuation: CheckedContinuation<T, any Error>) { slot.withLock { $0 = continuation } }

    func settle(_ result: Result<T, any Error>) {
        slot.withLock { slot in
            defer { slot = nil }; return slot
        }?.resume(with: result)
    }
}
