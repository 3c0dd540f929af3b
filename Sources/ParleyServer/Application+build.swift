import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ParleyFiles
import ParleyStore
import ServiceLifecycle
import UnixSignals
import ParleyCore

/// Builds the Parley server: REST API, WebSocket endpoint, static web client and background services.
/// `parley serve` and the tests both start the server through this one function.
///
/// Services stop in reverse order on graceful shutdown: the HTTP server first (in-flight requests
/// finish, sockets close), then the hub, then housekeeping, and the database last.
///
/// With a `bus` the server is one node of a cluster: events, typing, presence and revocations
/// cross to the other nodes through it (``ClusterRelay``).
public func buildApplication(
    _ configuration: ServerConfiguration, store: any ParleyStore, bus: (any ClusterBus)? = nil, logger: Logger? = nil
) async throws -> some ApplicationProtocol {
    let server = ServerContext(configuration: configuration, store: store, bus: bus, logger: logger)
    let logger = server.logger
    let vapid = try await VAPIDKey.load(configuration.push, store: store)
    let files = try await FileStorageSetup.make(
        configuration.files, store: store, clustered: bus != nil, now: configuration.rateLimitClock, logger: logger)
    var app = Application(
        router: makeRouter(server, vapid: vapid, files: files),
        server: .parley(
            // Small header limits: Parley's requests carry a token and a few standard headers.
            http1: .init(httpDecoderConfiguration: .init(maxHeaderFieldSize: 16 * 1024, maxHeaderListSize: 32 * 1024, maxHeaderFieldCount: 100)),
            session: RealtimeGateway(
                store: server.store, hub: server.hub, messenger: server.messenger, typingLimiter: server.typingLimiter,
                configuration: server.configuration),
            counter: ConnectionCounter(limitPerAddress: configuration.maxConnectionsPerAddress, trustedProxies: configuration.trustedProxies),
            timeouts: configuration.httpTimeouts),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "parley"),
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.port
            logger.info("Parley is listening", metadata: ["url": "http://\(configuration.host):\(port)"])
            await configuration.onServerRunning?(port)
        },
        logger: logger)
    if configuration.files.blobStore == nil, let temporary = files.blobs as? LocalBlobStore {
        app.addServices(TemporaryFilesRemoval(directory: temporary.root))
    }
    app.addServices(StoreLifecycle(store: store, logger: logger))
    if let bus {
        // Started before the hub and stopped after it: draining connections still updates presence.
        app.addServices(ClusterBusService(bus: bus), ClusterRelay(bus: bus, hub: server.hub, store: store, logger: logger))
    }
    app.addServices(
        Housekeeping(
            store: store, eventsKeptPerUser: configuration.eventsKeptPerUser, intervalSeconds: configuration.pruneIntervalSeconds,
            limiters: server.limiters, loginThrottle: server.loginThrottle, logger: logger),
        PushDispatcher(
            store: store, hub: server.hub,
            transports: PushTransports(
                webPush: WebPushSender(
                    client: WebPushSender.makeClient(), vapid: vapid, subject: configuration.push.vapidSubject,
                    timeout: .nanoseconds(Int64(configuration.push.requestTimeout / .nanoseconds(1))),
                    hostCheck: PushHostCheck(allowLoopback: configuration.push.allowLoopbackEndpoints, resolve: configuration.push.resolveHost)),
                apns: try configuration.push.apns.map(APNsSender.init)),
            configuration: configuration.push, node: PushDispatcher.nodeID(port: configuration.port), metrics: PushMetrics(), logger: logger),
        FileCollector(store: store, blobs: files.blobs, configuration: configuration.files, logger: logger),
        server.hub)
    return app
}

/// The service group that runs a Parley application: graceful shutdown on `signals`, bounded by
/// ``ServerConfiguration/shutdownGraceSeconds``. `parley serve` and the tests run the server through it.
///
/// Services shut down in reverse order, so the live connections are drained (answers to frames in
/// flight flushed, close 1001) before the HTTP server starts its own shutdown, which would close
/// WebSockets with a plain 1000.
public func makeServiceGroup(
    _ app: some ApplicationProtocol, configuration: ServerConfiguration, signals: [UnixSignal] = [.sigterm, .sigint], logger: Logger
) -> ServiceGroup {
    var services: [any Service] = [app]
    if let hub = app.services.lazy.compactMap({ $0 as? ConnectionHub }).first {
        services.append(LiveConnectionDrain(hub: hub, timeout: .milliseconds(Int64(configuration.shutdownGraceSeconds * 500))))
    }
    var group = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: signals, logger: logger)
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
    /// Registrations per client address.
    let registerLimiter: RateLimiter
    let loginThrottle: LoginThrottle
    let searchLimiter: RateLimiter
    let messageSearchLimiter: RateLimiter
    let conversationLimiter: RateLimiter
    let typingLimiter: RateLimiter
    let groupLimiter: RateLimiter
    /// Display name changes per user: each is told to everyone who sees the user.
    let nameChangeLimiter: RateLimiter
    let messenger: Messenger
    let health: StorageHealth

    /// A few renames in a row are a typo fixed; more are noise sent to every peer. A bucket: 20 in
    /// a row, then one every 3 minutes.
    static let nameChangesPerHour = 20.0

    var limiters: [RateLimiter] {
        [sendLimiter, registerLimiter, searchLimiter, messageSearchLimiter, conversationLimiter, typingLimiter, groupLimiter, nameChangeLimiter]
    }

    init(configuration: ServerConfiguration, store: any ParleyStore, bus: (any ClusterBus)?, logger: Logger?) {
        var logger = logger ?? Logger(label: "parley")
        logger.logLevel = configuration.logLevel
        self.configuration = configuration
        self.store = store
        self.logger = logger
        let metrics = ServerMetrics()
        hub = ConnectionHub(
            typingTimeoutSeconds: configuration.typingTimeoutSeconds, writeTimeoutSeconds: configuration.writeTimeoutSeconds,
            maxLagSeconds: configuration.maxLagSeconds, idleTimeoutSeconds: configuration.idleTimeoutSeconds,
            answerTimeoutSeconds: configuration.answerTimeoutSeconds, metrics: metrics, bus: bus, logger: logger)
        let now = configuration.rateLimitClock
        sendLimiter = RateLimiter(ratePerSecond: configuration.sendsPerSecond, burst: configuration.sendBurst, now: now)
        registerLimiter = RateLimiter(ratePerSecond: configuration.loginsPerMinute / 60, burst: configuration.loginBurst, now: now)
        loginThrottle = LoginThrottle(
            .init(
                perAddressPerMinute: configuration.loginsPerMinute, perAddressBurst: configuration.loginBurst,
                firstBackoff: .milliseconds(Int64(max(0.001, configuration.loginBackoffSeconds) * 1_000)),
                perUsernamePerHour: configuration.loginFailuresPerUsernamePerHour), now: now)
        searchLimiter = RateLimiter(ratePerSecond: configuration.searchesPerMinute / 60, burst: configuration.searchesPerMinute, now: now)
        messageSearchLimiter = RateLimiter(ratePerSecond: configuration.messageSearchesPerMinute / 60, burst: 30, now: now)
        conversationLimiter = RateLimiter(ratePerSecond: configuration.conversationsPerHour / 3600, burst: configuration.conversationsPerHour, now: now)
        typingLimiter = RateLimiter(ratePerSecond: configuration.typingPerSecond, burst: 5, now: now)
        groupLimiter = RateLimiter(ratePerSecond: configuration.groupActionsPerHour / 3600, burst: configuration.groupActionsPerHour, now: now)
        nameChangeLimiter = RateLimiter(ratePerSecond: Self.nameChangesPerHour / 3600, burst: Self.nameChangesPerHour, now: now)
        health = StorageHealth(logger: logger)
        messenger = Messenger(
            store: store, hub: hub, sendLimiter: sendLimiter, conversationLimiter: conversationLimiter, metrics: metrics,
            health: health, logLimiter: LogLimiter(), editWindow: configuration.editWindow, deleteWindow: configuration.deleteWindow)
    }
}

/// The HTTP router: middleware (outermost first) and every REST route.
func makeRouter(_ server: ServerContext, vapid: VAPIDKey, files: FileService) -> Router<ParleyRequestContext> {
    let router = Router(context: ParleyRequestContext.self)
    router.add(middleware: SecurityHeadersMiddleware())
    router.add(middleware: MetricsMiddleware())
    router.add(middleware: LogRequestsMiddleware(.debug))
    router.add(middleware: ClientAddressMiddleware(trustedProxies: server.configuration.trustedProxies))
    let routeMethods = RouteMethods()
    router.add(middleware: MethodNotAllowedMiddleware(routes: routeMethods))
    if let publicDirectory = server.configuration.publicDirectory {
        router.add(middleware: StaticPathGuard(publicDirectory: publicDirectory))
        router.add(middleware: WebClientFiles(files: FileMiddleware(publicDirectory, searchForIndexHtml: true, logger: server.logger)))
    }
    router.add(middleware: ErrorMiddleware(health: server.health, logLimiter: server.messenger.logLimiter))
    router.add(middleware: TokenAuthenticator(store: server.store))
    OperationsRoutes(store: server.store, health: server.health, metricsToken: server.configuration.metricsToken).add(to: router)
    AccountRoutes(server).add(to: router)
    ConversationRoutes(store: server.store, hub: server.hub, messenger: server.messenger).add(to: router)
    MessageActionRoutes(store: server.store, messenger: server.messenger).add(to: router)
    SearchRoutes(store: server.store, limiter: server.messageSearchLimiter).add(to: router)
    UploadRoutes(files: files).add(to: router)
    FileRoutes(files: files).add(to: router)
    PhotoRoutes(files: files, hub: server.hub, logger: server.logger).add(to: router)
    PushRoutes(store: server.store, vapid: vapid, configuration: server.configuration.push).add(to: router)
    GroupRoutes(
        groups: GroupService(
            store: server.store, hub: server.hub, limiter: server.groupLimiter, maxMembers: server.configuration.maxGroupMembers)
    ).add(to: router)
    // The upgrade itself is taken by the child channel (HTTPConnectionChannel); a plain GET lands here.
    router.get("/v1/ws") { _, _ -> Response in
        var error = ParleyError(.upgradeRequired, "This is the WebSocket endpoint: connect with a WebSocket upgrade.")
        error.upgrade = true
        throw error
    }
    routeMethods.record(router.routes.map { (path: $0.path.description, method: $0.method) })
    return router
}
