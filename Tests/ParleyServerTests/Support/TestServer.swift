import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import ParleyServer
import ParleySQLite
import ParleyStore
import ParleyTestSupport

/// Starts a real Parley server on a free loopback port with a fresh SQLite file, runs `body`, and
/// shuts the server down gracefully.
enum TestServer {
    /// Settings that keep tests fast (cheap bcrypt, short typing timeout) and out of the rate limits.
    static func configuration() -> ServerConfiguration {
        var configuration = ServerConfiguration.forTests()
        configuration.publicDirectory = repositoryRoot.appendingPathComponent("Public").path
        configuration.typingTimeoutSeconds = 0.6
        return configuration
    }

    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func temporaryDatabase() -> String {
        FileManager.default.temporaryDirectory
            .appendingPathComponent("parley-test-\(UUID().uuidString)").appendingPathComponent("parley.sqlite").path
    }

    static func run<T: Sendable>(
        database: String = temporaryDatabase(),
        logger: Logger? = nil,
        configure: (inout ServerConfiguration) -> Void = { _ in },
        _ body: @Sendable (TestAPI) async throws -> T
    ) async throws -> T {
        try await run(store: try SQLiteStore(path: database, durability: .normal), logger: logger, configure: configure, body)
    }

    /// As above, on `store` (a PostgreSQL node, with its `bus` for a cluster).
    static func run<T: Sendable>(
        store: any ParleyStore,
        bus: (any ClusterBus)? = nil,
        logger: Logger? = nil,
        configure: (inout ServerConfiguration) -> Void = { _ in },
        _ body: @Sendable (TestAPI) async throws -> T
    ) async throws -> T {
        var configuration = configuration()
        configure(&configuration)
        let app = try await buildApplication(configuration, store: store, bus: bus, logger: logger)
        return try await app.test(.live) { client in
            guard let port = client.port else { throw TestFailure("the live test client has no port") }
            return try await body(TestAPI(client: client, port: port, store: store))
        }
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
