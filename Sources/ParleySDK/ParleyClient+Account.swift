import Foundation
import ParleyCore

/// Signing in and out, in a few lines for the app:
///
/// ```swift
/// let storage = ClientStorage(directory: appSupportFolder)
/// let client = try await ParleyClient.restore(from: storage)          // the saved session, if any
///     ?? ParleyClient.signIn(to: server, username: "ada", password: password, storage: storage)
/// try await client.connect()                                          // online and synced
/// …
/// await client.signOut()                                              // ends the session everywhere it matters
/// ```
extension ParleyClient {
    /// Creates an account, saves the session in `storage`, and returns a client for it (not started).
    public static func register(
        to server: URL, username: String, displayName: String, password: String, storage: ClientStorage, heartbeat: Heartbeat = .standard
    ) async throws -> ParleyClient {
        let response = try await HTTPParleyAPI(baseURL: server).register(username: username, displayName: displayName, password: password)
        return try signedIn(Session(serverURL: server, user: response.user, token: response.token), storage: storage, heartbeat: heartbeat)
    }

    /// Signs in, saves the session in `storage`, and returns a client for it (not started).
    /// - Throws: ``ParleyClientError`` with code `invalid_credentials` for a wrong username or password.
    public static func signIn(
        to server: URL, username: String, password: String, storage: ClientStorage, heartbeat: Heartbeat = .standard
    ) async throws -> ParleyClient {
        let response = try await HTTPParleyAPI(baseURL: server).login(username: username, password: password)
        return try signedIn(Session(serverURL: server, user: response.user, token: response.token), storage: storage, heartbeat: heartbeat)
    }

    /// A client for the session saved in `storage` by an earlier sign-in, or `nil` if there is none.
    /// Its cached conversations and outbox show at once, before any network answer.
    public static func restore(from storage: ClientStorage, heartbeat: Heartbeat = .standard) throws -> ParleyClient? {
        guard let session = storage.restoreSession() else { return nil }
        return try ParleyClient(session: session, storage: storage, heartbeat: heartbeat)
    }

    private static func signedIn(_ session: Session, storage: ClientStorage, heartbeat: Heartbeat) throws -> ParleyClient {
        try storage.save(session)
        return try ParleyClient(session: session, storage: storage, heartbeat: heartbeat)
    }

    /// Starts syncing if needed and waits until the client is online and has caught up (the replay
    /// after `hello` is done).
    /// - Throws: ``ParleyClientError`` with code `unauthorized` if the server refused the session,
    ///   or `CancellationError` if the waiting task is cancelled. It does not give up on its own while
    ///   the network is down: pair it with a timeout if the app wants one.
    public func connect() async throws {
        start()
        var changes = events().makeAsyncIterator()
        while connectionState != .online {
            if connectionState == .unauthorized { throw Self.sessionEndedError }
            try Task.checkCancellation()
            guard await changes.next() != nil else { throw CancellationError() }
        }
    }

    /// Signs out: stops syncing, revokes the session on the server (best effort: offline, the
    /// token simply stays unused), and forgets the saved session. The account's local database and
    /// outbox stay, so unsent messages go out the next time this account signs in.
    public func signOut(storage: ClientStorage? = nil) async {
        stop()
        try? await api.logout(token: session.token)
        storage?.forgetSession()
    }

    static let sessionEndedError = ParleyClientError(
        status: 401, code: .unauthorized, message: "The session was ended elsewhere or has expired. Sign in again.")
}
