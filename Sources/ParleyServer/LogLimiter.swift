import Synchronization

/// Keeps a repeated log line from flooding the log: the first occurrence of a key is logged, then
/// at most one line per interval, carrying how many were left out in between.
final class LogLimiter: Sendable {
    private struct Entry {
        var lastLogged: ContinuousClock.Instant
        var suppressed: Int
    }

    private let entries = Mutex<[String: Entry]>([:])
    private let interval: Duration
    private let clock = ContinuousClock()

    init(interval: Duration = .seconds(10)) {
        self.interval = interval
    }

    /// Calls `log` with the number of occurrences left out since the last line, or not at all.
    func limit(_ key: String, _ log: (_ suppressed: Int) -> Void) {
        let now = clock.now
        let suppressed: Int? = entries.withLock { entries in
            guard var entry = entries[key] else {
                if entries.count > 1_000 { entries.removeAll() }  // keys are error kinds; bound them anyway
                entries[key] = Entry(lastLogged: now, suppressed: 0)
                return 0
            }
            guard now - entry.lastLogged >= interval else {
                entry.suppressed += 1
                entries[key] = entry
                return nil
            }
            defer { entries[key] = Entry(lastLogged: now, suppressed: 0) }
            return entry.suppressed
        }
        if let suppressed { log(suppressed) }
    }
}
