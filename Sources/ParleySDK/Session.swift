import Foundation
import ParleyCore

/// A signed-in account on a server.
public struct Session: Codable, Equatable, Sendable {
    public var serverURL: URL
    public var user: User
    public var token: String

    public init(serverURL: URL, user: User, token: String) {
        self.serverURL = serverURL
        self.user = user
        self.token = token
    }
}

/// Where a client keeps its session and its per-account database: one folder.
public struct ClientStorage: Sendable {
    public let directory: URL

    public init(directory: URL) { self.directory = directory }

    var sessionFile: URL { directory.appendingPathComponent("session.json") }

    /// The session saved by the last sign-in, if any.
    public func restoreSession() -> Session? {
        guard let data = try? Data(contentsOf: sessionFile) else { return nil }
        return try? JSONDecoder().decode(Session.self, from: data)
    }

    public func save(_ session: Session) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try WireFormat.encoder().encode(session).write(to: sessionFile, options: [.atomic])
    }

    public func forgetSession() {
        try? FileManager.default.removeItem(at: sessionFile)
    }

    /// The account's local database (kept across sign-outs so unsent messages are not lost).
    public func store(for user: UserID) throws -> LocalStore {
        try LocalStore(path: directory.appendingPathComponent("account-\(user.rawValue).sqlite").path)
    }
}
