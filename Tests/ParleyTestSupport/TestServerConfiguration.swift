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
}
