import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import ParleyCore

/// ``ParleyAPI`` over HTTP with AsyncHTTPClient.
public struct HTTPParleyAPI: ParleyAPI {
    /// The server, e.g. `https://chat.example.com`.
    public let baseURL: URL
    private let client: HTTPClient

    /// A client of the server at `baseURL`, sharing `client`'s connection pool.
    public init(baseURL: URL, client: HTTPClient = .shared) {
        self.baseURL = baseURL
        self.client = client
    }

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

    private func call<Response: Decodable>(
        _ method: HTTPMethod, _ path: String, token: String? = nil, body: (some Encodable)? = nil as String?
    ) async throws -> Response {
        try JSONDecoder().decode(Response.self, from: try await raw(method, path, token: token, body: body))
    }

    /// The response body of a successful request; a `ParleyClientError` otherwise.
    private func raw(_ method: HTTPMethod, _ path: String, token: String?, body: (some Encodable)? = nil as String?) async throws -> Data {
        var request = HTTPClientRequest(url: baseURL.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/")) + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try WireFormat.encoder().encode(body)))
        }
        let response: HTTPClientResponse
        let bytes: ByteBuffer
        do {
            response = try await client.execute(request, timeout: .seconds(30))
            bytes = try await response.body.collect(upTo: 16 << 20)
        } catch {
            throw ParleyClientError(status: 0, code: nil, message: "Cannot reach the server.")
        }
        let data = Data(bytes.readableBytesView)
        guard (200..<300).contains(response.status.code) else {
            let detail = (try? JSONDecoder().decode(ErrorBody.self, from: data))?.error
            throw ParleyClientError(status: Int(response.status.code), code: detail?.code, message: detail?.message ?? "Request failed (\(response.status.code)).")
        }
        return data
    }
}
