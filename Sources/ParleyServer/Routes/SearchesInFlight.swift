import Synchronization

/// How many searches each user has running: at most ``perUser`` at once. A burst the rate limit
/// allows (30 at once) of costly searches held every pooled PostgreSQL connection for seconds, and
/// every other user's send waited behind them; a user's searches now queue in their own client.
final class SearchesInFlight: Sendable {
    static let perUser = 2

    private let running = Mutex<[String: Int]>([:])

    /// Counts a search of `user` as running, or returns false when ``perUser`` already are.
    func enter(_ user: String) -> Bool {
        running.withLock { running in
            guard running[user, default: 0] < Self.perUser else { return false }
            running[user, default: 0] += 1
            return true
        }
    }

    /// Ends a search that ``enter(_:)`` counted.
    func leave(_ user: String) {
        running.withLock { running in
            let left = running[user, default: 1] - 1
            running[user] = left > 0 ? left : nil
        }
    }
}
