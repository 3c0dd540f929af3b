import Logging
import Synchronization

/// Whether the store can write, as the server last saw it, and the log lines about it.
///
/// Rules:
/// 1. A write that fails with ``StoreError/storageUnavailable`` marks storage as failing: clients
///    get `storage_unavailable` (503 + Retry-After), `/readyz` answers 503.
/// 2. While failing, the log gets one line when it starts and then at most one line per
///    `logInterval` with the number of failures since, so a full disk is not made fuller by its own
///    log (a line per failed request would be thousands a second).
/// 3. Any successful write, or a readiness check that finds the store writable again, ends it, with
///    one line saying how long it lasted.
final class StorageHealth: Sendable {
    private struct State {
        var failingSince: ContinuousClock.Instant?
        var lastLogged: ContinuousClock.Instant?
        var failuresSinceLog = 0
    }

    private let state = Mutex(State())
    private let failing = Atomic<Bool>(false)
    private let logger: Logger
    private let logInterval: Duration
    private let clock = ContinuousClock()

    init(logger: Logger, logInterval: Duration = .seconds(10)) {
        self.logger = logger
        self.logInterval = logInterval
    }

    var isFailing: Bool { failing.load(ordering: .relaxed) }

    /// Rule 1 and 2.
    func writeFailed() {
        let now = clock.now
        let line: (message: Logger.Message, count: Int)? = state.withLock { state in
            state.failuresSinceLog += 1
            if state.failingSince == nil {
                state.failingSince = now
                state.lastLogged = now
                state.failuresSinceLog = 0
                let cause = "a full disk, I/O errors, or a database that is away or busy past its timeouts"
                return ("Storage cannot write (\(cause)): answering storage_unavailable until it can", 1)
            }
            guard let last = state.lastLogged, now - last >= logInterval else { return nil }
            state.lastLogged = now
            defer { state.failuresSinceLog = 0 }
            return ("Storage still cannot write", state.failuresSinceLog)
        }
        failing.store(true, ordering: .relaxed)
        if let line { logger.error(line.message, metadata: ["failures": "\(line.count)"]) }
    }

    /// Rule 3; cheap when nothing failed (one atomic load), so every successful write may call it.
    func writeSucceeded() {
        guard failing.load(ordering: .relaxed) else { return }
        let now = clock.now
        let since = state.withLock { state in
            defer { state = State() }
            return state.failingSince
        }
        failing.store(false, ordering: .relaxed)
        if let since { logger.notice("Storage writes again", metadata: ["after": "\(now - since)"]) }
    }
}
