import Foundation
import PostgresNIO

/// A PostgreSQL address as operators write it: `postgres://user:password@host:port/database`
/// (also `postgresql://`), with an optional `?sslmode=disable|prefer|require`.
public struct DatabaseURL: Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var username: String
    var password: String?
    public var database: String
    public var sslMode: String

    /// Parses `text`; the error says what is wrong without echoing the password.
    public init(_ text: String) throws(DatabaseURLError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            throw DatabaseURLError("is not a URL (expected postgres://user:password@host:port/database)")
        }
        guard scheme == "postgres" || scheme == "postgresql" else {
            throw DatabaseURLError("has scheme '\(scheme)'; expected postgres://")
        }
        guard let host = components.host, !host.isEmpty else { throw DatabaseURLError("has no host") }
        guard let user = components.user, !user.isEmpty else { throw DatabaseURLError("has no user name") }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else { throw DatabaseURLError("has no database name (…/database)") }
        if let port = components.port, !(1...65535).contains(port) { throw DatabaseURLError("has an invalid port") }
        let mode = components.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? "prefer"
        guard ["disable", "prefer", "require"].contains(mode) else {
            throw DatabaseURLError("has sslmode '\(mode)'; use disable, prefer or require")
        }
        self.host = host
        self.port = components.port ?? 5432
        self.username = user.removingPercentEncoding ?? user
        self.password = components.password.map { $0.removingPercentEncoding ?? $0 }
        self.database = database
        self.sslMode = mode
    }

    /// True for text that names PostgreSQL rather than a SQLite file.
    public static func isPostgres(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// The URL without its password, for logs and errors.
    public var description: String { "postgres://\(username)@\(host):\(port)/\(database)" }

    func connectionConfiguration() throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS =
            switch sslMode {
            case "disable": .disable
            case "require": .require(try .init(configuration: .makeClientConfiguration()))
            default: .prefer(try .init(configuration: .makeClientConfiguration()))
            }
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: tls)
        configuration.options.connectTimeout = .seconds(5)
        return configuration
    }

    func clientConfiguration(poolSize: Int) -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS =
            switch sslMode {
            case "disable": .disable
            case "require": .require(.makeClientConfiguration())
            default: .prefer(.makeClientConfiguration())
            }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: tls)
        configuration.options.maximumConnections = poolSize
        // A minimum of one, not more: postgres-nio's pool (1.33) keeps only one connection retrying
        // while the database is away, and when it comes back with leases queued it can count fewer
        // connections than a larger minimum and trap (`minimumConcurrentConnections <= active`,
        // PoolStateMachine+ConnectionGroup.swift:163); with none, a queued lease can be stranded
        // (postgres-nio issue 657). docs/deployment.md has the sequence.
        configuration.options.minimumConnections = 1
        // Bounds on the server's side, so no transaction holds its locks (a node frozen mid-send)
        // or waits for one without end: a frozen node cannot stall the others for long.
        configuration.options.additionalStartupParameters = [
            ("lock_timeout", "5s"), ("idle_in_transaction_session_timeout", "15s"),
        ]
        configuration.options.connectTimeout = .seconds(5)
        return configuration
    }
}

/// A database URL that cannot be used.
public struct DatabaseURLError: Error, CustomStringConvertible {
    public var reason: String
    init(_ reason: String) { self.reason = reason }
    public var description: String { "The database URL \(reason)." }
}

/// Connecting to the database at start-up failed; `description` is one line an operator can act on.
public struct DatabaseConnectionError: Error, CustomStringConvertible {
    public var url: DatabaseURL
    public var underlying: any Error

    public var description: String {
        "Cannot use the database \(url): \(Self.reason(underlying))"
    }

    static func reason(_ error: any Error) -> String {
        guard let error = error as? PSQLError else {
            if error is DatabaseTimeout { return "no answer within 10 s (is the host reachable?)" }
            return "\(error)"
        }
        switch error.sqlState {
        case "28P01", "28000": return "the password or user name is wrong."
        case "3D000": return "the database does not exist (create it first)."
        case "42501": return "permission denied (the user needs CREATE on the database for migrations)."
        case let state?: return "\(error.serverInfo?[.message] ?? "server error") (SQLSTATE \(state))."
        case nil: break
        }
        switch error.code {
        case .connectionError, .serverClosedConnection: return "cannot connect (is PostgreSQL running on that host and port?)."
        case .sslUnsupported: return "the server does not support TLS (use ?sslmode=disable or prefer)."
        case .authMechanismRequiresPassword: return "the server asks for a password and the URL has none."
        default: return "\(error.code)."
        }
    }
}
