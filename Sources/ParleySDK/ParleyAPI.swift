import Foundation
import ParleyCore

/// The REST side of the server, as the client needs it. `HTTPParleyAPI` talks to a real server;
/// tests may use a fake.
public protocol ParleyAPI: Sendable {
    func register(username: String, displayName: String, password: String) async throws -> API.SessionResponse
    func login(username: String, password: String) async throws -> API.SessionResponse
    func logout(token: String) async throws
    func conversations(token: String) async throws -> [ConversationSummary]
    func conversation(_ id: ConversationID, token: String) async throws -> ConversationSummary
    /// A page of history, ascending; `before` pages backwards from a seq.
    func history(_ id: ConversationID, before: Int64?, limit: Int, token: String) async throws -> MessagePage
    func searchUsers(_ query: String, token: String) async throws -> [User]
    func user(_ id: UserID, token: String) async throws -> User
}

/// A failed request: the server's error code and message, or a transport failure (`code == nil`).
public struct ParleyClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The HTTP status.
    public var status: Int
    /// The API's error code, when the body had one.
    public var code: ErrorCode?
    /// The server's message (safe to show).
    public var message: String

    /// Creates the error.
    public init(status: Int, code: ErrorCode?, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// The server's message.
    public var description: String { message }
    /// 401: the session is gone; the app should sign in again.
    public var isUnauthorized: Bool { status == 401 }
}
