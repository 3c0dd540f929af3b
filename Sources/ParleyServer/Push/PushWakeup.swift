import Synchronization

/// Wakes the push dispatcher when events were written (``ConnectionHub/publish(_:answered:)``), so a
/// push goes out within milliseconds instead of at the next poll. Signals while the dispatcher is
/// busy collapse into one: its next round reads everything due anyway.
final class PushWakeup: Sendable {
    private let state = Mutex<(pending: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns at the next signal (at once if one came since the last wait), after `limit`, or
    /// when the waiting task is cancelled (graceful shutdown).
    func wait(upTo limit: Duration) async {
        let timer = Task {
            if (try? await Task.sleep(for: limit)) != nil { self.signal() }
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Bool in
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            signal()
        }
        timer.cancel()
    }
}
