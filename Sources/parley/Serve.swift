import ArgumentParser
import Foundation
import Logging
import ParleyCore
import ParleyPostgres
import ParleyServer
import ParleyStore
import ParleySQLite
import ServiceLifecycle

/// `parley serve`: runs the server. Each option may also come from a `PARLEY_*` environment
/// variable; a flag wins over the environment, which wins over the default.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the Parley server (REST, WebSocket and the web client).")

    @Option(help: "Address to listen on. [env: PARLEY_HOST] (default: 127.0.0.1)")
    var host: String?
    @Option(help: "Port to listen on. [env: PARLEY_PORT] (default: 8080)")
    var port: Int?
    @Option(
        help:
            "SQLite file (a path or sqlite:path), or PostgreSQL for a cluster: postgres://user:password@host:port/database. [env: PARLEY_DATABASE] (default: data/parley.sqlite)"
    )
    var database: String?
    @Option(help: "SQLite durability: full (fsync each commit) or normal. [env: PARLEY_DURABILITY] (default: full)")
    var durability: String?
    @Option(help: "Folder of the web client's files; empty to serve none. [env: PARLEY_PUBLIC_DIR] (default: Public)")
    var publicDir: String?
    @Option(help: "trace, debug, info, notice, warning, error or critical. [env: PARLEY_LOG_LEVEL] (default: info)")
    var logLevel: String?
    @Option(help: "text or json. [env: PARLEY_LOG_FORMAT] (default: text)")
    var logFormat: String?
    @Option(help: "bcrypt cost, 4–31. [env: PARLEY_BCRYPT_COST] (default: 12)")
    var bcryptCost: Int?
    @Option(help: "Messages per second per user. [env: PARLEY_SENDS_PER_SECOND] (default: 20)")
    var sendsPerSecond: Double?
    @Option(help: "Login and registration attempts per minute per client address. [env: PARLEY_LOGINS_PER_MINUTE] (default: 30)")
    var loginsPerMinute: Double?
    @Option(
        name: .customLong("trusted-proxy"),
        help:
            "A reverse proxy (address or CIDR) whose X-Forwarded-For/Forwarded headers name the client; repeat for several. [env: PARLEY_TRUSTED_PROXIES, comma-separated] (default: none)"
    )
    var trustedProxies: [String] = []
    @Option(help: "Open connections one client address may hold. [env: PARLEY_MAX_CONNECTIONS_PER_ADDRESS] (default: 256)")
    var maxConnectionsPerAddress: Int?
    @Option(help: "Bearer token for /metrics; without one, /metrics answers loopback clients only. [env: PARLEY_METRICS_TOKEN]")
    var metricsToken: String?
    @Option(help: "Most members of a group, 1–1024. [env: PARLEY_MAX_GROUP_MEMBERS] (default: 256)")
    var maxGroupMembers: Int?
    @Option(help: "How long the sender may edit a message, like 48h, 90m or 0 (never). [env: PARLEY_EDIT_WINDOW] (default: 48h)")
    var editWindow: String?
    @Option(help: "How long the sender may delete a message for everyone (group admins: always). [env: PARLEY_DELETE_WINDOW] (default: 48h)")
    var deleteWindow: String?
    @Option(
        help:
            "How long each database step of a WebSocket sign-in may take before the connection is let go and the client connects again, 1s–10m. [env: PARLEY_SIGN_IN_TIMEOUT] (default: 10s)"
    )
    var signInTimeout: String?
    @OptionGroup(title: "Notifications")
    var pushOptions: PushOptions
    @OptionGroup(title: "Files")
    var fileOptions: FileOptions

    func run() async throws {
        let settings = Settings(environment: ProcessInfo.processInfo.environment)
        var configuration = ServerConfiguration()
        configuration.host = host ?? settings.string("PARLEY_HOST") ?? configuration.host
        configuration.port = try settings.checked("port", port ?? (try settings.int("PARLEY_PORT")) ?? configuration.port, in: 0...65535)
        let publicDir = publicDir ?? settings.string("PARLEY_PUBLIC_DIR") ?? "Public"
        configuration.publicDirectory = publicDir.isEmpty ? nil : publicDir
        let level = logLevel ?? settings.string("PARLEY_LOG_LEVEL") ?? "info"
        guard let parsedLevel = Logger.Level(rawValue: level) else {
            throw ValidationError("Unknown log level '\(level)'. Use trace, debug, info, notice, warning, error or critical.")
        }
        configuration.logLevel = parsedLevel
        configuration.bcryptCost = UInt8(try settings.checked("bcrypt-cost", bcryptCost ?? (try settings.int("PARLEY_BCRYPT_COST")) ?? 12, in: 4...31))
        if let rate = try sendsPerSecond ?? settings.double("PARLEY_SENDS_PER_SECOND") {
            guard rate > 0 else { throw ValidationError("sends-per-second must be more than 0.") }
            configuration.sendsPerSecond = rate
            configuration.sendBurst = max(configuration.sendBurst, rate * 3)
        }
        if let rate = try loginsPerMinute ?? settings.double("PARLEY_LOGINS_PER_MINUTE") {
            guard rate > 0 else { throw ValidationError("logins-per-minute must be more than 0.") }
            configuration.loginsPerMinute = rate
            configuration.loginBurst = max(configuration.loginBurst, rate)
        }
        let proxies =
            trustedProxies.isEmpty
            ? (settings.string("PARLEY_TRUSTED_PROXIES") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            : trustedProxies
        configuration.trustedProxies = TrustedProxies(
            try proxies.filter { !$0.isEmpty }.map { text in
                guard let network = IPNetwork(text) else {
                    throw ValidationError("trusted-proxy '\(text)' is not an IP address or CIDR network (like 10.0.0.0/8 or ::1).")
                }
                return network
            })
        configuration.maxConnectionsPerAddress = try settings.checked(
            "max-connections-per-address",
            maxConnectionsPerAddress ?? (try settings.int("PARLEY_MAX_CONNECTIONS_PER_ADDRESS")) ?? configuration.maxConnectionsPerAddress,
            in: 1...1_000_000)
        configuration.maxGroupMembers = try settings.checked(
            "max-group-members", maxGroupMembers ?? (try settings.int("PARLEY_MAX_GROUP_MEMBERS")) ?? configuration.maxGroupMembers,
            in: 1...Validation.maxGroupMembersCeiling)
        if let window = editWindow ?? settings.string("PARLEY_EDIT_WINDOW") { configuration.editWindow = try DurationSetting.parse("edit-window", window) }
        if let timeout = signInTimeout ?? settings.string("PARLEY_SIGN_IN_TIMEOUT") {
            let limit = try DurationSetting.parse("sign-in-timeout", timeout)
            guard limit >= .seconds(1), limit <= .seconds(600) else { throw ValidationError("sign-in-timeout '\(timeout)' must be from 1s to 10m.") }
            configuration.signInTimeoutSeconds = Double(limit.components.seconds)
        }
        if let window = deleteWindow ?? settings.string("PARLEY_DELETE_WINDOW") {
            configuration.deleteWindow = try DurationSetting.parse("delete-window", window)
        }
        if let token = metricsToken ?? settings.string("PARLEY_METRICS_TOKEN") {
            guard token.utf8.count >= 16, token.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
                throw ValidationError("metrics-token must be at least 16 printable characters without spaces.")
            }
            configuration.metricsToken = token
        }
        let durabilityName = durability ?? settings.string("PARLEY_DURABILITY") ?? "full"
        guard let durability = SQLiteStore.Durability(rawValue: durabilityName) else {
            throw ValidationError("Unknown durability '\(durabilityName)'. Use full or normal.")
        }
        let format = logFormat ?? settings.string("PARLEY_LOG_FORMAT") ?? "text"
        guard ["text", "json"].contains(format) else { throw ValidationError("Unknown log format '\(format)'. Use text or json.") }
        let databaseSetting = database ?? settings.string("PARLEY_DATABASE") ?? "data/parley.sqlite"
        let postgresURL = DatabaseURL.isPostgres(databaseSetting) ? try Self.postgresURL(databaseSetting) : nil
        let databasePath = try Self.sqlitePath(databaseSetting)
        configuration.push = try pushOptions.configuration(settings, sqlitePath: postgresURL == nil ? databasePath : nil)
        configuration.files = try fileOptions.configuration(settings, sqlitePath: postgresURL == nil ? databasePath : nil)

        LoggingSystem.bootstrap { label in
            format == "json" ? JSONLogHandler(label: label) as any LogHandler : StreamLogHandler.standardError(label: label)
        }
        var logger = Logger(label: "parley")
        logger.logLevel = parsedLevel
        let store: any ParleyStore, bus: (any ClusterBus)?
        if let postgresURL {
            let postgres = try await PostgresStore.connect(postgresURL, logger: logger)
            (store, bus) = (postgres, PostgresClusterBus(store: postgres, logger: logger))
            logger.info(
                "Starting Parley",
                metadata: [
                    "address": "http://\(configuration.host):\(configuration.port)", "database": "\(postgresURL)", "node": "\(postgres.nodeID)",
                ])
        } else {
            (store, bus) = (try SQLiteStore(path: databasePath, durability: durability), nil)
            logger.info(
                "Starting Parley",
                metadata: [
                    "address": "http://\(configuration.host):\(configuration.port)", "database": "\(databasePath)",
                    "durability": "\(durability.rawValue)",
                ])
        }
        let app = try await buildApplication(configuration, store: store, bus: bus, logger: logger)
        try await makeServiceGroup(app, configuration: configuration, logger: logger).run()
    }
}

extension Serve {
    static func postgresURL(_ text: String) throws -> DatabaseURL {
        do {
            return try DatabaseURL(text)
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// The SQLite file of a `--database` value: a path, or `sqlite:path`. Other URLs are refused.
    static func sqlitePath(_ text: String) throws -> String {
        if text.hasPrefix("sqlite:") { return String(text.dropFirst("sqlite:".count)).replacing(/^\/\/(?=\/)/, with: "") }
        if let scheme = text.firstMatch(of: /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//)?.1, !DatabaseURL.isPostgres(text) {
            throw ValidationError("Unsupported database '\(scheme)://…'. Use a SQLite file path or postgres://user:password@host:port/database.")
        }
        guard !text.isEmpty else { throw ValidationError("database must not be empty.") }
        return text
    }
}

/// Reads `PARLEY_*` environment variables, refusing malformed numbers instead of ignoring them.
struct Settings {
    let environment: [String: String]

    func string(_ name: String) -> String? { environment[name] }

    func int(_ name: String) throws -> Int? {
        guard let raw = environment[name] else { return nil }
        guard let value = Int(raw) else { throw ValidationError("\(name) must be a whole number, not '\(raw)'.") }
        return value
    }

    func double(_ name: String) throws -> Double? {
        guard let raw = environment[name] else { return nil }
        guard let value = Double(raw) else { throw ValidationError("\(name) must be a number, not '\(raw)'.") }
        return value
    }

    func checked(_ option: String, _ value: Int, in range: ClosedRange<Int>) throws -> Int {
        guard range.contains(value) else {
            throw ValidationError("\(option) must be from \(range.lowerBound) to \(range.upperBound), not \(value).")
        }
        return value
    }
}
