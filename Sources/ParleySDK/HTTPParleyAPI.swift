#if os(Linux)
import AsyncHTTPClient
#endif
import Foundation
import ParleyCore

/// ``ParleyAPI`` over HTTP, through an ``HTTPRequester``: URLSession on Apple platforms,
/// AsyncHTTPClient on Linux, unless the app passes its own.
public struct HTTPParleyAPI: ParleyAPI {
    /// The server, e.g. `https://chat.example.com`.
    public let baseURL: URL
    private let requester: any HTTPRequester

    /// A client of the server at `baseURL`, sending through `requester`.
    public init(baseURL: URL, requester: any HTTPRequester) {
        self.baseURL = baseURL
        self.requester = requester
    }

    /// A client of the server at `baseURL` with the platform's default requester.
    public init(baseURL: URL) {
        self.init(baseURL: baseURL, requester: Self.defaultRequester)
    }

    #if os(Linux)
    /// A client of the server at `baseURL`, sharing `client`'s connection pool.
    public init(baseURL: URL, client: HTTPClient) {
        self.init(baseURL: baseURL, requester: AsyncHTTPClientRequester(client: client))
    }

    static var defaultRequester: any HTTPRequester { AsyncHTTPClientRequester() }
    #else
    static var defaultRequester: any HTTPRequester { URLSessionRequester() }
    #endif

    /// Creates an account and returns its first session.
    public func register(username: String, displayName: String, password: String) async throws -> API.SessionResponse {
        try await call(.POST, "/v1/auth/register", body: API.RegisterRequest(username: username, displayName: displayName, password: password))
    }

    /// Signs in and returns a new session.
    public func login(username: String, password: String) async throws -> API.SessionResponse {
        try await call(.POST, "/v1/auth/login", body: API.LoginRequest(username: username, password: password))
    }

    /// Ends the session of `token` on the server (its live connections close).
    public func logout(token: String) async throws {
        _ = try await raw(.POST, "/v1/auth/logout", token: token)
    }

    /// The user's conversations, most recent activity first.
    public func conversations(token: String) async throws -> [ConversationSummary] {
        let list: API.ConversationList = try await call(.GET, "/v1/conversations?limit=100", token: token)
        return list.conversations
    }

    /// One conversation, with members, cursors and presence.
    public func conversation(_ id: ConversationID, token: String) async throws -> ConversationSummary {
        try await call(.GET, "/v1/conversations/\(id)", token: token)
    }

    /// A page of history before `before` (or the newest page), ascending by seq.
    public func history(_ id: ConversationID, before: Int64?, limit: Int, token: String) async throws -> MessagePage {
        try await call(.GET, "/v1/conversations/\(id)/messages?limit=\(limit)" + (before.map { "&before=\($0)" } ?? ""), token: token)
    }

    /// Starts (or finds) the direct conversation with `user`, before any message (`POST /v1/conversations`).
    public func startConversation(with user: UserID, token: String) async throws -> ConversationSummary {
        try await call(.POST, "/v1/conversations", token: token, body: API.CreateConversationRequest(userId: user))
    }

    /// A page of history after `after`, ascending by seq: for reading a conversation from its start.
    public func history(_ id: ConversationID, after: Int64, limit: Int, token: String) async throws -> MessagePage {
        try await call(.GET, "/v1/conversations/\(id)/messages?limit=\(limit)&after=\(after)", token: token)
    }

    /// Users whose username or display name starts with `query` (at least 3 characters).
    public func searchUsers(_ query: String, token: String) async throws -> [User] {
        let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let list: API.UserList = try await call(.GET, "/v1/users?limit=20&query=\(encoded)", token: token)
        return list.users
    }

    /// One user's public profile.
    public func user(_ id: UserID, token: String) async throws -> User {
        try await call(.GET, "/v1/users/\(id)", token: token)
    }

    /// Changes my display name.
    public func setDisplayName(_ displayName: String, token: String) async throws -> User {
        try await call(.PATCH, "/v1/me", token: token, body: API.ProfileRequest(displayName: displayName))
    }

    func call<Response: Decodable>(
        _ method: Method, _ path: String, token: String? = nil, body: (some Encodable)? = nil as String?
    ) async throws -> Response {
        try JSONDecoder().decode(Response.self, from: try await raw(method, path, token: token, body: body))
    }

    enum Method: String { case GET, POST, PUT, PATCH, DELETE }

    /// The response body of a successful request; a `ParleyClientError` otherwise.
    func raw(_ method: Method, _ path: String, token: String?, body: (some Encodable)? = nil as String?) async throws -> Data {
        var headers: [String: String] = [:]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        var payload: Data?
        if let body {
            headers["Content-Type"] = "application/json"
            payload = try WireFormat.encoder().encode(body)
        }
        return try await perform(method.rawValue, path, headers: headers, body: payload)
    }

    /// Sends a request as given; the body of a 2xx answer, a `ParleyClientError` with the server's code otherwise.
    func perform(_ method: String, _ path: String, headers: [String: String], body: Data?) async throws -> Data {
        guard let url = URL(string: baseURL.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/")) + path) else {
            throw ParleyClientError(status: 0, code: nil, message: "The server address is not a URL.")
        }
        let status: Int, data: Data
        do {
            (status, data) = try await requester.send(method, url, headers: headers, body: body)
        } catch {
            throw ParleyClientError(status: 0, code: nil, message: "Cannot reach the server.")
        }
        guard (200..<300).contains(status) else {
            let detail = (try? JSONDecoder().decode(ErrorBody.self, from: data))?.error
            throw ParleyClientError(status: status, code: detail?.code, message: detail?.message ?? "Request failed (\(status)).")
        }
        return data
    }
}
