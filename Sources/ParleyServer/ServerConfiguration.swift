import Logging
import ParleyCore

/// Everything an operator can set about a Parley server. Defaults suit a single machine.
public struct ServerConfiguration: Sendable {
    public var host = "127.0.0.1"
    /// 0 picks a free port (tests).
    public var port = 8080
    /// Folder of the web client's static files; `nil` serves none.
    public var publicDirectory: String? = "Public"
    public var logLevel: Logger.Level = .info
    /// bcrypt work factor (4…31); each step doubles the time to hash.
    public var bcryptCost: UInt8 = 12
    public var sessionLifetimeSeconds: Double = 30 * 24 * 3600
    /// Sends per user: a bucket of `sendBurst` refilled at `sendsPerSecond`.
    public var sendsPerSecond: Double = 20
    public var sendBurst: Double = 60
    /// Failed-or-not login attempts per username (and per client address): a bucket refilled per minute.
    public var loginsPerMinute: Double = 10
    public var loginBurst: Double = 10
    /// How long a typing signal lasts unless renewed.
    public var typingTimeoutSeconds: Double = 5
    /// Newest events kept per user for resuming; older positions get a `resync` answer.
    public var eventsKeptPerUser = 10_000
    public var pruneIntervalSeconds: Double = 300
    /// Outbound frames queued per connection before a slow reader is disconnected.
    public var connectionQueueLimit = 4096
    /// Seconds a new WebSocket has to send `hello`.
    public var helloTimeoutSeconds: Double = 10

    /// After this long, a graceful shutdown stops waiting and cancels what is left (connections
    /// that never sent a request are otherwise not closed by the HTTP server's quiescing).
    public var shutdownGraceSeconds: Double = 10

    /// Called with the bound port once the server listens (useful with port 0).
    public var onServerRunning: (@Sendable (_ port: Int) async -> Void)?

    public init() {}
}
