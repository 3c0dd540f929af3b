import Hummingbird
import HummingbirdWebSocket
import Logging
import ParleyStore
import ServiceLifecycle
import UnixSignals

/// Builds the Parley server: REST API, WebSocket endpoint, static web client and background services.
/// `parley serve` and the tests both start the server through this one function.
///
/// Services stop in reverse order on graceful shutdown: the HTTP server first (in-flight requests
/// finish, sockets close), then the hub, then housekeeping, and the database last.
public func buildApplication(
    _ configuration: ServerConfiguration, store: any ParleyStore, logger: Logger? = nil
) async throws -> some ApplicationProtocol {
    let server = ServerContext(configuration: configuration, store: store, logger: logger)
    let logger = server.logger
    var app = Application(
        router: makeRouter(server),
        server: .parley(
            webSocketRouter: makeWebSocketRouter(server),
            configuration: .init(ws: .init(maxFrameSize: ServerLimits.maxBodyBytes, autoPing: .enabled(timePeriod: .seconds(30)), validateUTF8: true))),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "parley"),
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.port
            logger.info("Parley is listening", metadata: ["url": "http://\(configuration.host):\(port)"])
            await configuration.onServerRunning?(port)
        },
        logger: logger)
    app.addServices(
        StoreLifecycle(store: store, logger: logger),
        Housekeeping(
            store: store, eventsKeptPerUser: configuration.eventsKeptPerUser, intervalSeconds: configuration.pruneIntervalSeconds,
            limiters: [server.sendLimiter, server.loginLimiter], logger: logger),
        server.hub)
    return app
}

/// The service group that runs a Parley application: graceful shutdown on `signals`, bounded by
/// ``ServerConfiguration/shutdownGraceSeconds``. `parley serve` and the tests run the server through it.
public func makeServiceGroup(
    _ app: some ApplicationProtocol, configuration: ServerConfiguration, signals: [UnixSignal] = [.sigterm, .sigint], logger: Logger
) -> ServiceGroup {
    var group = ServiceGroupConfiguration(services: [app], gracefulShutdownSignals: signals, logger: logger)
    group.maximumGracefulShutdownDuration = .milliseconds(Int64(configuration.shutdownGraceSeconds * 1000))
    return ServiceGroup(configuration: group)
}

/// The parts every handler shares, made once per application.
struct ServerContext: Sendable {
    let configuration: ServerConfiguration
    let store: any ParleyStore
    let logger: Logger
    let hub: ConnectionHub
    let sendLimiter: RateLimiter
    let loginLimiter: RateLimiter
    let messenger: Messenger

    init(configuration: ServerConfiguration, store: any ParleyStore, logger: Logger?) {
        var logger = logger ?? Logger(label: "parley")
        logger.logLevel = configuration.logLevel
        self.configuration = configuration
        self.store = store
        self.logger = logger
        let metrics = ServerMetrics()
        hub = ConnectionHub(typingTimeoutSeconds: configuration.typingTimeoutSeconds, metrics: metrics, logger: logger)
        sendLimiter = RateLimiter(ratePerSecond: configuration.sendsPerSecond, burst: configuration.sendBurst)
        loginLimiter = RateLimiter(ratePerSecond: configuration.loginsPerMinute / 60, burst: configuration.loginBurst)
        messenger = Messenger(store: store, hub: hub, sendLimiter: sendLimiter, metrics: metrics)
    }
}

/// The HTTP router: middleware (outermost first) and every REST route.
func makeRouter(_ server: ServerContext) -> Router<ParleyRequestContext> {
    let router = Router(context: ParleyRequestContext.self)
    router.add(middleware: SecurityHeadersMiddleware())
    router.add(middleware: MetricsMiddleware())
    router.add(middleware: LogRequestsMiddleware(.debug))
    if let publicDirectory = server.configuration.publicDirectory {
        router.add(middleware: FileMiddleware(publicDirectory, searchForIndexHtml: true, logger: server.logger))
    }
    router.add(middleware: ErrorMiddleware())
    router.add(middleware: TokenAuthenticator(store: server.store))
    OperationsRoutes(store: server.store).add(to: router)
    AccountRoutes(store: server.store, configuration: server.configuration, loginLimiter: server.loginLimiter).add(to: router)
    ConversationRoutes(store: server.store, hub: server.hub, messenger: server.messenger).add(to: router)
    return router
}

/// The router that decides WebSocket upgrades: only `/v1/ws`.
func makeWebSocketRouter(_ server: ServerContext) -> Router<ParleyRequestContext> {
    let session = WebSocketSession(store: server.store, hub: server.hub, messenger: server.messenger, configuration: server.configuration)
    let router = Router(context: ParleyRequestContext.self)
    router.ws("/v1/ws") { inbound, outbound, context in
        try await session.run(inbound: inbound, outbound: outbound, logger: context.logger)
    }
    return router
}
