import Foundation
import GRDB
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

    /// Saves the session so the next start can restore it: the file is its owner's only (`0600`),
    /// in a folder made its owner's only (`0700`) when this makes it; it holds the bearer token.
    public func save(_ session: Session) throws {
        try makeDirectory()
        try WireFormat.encoder().encode(session).write(to: sessionFile, options: [.atomic])
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: sessionFile.path)
    }

    /// The folder, its owner's only when made here (an existing one, perhaps the home folder, is left as it is).
    private func makeDirectory() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// Deletes the saved session (sign-out).
    public func forgetSession() {
        try? FileManager.default.removeItem(at: sessionFile)
    }

    /// The account's local database (kept across sign-outs so unsent messages are not lost).
    /// - Throws: ``DamagedLocalStore`` when the file is not a database SQLite can read (damaged on
    ///   disk, or written over); ``setAsideStore(for:)`` moves it away so a fresh one can be made.
    public func store(for user: UserID) throws -> LocalStore {
        try makeDirectory()
        let path = storeFile(for: user).path
        let store: LocalStore
        do {
            store = try LocalStore(path: path)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT {
            throw DamagedLocalStore(path: path)
        }
        // Its messages are its owner's only too (SQLite gives its journal files the same mode).
        try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        return store
    }

    /// Moves the account's database (and its journal files) aside, as `account-<id>.damaged-<ms>.sqlite`,
    /// so the next ``store(for:)`` starts a fresh one, filled again from the server. What only it held
    /// (messages written but not sent yet) stays in the moved file. Returns where it went.
    public func setAsideStore(for user: UserID) throws -> URL {
        let file = storeFile(for: user)
        let aside = directory.appendingPathComponent("account-\(user.rawValue).damaged-\(Timestamp.now().milliseconds).sqlite")
        try FileManager.default.moveItem(at: file, to: aside)
        for suffix in ["-wal", "-shm"] {
            let journal = URL(fileURLWithPath: file.path + suffix)
            if FileManager.default.fileExists(atPath: journal.path) {
                try FileManager.default.moveItem(at: journal, to: URL(fileURLWithPath: aside.path + suffix))
            }
        }
        return aside
    }

    private func storeFile(for user: UserID) -> URL { directory.appendingPathComponent("account-\(user.rawValue).sqlite") }
}

/// The account's local database cannot be read: the file is damaged or is not a database.
public struct DamagedLocalStore: Error, CustomStringConvertible, Sendable {
    /// The file.
    public let path: String
    public var description: String { "The local copy of your chats (\(path)) cannot be read: the file is damaged or is not a database." }
}
