import Logging
import ParleyStore
import ServiceLifecycle

/// Periodic chores: prune old stream events (resume positions older than the retention get
/// `resync`) and forget idle rate-limit buckets.
struct Housekeeping: Service {
    let store: any ParleyStore
    let eventsKeptPerUser: Int
    let intervalSeconds: Double
    let limiters: [RateLimiter]
    let loginThrottle: LoginThrottle
    let logger: Logger

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                let removed = try await store.pruneEvents(keepPerUser: eventsKeptPerUser)
                if removed > 0 { logger.info("Pruned stream events", metadata: ["removed": "\(removed)"]) }
            } catch {
                logger.warning("Event pruning failed", metadata: ["error": "\(error)"])
            }
            for limiter in limiters { limiter.sweep() }
            loginThrottle.sweep()
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(Int64(intervalSeconds * 1000))) }
        }
    }
}

/// Owns the store's lifetime: it closes the database after every other service has stopped
/// (services shut down in reverse order, and this one is registered first).
struct StoreLifecycle: Service {
    let store: any ParleyStore
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        try await store.close()
        logger.info("Database closed")
    }
}

/// Drains the live connections when graceful shutdown begins, before the HTTP server stops (see
/// ``makeServiceGroup(_:configuration:signals:logger:)``).
struct LiveConnectionDrain: Service {
    let hub: ConnectionHub
    let timeout: Duration

    func run() async throws {
        try? await gracefulShutdown()
        await hub.drain(timeout: timeout)
    }
}
