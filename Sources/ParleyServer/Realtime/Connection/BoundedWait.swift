import Synchronization

/// Waits for `operation` at most `limit`: the close of a connection must end even when the database
/// does not answer (a pooled lease has no timeout, and postgres-nio can lose a query's answer when
/// its connection closes under it). The operation runs in a task of its own and goes on after the
/// limit; its result is then dropped. Returns `nil` when the limit came first.
///
/// Not a task group: a group waits for all its children, so a child that ignores cancellation (a
/// query waiting on its future) would hold the group, and with it the caller, as long as it hangs.
func boundedWait<T: Sendable>(
    _ limit: Duration, _ operation: @escaping @Sendable () async throws -> T
) async -> Result<T, any Error>? {
    let answer = FirstAnswer<Result<T, any Error>?>()
    return await withCheckedContinuation { continuation in
        answer.wait(continuation)
        let timer = Task {
            try? await Task.sleep(for: limit)
            answer.settle(nil)
        }
        Task {
            let result: Result<T, any Error>
            do { result = .success(try await operation()) } catch { result = .failure(error) }
            if answer.settle(result) { timer.cancel() }
        }
    }
}

/// A continuation that the first of several racers resumes; the others find it taken.
private final class FirstAnswer<Value: Sendable>: Sendable {
    private let slot = Mutex<CheckedContinuation<Value, Never>?>(nil)

    func wait(_ continuation: CheckedContinuation<Value, Never>) { slot.withLock { $0 = continuation } }

    /// Resumes the waiter with `value` unless another racer did; true when this one did.
    @discardableResult
    func settle(_ value: Value) -> Bool {
        guard
            let continuation = slot.withLock({ slot in
                defer { slot = nil }; return slot
            })
        else { return false }
        continuation.resume(returning: value)
        return true
    }
}
