import Foundation
import ParleyCore

/// A signed-in account on a server.
public struct Session: Codable, Equatable, Sendable {
    /// The server the session belongs to.
    public var serverURL: URL
    /// The signed-in user.
    public var user: User
    /// The bearer token (keep it secret: it is the account).
    public var token: String

    /// Creates a session value.
    public init(serverURL: URL, user: User, token: String) {
        self.serverURL = serverURL
        self.user = user
        self.token = token
    }
}

/// Where a client keeps its session and its per-account database: one folder.
public struct ClientStorage: Sendable {
    /// The folder holding the saved session and one database per user.
    public let directory: URL

    /// Storage in `directory` (created when first written).
    public init(directory: URL) { self.directory = directory }

    var sessionFile: URL { directory.appendingPathComponent("session.json") }

    /// The session saved by the last sign-in, if any.
    public func restoreSession() -> Session? {
        guard let data = try? Data(contentsOf: sessionFile) else { return nil }
        return try? JSONDecoder().decode(Session.self, from: data)
    }

    /// Saves the session (readable by its owner only) so the next start can restore it.
    public func save(_ session: Session) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try WireFormat.encoder().encode(session).write(to: sessionFile, options: [.atomic])
    }

    /// Deletes the saved session (sign-out).
    public func forgetSession() {
        try? FileManager.default.removeItem(at: sessionFile)
    }

    /// The account's local database (kept across sign-outs so unsent messages are not lost).
    public func store(for user: UserID) throws -> LocalStore {
        try LocalStore(path: directory.appendingPathComponent("account-\(user.rawValue).sqlite").path)
    }
}
