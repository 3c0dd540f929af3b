import Synchronization

/// How many searches each user has running: at most ``perUser`` at once, the rest wait their turn.
/// A burst the rate limit allows (30 at once) of costly searches held every pooled PostgreSQL
/// connection for seconds, and every other user's send waited behind them; now one user's searches
/// take at most ``perUser`` connections, and a slow one delays only that user's next.
///
/// Rules (``SearchesInFlightTests``):
/// 1. ``enter(_:)`` returns at once while fewer than ``perUser`` of the user's searches run.
/// 2. Otherwise it waits, in arrival order, until one of them calls ``leave(_:)``; another user's
///    searches never wait for these.
/// 3. A waiting search whose task is cancelled (its client went away) stops waiting and is not
///    counted: ``enter(_:)`` returns false and no ``leave(_:)`` is owed.
final class SearchesInFlight: Sendable {
    static let perUser = 2

    private struct Waiter {
        let id: Int
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var running: [String: Int] = [:]
        var waiting: [String: [Waiter]] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    /// Counts a search of `user` as running once there is room (rules 1 and 2); false if cancelled first.
    func enter(_ user: String) async -> Bool {
        if state.withLock({ Self.takePlace(of: user, in: &$0) }) { return true }
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // Room is looked for again under the same lock as the queueing: a search that ended
                // in between would otherwise leave this one waiting with room free.
                let answer = state.withLock { state -> Bool? in
                    if Task.isCancelled { return false }
                    if Self.takePlace(of: user, in: &state) { return true }
                    state.waiting[user, default: []].append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            // Rule 3: still waiting means not counted; one already handed a place keeps it.
            let cancelled = state.withLock { state -> Waiter? in
                guard var queue = state.waiting[user], let index = queue.firstIndex(where: { $0.id == id }) else { return nil }
                let waiter = queue.remove(at: index)
                state.waiting[user] = queue.isEmpty ? nil : queue
                return waiter
            }
            cancelled?.continuation.resume(returning: false)
        }
    }

    /// How many of `user`'s searches wait for a place (for tests).
    func waitingCount(of user: String) -> Int { state.withLock { $0.waiting[user]?.count ?? 0 } }

    private static func takePlace(of user: String, in state: inout State) -> Bool {
        guard state.running[user, default: 0] < perUser else { return false }
        state.running[user, default: 0] += 1
        return true
    }

    /// Ends a search that ``enter(_:)`` counted: its place goes to the user's first waiting search, if any.
    func leave(_ user: String) {
        let next = state.withLock { state -> Waiter? in
            if var queue = state.waiting[user], !queue.isEmpty {
                let first = queue.removeFirst()
                state.waiting[user] = queue.isEmpty ? nil : queue
                return first  // the place passes on: the running count stays
            }
            let left = state.running[user, default: 1] - 1
            state.running[user] = left > 0 ? left : nil
            return nil
        }
        next?.continuation.resume(returning: true)
    }
}
