import ParleyServer
import Logging

extension ServerConfiguration {
    /// The settings every test server starts from: cheap bcrypt, a port of the system's choosing,
    /// no web client, quiet logs, and limits far above what any test sends (tests of the limits set
    /// their own).
    public static func forTests() -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.bcryptCost = 4
        configuration.publicDirectory = nil
        configuration.logLevel = .warning
        configuration.sendsPerSecond = 100_000
        configuration.sendBurst = 100_000
        configuration.loginsPerMinute = 1_000_000
        configuration.loginBurst = 100_000
        return configuration
    }

    /// Stops the clock of the rate limits: no bucket refills while a test of a limit runs, however
    /// long a loaded machine takes between its requests.
    public mutating func stopRateLimitClock() {
        let stopped = ContinuousClock.now
        rateLimitClock = { stopped }
    }
}
