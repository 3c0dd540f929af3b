import Synchronization

/// Login throttling that slows guessing without letting anyone lock the owner out (after OWASP's
/// authentication guidance). Rules:
///
/// 1. Per address: at most `perAddress` attempts a minute from one client address, whatever the
///    usernames (credential stuffing from one machine).
/// 2. Per (username, address): after `freeFailures` consecutive failures, each further attempt
///    waits `firstBackoff` (1 s), then twice as long after each further failure (2 s, 4 s …), up to
///    `maxBackoffSeconds`, counted from the last failure. A success resets it.
///    Guessing from one place gets slow fast; other places are not affected.
/// 3. Per username, from everywhere: failures beyond `perUsernamePerHour` an hour refuse further
///    attempts from addresses that have never signed in to that account; addresses where the owner
///    signed in before (remembered for `knownAddressDays`) are not subject to this ceiling, so a
///    distributed attack cannot lock the owner out of their usual devices.
final class LoginThrottle: Sendable {
    struct Settings: Sendable {
        var perAddressPerMinute: Double = 30
        var perAddressBurst: Double = 30
        var freeFailures = 5
        var firstBackoff = Duration.seconds(1)
        var maxBackoffSeconds = 900
        var perUsernamePerHour: Double = 100
        var knownAddressDays = 30
    }

    private struct Backoff {
        var failures = 0
        var lastFailure: ContinuousClock.Instant
    }

    private let settings: Settings
    private let perAddress: RateLimiter
    private let perUsername: RateLimiter
    private let backoffs = Mutex<[String: Backoff]>([:])
    private let known = Mutex<[String: ContinuousClock.Instant]>([:])
    private let now: @Sendable () -> ContinuousClock.Instant

    /// `now` is the time source (the continuous clock; tests pass a manual one).
    init(_ settings: Settings, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.settings = settings
        self.now = now
        perAddress = RateLimiter(ratePerSecond: settings.perAddressPerMinute / 60, burst: settings.perAddressBurst, now: now)
        perUsername = RateLimiter(ratePerSecond: settings.perUsernamePerHour / 3600, burst: settings.perUsernamePerHour, now: now)
    }

    /// Whether an attempt for `username` from `address` may go ahead; `nil`, or whole seconds to wait.
    func check(username: String, address: String) -> Int? {
        if let wait = perAddress.acquire(address) { return wait }
        let now = now()
        if let backoff = backoffs.withLock({ $0[Self.pair(username, address)] }), backoff.failures >= settings.freeFailures {
            let doubled = settings.firstBackoff * (1 << min(20, backoff.failures - settings.freeFailures))
            let ready = backoff.lastFailure + min(.seconds(settings.maxBackoffSeconds), doubled)
            if ready > now { return Self.wholeSecondsUp(ready - now) }
        }
        if !isKnown(username: username, address: address), let wait = perUsername.peek(username) { return wait }
        return nil
    }

    /// Records a wrong password.
    func failed(username: String, address: String) {
        let now = now()
        backoffs.withLock { backoffs in
            backoffs[Self.pair(username, address), default: Backoff(lastFailure: now)].failures += 1
            backoffs[Self.pair(username, address)]?.lastFailure = now
        }
        _ = perUsername.acquire(username)
    }

    /// Records a successful sign-in: the pair's backoff resets and the address becomes known.
    func succeeded(username: String, address: String) {
        let now = now()
        backoffs.withLock { _ = $0.removeValue(forKey: Self.pair(username, address)) }
        known.withLock { $0[Self.pair(username, address)] = now }
    }

    private func isKnown(username: String, address: String) -> Bool {
        guard let since = known.withLock({ $0[Self.pair(username, address)] }) else { return false }
        return now() - since < .seconds(settings.knownAddressDays * 86_400)
    }

    /// Forgets backoffs that have run out and known addresses that are too old (called periodically).
    func sweep() {
        let now = now()
        let forgetAfter = Duration.seconds(settings.maxBackoffSeconds)
        backoffs.withLock { $0 = $0.filter { now - $1.lastFailure < forgetAfter } }
        known.withLock { $0 = $0.filter { now - $1 < .seconds(settings.knownAddressDays * 86_400) } }
        perAddress.sweep()
        perUsername.sweep()
    }

    /// Whole seconds, rounded up (as `Retry-After` needs): at least 1.
    private static func wholeSecondsUp(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return max(1, Int(seconds) + (attoseconds > 0 ? 1 : 0))
    }

    private static func pair(_ username: String, _ address: String) -> String { "\(username)\u{1F}\(address)" }
}
