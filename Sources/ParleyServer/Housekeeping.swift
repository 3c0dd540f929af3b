#if canImport(Glibc)
import Glibc
#endif
import Logging
import ParleyStore
import ServiceLifecycle

/// Periodic chores: prune old stream events (resume positions older than the retention get
/// `resync`), rewrite the search index where it may hold deleted messages' words, forget idle
/// rate-limit buckets, and give memory freed since back to the system.
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
            do {
                var steps = 0
                while try await store.purgeDeletedSearchTerms(), !Task.isShuttingDownGracefully, !Task.isCancelled { steps += 1 }
                if steps > 0 { logger.info("Rewrote the search index after deletes", metadata: ["steps": "\(steps)"]) }
            } catch {
                logger.warning("Search index rewrite failed", metadata: ["error": "\(error)"])
            }
            for limiter in limiters { limiter.sweep() }
            loginThrottle.sweep()
            AllocatorTrim.returnFreeMemory()
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

/// glibc keeps memory that was freed (after a burst of connections, most of the peak) for reuse
/// instead of returning it; `malloc_trim` returns it. Looked up at run time (Swift's Glibc module
/// does not export it); elsewhere this does nothing.
enum AllocatorTrim {
    private typealias Trim = @convention(c) (Int) -> Int32
    private static let trim: Trim? = {
        #if canImport(Glibc)
        guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: Trim.self)
        #else
        return nil
        #endif
    }()

    static func returnFreeMemory() {
        _ = trim?(0)
    }
}
