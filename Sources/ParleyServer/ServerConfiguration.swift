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
    /// Login attempts per client address a minute (also registrations); see ``LoginThrottle`` for
    /// the per-account backoff and ceiling.
    public var loginsPerMinute: Double = 30
    public var loginBurst: Double = 30
    /// Wrong passwords per username an hour, from addresses that never signed in to it, before
    /// such addresses are refused (the owner's known addresses are not).
    public var loginFailuresPerUsernamePerHour: Double = 100
    /// The wait after the free wrong guesses from one address at one account; it doubles with each
    /// further wrong guess (see ``LoginThrottle``).
    public var loginBackoffSeconds: Double = 1
    /// The time every rate limit and the login throttle go by: the continuous clock. Tests that
    /// check a limit stop it, so a slow machine cannot refill a bucket while the test runs.
    public var rateLimitClock: @Sendable () -> ContinuousClock.Instant = { .now }
    /// User searches per user a minute (a bucket of this size).
    public var searchesPerMinute: Double = 30
    /// Message searches per user (`GET /v1/search`), bursts of 30: enough to search as one types.
    public var messageSearchesPerMinute: Double = 120
    /// New conversations a user may start per hour (a bucket of this size).
    public var conversationsPerHour: Double = 30
    /// Group creations and adds a user may make per hour (a bucket of this size).
    public var groupActionsPerHour: Double = 30
    /// Most members a group may have (1…``Validation/maxGroupMembersCeiling``).
    public var maxGroupMembers = Validation.defaultMaxGroupMembers
    /// How long after sending it the sender may edit a message (`--edit-window`).
    public var editWindow: Duration = .seconds(48 * 3600)
    /// How long after sending it the sender may delete a message for everyone (`--delete-window`).
    public var deleteWindow: Duration = .seconds(48 * 3600)
    /// Notifications while the apps are closed (docs/protocol.md "Notifications").
    public var push = PushConfiguration()
    /// Photos and files (docs/protocol.md "Files").
    public var files = FileConfiguration()
    /// Typing frames per user a second (burst 5); the rest are ignored.
    public var typingPerSecond: Double = 2

    /// Reverse proxies whose `X-Forwarded-For` / `Forwarded` headers name the client (see docs/deployment.md).
    public var trustedProxies = TrustedProxies()
    /// Open connections one client address may hold (trusted proxies are exempt).
    public var maxConnectionsPerAddress = 256
    /// Header, body and keep-alive idle timeouts of HTTP connections.
    public var httpTimeouts = HTTPTimeouts()
    /// When set, `/metrics` needs `Authorization: Bearer <token>`; when not, it answers loopback clients only.
    public var metricsToken: String?
    /// How long a typing signal lasts unless renewed.
    public var typingTimeoutSeconds: Double = 5
    /// Newest events kept per user for resuming; older positions get a `resync` answer.
    public var eventsKeptPerUser = 10_000
    public var pruneIntervalSeconds: Double = 300
    /// Outbound frames queued per connection before a slow reader is disconnected.
    public var connectionQueueLimit = 4096
    /// A WebSocket write that takes longer than this (the client stopped reading) drops the connection.
    public var writeTimeoutSeconds: Double = 15
    /// A connection whose writer has not caught up with its queue for this long (the client reads
    /// more slowly than its messages come) is closed with 1008; the client resumes.
    public var maxLagSeconds: Double = 15
    /// A WebSocket client that sends no frame at all for this long is closed (clients ping when idle).
    public var idleTimeoutSeconds: Double = 90
    /// Seconds a new WebSocket has to send `hello`.
    public var helloTimeoutSeconds: Double = 10
    /// A connection whose frame has waited this long for its answer, or that the server ended and
    /// could not close, is dropped; the client connects again and resends (ClientConnection rule 7).
    public var answerTimeoutSeconds: Double = 30
    /// Seconds each database step of signing in may take before the connection is let go (the
    /// client connects again): a database that never answers must not keep a user online.
    public var signInTimeoutSeconds: Double = 10

    /// After this long, a graceful shutdown stops waiting and cancels what is left (connections
    /// that never sent a request are otherwise not closed by the HTTP server's quiescing).
    public var shutdownGraceSeconds: Double = 10

    /// Called with the bound port once the server listens (useful with port 0).
    public var onServerRunning: (@Sendable (_ port: Int) async -> Void)?

    public init() {}
}
