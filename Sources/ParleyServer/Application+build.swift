import Hummingbird
import HummingbirdWebSocket
import Logging
import ParleyStore

/// Builds the Parley server: REST API, WebSocket endpoint, static web client and background services.
/// `parley serve` and the tests both start the server through this one function.
///
/// Services stop in reverse order on graceful shutdown: the HTTP server first (in-flight requests
/// finish, sockets close), then the hub, then housekeeping, and the database last.
public func buildApplication(
    _ configuration: ServerConfiguration, store: any ParleyStore, logger: Logger? = nil
) async throws -> some ApplicationProtocol {
    let logger = {
        var logger = logger ?? Logger(label: "parley")
        logger.logLevel = configuration.logLevel
        return logger
    }()
    let metrics = ServerMetrics()
    let hub = ConnectionHub(typingTimeoutSeconds: configuration.typingTimeoutSeconds, metrics: metrics, logger: logger)
    let sendLimiter = RateLimiter(ratePerSecond: configuration.sendsPerSecond, burst: configuration.sendBurst)
    let loginLimiter = RateLimiter(ratePerSecond: configuration.loginsPerMinute / 60, burst: configuration.loginBurst)
    let messenger = Messenger(store: store, hub: hub, sendLimiter: sendLimiter, metrics: metrics)

    let router = Router(context: ParleyRequestContext.self)
    router.add(middleware: SecurityHeadersMiddleware())
    router.add(middleware: MetricsMiddleware())
    router.add(middleware: LogRequestsMiddleware(.debug))
    if let publicDirectory = configuration.publicDirectory {
        router.add(middleware: FileMiddleware(publicDirectory, searchForIndexHtml: true, logger: logger))
    }
    router.add(middleware: ErrorMiddleware())
    router.add(middleware: TokenAuthenticator(store: store))
    OperationsRoutes(store: store).add(to: router)
    AccountRoutes(store: store, configuration: configuration, loginLimiter: loginLimiter).add(to: router)
    ConversationRoutes(store: store, hub: hub, messenger: messenger).add(to: router)

    let session = WebSocketSession(store: store, hub: hub, messenger: messenger, configuration: configuration)
    let webSocketRouter = Router(context: ParleyRequestContext.self)
    webSocketRouter.ws("/v1/ws") { inbound, outbound, context in
        try await session.run(inbound: inbound, outbound: outbound, logger: context.logger)
    }

    var app = Application(
        router: router,
        server: .http1WebSocketUpgrade(
            webSocketRouter: webSocketRouter,
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
            limiters: [sendLimiter, loginLimiter], logger: logger),
        hub)
    return app
}
