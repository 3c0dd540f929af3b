// swift-tools-version:6.2
import PackageDescription

// Every target of ours: warnings fail the build (a warning ignored today hides tomorrow's), and a
// module uses only what it imports itself (MemberImportVisibility), as Hummingbird builds.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "parley",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .executable(name: "parley", targets: ["parley"]),
        .library(name: "ParleyCore", targets: ["ParleyCore"]),
        .library(name: "ParleyServer", targets: ["ParleyServer"]),
        // For apps: the client SDK (sync, outbox, transport, local store) and its view models.
        .library(name: "ParleySDK", targets: ["ParleySDK"]),
        .library(name: "ParleyViewModels", targets: ["ParleyViewModels"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.0"..<"5.0.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.34.1"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.30.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.36.0"),
    ],
    targets: [
        // Shared vocabulary: ids, models, wire frames, validation. Foundation only.
        .target(name: "ParleyCore", swiftSettings: swiftSettings),
        // Storage protocols: what the server needs from a database.
        .target(name: "ParleyStore", dependencies: ["ParleyCore"], swiftSettings: swiftSettings),
        // SQLite's process-wide options, set as the binary loads (before SQLite's first use).
        .target(name: "SQLiteProcessSetup", linkerSettings: [.linkedLibrary("sqlite3")]),
        // Embedded default backend.
        .target(
            name: "ParleySQLite",
            dependencies: [
                "ParleyStore", "SQLiteProcessSetup",
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),
        // Scale-out backend: storage, cross-node fan-out (LISTEN/NOTIFY) and cluster presence.
        .target(
            name: "ParleyPostgres",
            dependencies: [
                "ParleyStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),
        // File bytes: blob stores (a local directory, S3-compatible services) and what a file really is
        // (type sniffing, image dimensions). Knows nothing of messages or databases.
        .target(
            name: "ParleyFiles",
            dependencies: [
                "ParleyCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ParleyServer",
            dependencies: [
                "ParleyCore", "ParleyStore", "ParleyFiles",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The client SDK: transport, local store, outbox, sync engine. Never imports the server.
        // (Module `ParleySDK`, main type `ParleyClient`: an app's own `Session` does not hide ours.)
        .target(
            name: "ParleySDK",
            dependencies: [
                "ParleyCore",
                // Linux only: on Apple platforms the SDK uses URLSession, so an app needs no SwiftNIO.
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(platforms: [.linux])),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket", condition: .when(platforms: [.linux])),
                .product(name: "NIOWebSocket", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "GRDB", package: "GRDB.swift"),
                // SHA-256 of files being uploaded (CryptoKit on Apple platforms).
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // The app's view models, on the client SDK alone.
        .target(name: "ParleyViewModels", dependencies: ["ParleySDK"], swiftSettings: swiftSettings),
        // Load and latency benchmark: a client of the protocol (REST through the SDK's client), so it
        // never imports the server.
        .target(
            name: "ParleyBench",
            dependencies: [
                "ParleyCore", "ParleySDK",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                // The crash checks decrypt the pushes they receive, as a browser would.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "parley",
            dependencies: [
                "ParleyServer", "ParleySQLite", "ParleyPostgres", "ParleyBench", "ParleySDK", "ParleyViewModels",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The example app of Examples/EchoBot, built here too: the full test run builds it with the rest
        // instead of building every dependency again for the example's own package.
        .executableTarget(
            name: "EchoBot",
            dependencies: ["ParleySDK", "ParleyViewModels"],
            path: "Examples/EchoBot/Sources/EchoBot",
            swiftSettings: swiftSettings
        ),
        // Test helpers shared by the test targets: a real PostgreSQL server, the test server's settings.
        .target(
            name: "ParleyTestSupport",
            dependencies: [
                "ParleyBench", "ParleyServer", "ParleyPostgres", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ], path: "Tests/ParleyTestSupport", swiftSettings: swiftSettings),
        // look-alike-names.json: read from its path by a test and by the web client's test, both clients' skeletons.
        .testTarget(name: "ParleyCoreTests", dependencies: ["ParleyCore"], exclude: ["look-alike-names.json"], swiftSettings: swiftSettings),
        .testTarget(
            name: "ParleyFilesTests",
            dependencies: ["ParleyFiles", "ParleyCore", "ParleyTestSupport", .product(name: "NIOCore", package: "swift-nio"), .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ParleySDKTests",
            dependencies: [
                "ParleySDK", "ParleyViewModels", "ParleyServer", "ParleySQLite", "ParleyPostgres", "ParleyTestSupport", "ParleyBench",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ParleyStoreTests",
            dependencies: ["ParleyStore", "ParleySQLite", "ParleyPostgres", "ParleyTestSupport", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ParleyServerTests",
            dependencies: [
                "ParleyServer", "ParleySQLite", "ParleyPostgres", "ParleyTestSupport", "ParleyBench", "ParleyFiles",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                // The APNs stand-in: HTTP/2 over TLS, as Apple's service speaks it.
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
