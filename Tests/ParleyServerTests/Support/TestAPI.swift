import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import ParleyCore
import ParleySQLite
import ParleyStore
import Testing

/// A registered test user with a live session.
struct Account: Sendable {
    let user: User
    let token: String
    var id: UserID { user.id }
}

/// An HTTP response as the tests see it, whichever client fetched it.
struct APIResponse: Sendable {
    let status: HTTPResponse.Status
    let headers: HTTPFields
    let body: ByteBuffer
}

/// Sends one HTTP request to the server under test.
typealias HTTPTransport = @Sendable (_ uri: String, _ method: HTTPRequest.Method, _ headers: HTTPFields, _ body: ByteBuffer?) async throws -> APIResponse

/// REST calls against the running test server.
struct TestAPI: Sendable {
    let transport: HTTPTransport
    let port: Int
    /// The server's store, for tests that need to reach behind the API (pruning, inspection).
    let store: any ParleyStore

    func request(
        _ method: HTTPRequest.Method, _ uri: String, token: String? = nil, json: String? = nil, headers: HTTPFields = [:]
    ) async throws -> APIResponse {
        try await request(method, uri, token: token, body: json.map { ByteBuffer(string: $0) }, headers: headers)
    }

    func request(
        _ method: HTTPRequest.Method, _ uri: String, token: String? = nil, body: ByteBuffer?, headers: HTTPFields = [:]
    ) async throws -> APIResponse {
        var headers = headers
        if let token { headers[.authorization] = "Bearer \(token)" }
        if body != nil, headers[.contentType] == nil { headers[.contentType] = "application/json" }
        let response = try await transport(uri, method, headers, body)
        for problem in OpenAPISpec.shared.problems(method: method, uri: uri, status: Int(response.status.code), body: Data(response.body.readableBytesView)) {
            Issue.record("Response does not match openapi.yaml: \(problem)")
        }
        return response
    }

    func request<Body: Encodable>(_ method: HTTPRequest.Method, _ uri: String, token: String? = nil, encoding value: Body) async throws -> APIResponse {
        try await request(method, uri, token: token, json: String(decoding: try JSONEncoder().encode(value), as: UTF8.self))
    }

    func register(_ username: String, displayName: String? = nil, password: String = "correct horse") async throws -> Account {
        let response = try await request(
            .post, "/v1/auth/register",
            encoding: API.RegisterRequest(username: username, displayName: displayName ?? username.capitalized, password: password))
        guard response.status == .created else { throw TestFailure("register \(username): \(response.status) \(String(buffer: response.body))") }
        let session = try response.decode(API.SessionResponse.self)
        return Account(user: session.user, token: session.token)
    }

    /// Signs in again: a second session (another device) of the same account.
    func login(_ username: String, password: String = "correct horse", headers: HTTPFields = [:]) async throws -> Account {
        let response = try await request(
            .post, "/v1/auth/login", json: String(decoding: try JSONEncoder().encode(API.LoginRequest(username: username, password: password)), as: UTF8.self),
            headers: headers)
        guard response.status == .ok else { throw TestFailure("login \(username): \(response.status) \(String(buffer: response.body))") }
        let session = try response.decode(API.SessionResponse.self)
        return Account(user: session.user, token: session.token)
    }

    /// Sends over REST and returns the stored message.
    func send(
        _ text: String, from account: Account, to recipient: Account? = nil, in conversation: ConversationID? = nil,
        clientId: ClientMessageID = .random()
    ) async throws -> Message {
        let response = try await request(
            .post, "/v1/messages", token: account.token,
            encoding: SendRequest(clientId: clientId, conversationId: conversation, recipientId: conversation == nil ? recipient?.id : nil, text: text))
        guard response.status == .created || response.status == .ok else {
            throw TestFailure("send: \(response.status) \(String(buffer: response.body))")
        }
        return try response.decode(API.SendResponse.self).message
    }

    func conversations(of account: Account) async throws -> [ConversationSummary] {
        try await request(.get, "/v1/conversations", token: account.token).decode(API.ConversationList.self).conversations
    }

    func socket(_ account: Account, after: Int64? = nil) async throws -> TestSocket {
        try await TestSocket.connect(port: port, hello: .hello(token: account.token, after: after))
    }
}

extension APIResponse {
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(body.readableBytesView))
    }

    /// The error code of a JSON error body, or nil.
    var errorCode: ErrorCode? { (try? decode(ErrorBody.self))?.error.code }
}

extension TestAPI {
    /// Requests through Hummingbird's live test client.
    init(client: any TestClientProtocol, port: Int, store: any ParleyStore) {
        self.init(
            transport: { uri, method, headers, body in
                let response = try await client.executeRequest(uri: uri, method: method, headers: headers, body: body)
                return APIResponse(status: response.status, headers: response.headers, body: response.body)
            }, port: port, store: store)
    }

    /// Requests through a plain test client connected to `port` (a server in another process).
    init(connectedTo client: TestClient, port: Int, store: any ParleyStore) {
        self.init(
            transport: { uri, method, headers, body in
                var headers = headers
                headers[.connection] = "keep-alive"
                let response = try await client.execute(TestClient.Request(uri, method: method, authority: "127.0.0.1", headers: headers, body: body))
                return APIResponse(status: response.head.status, headers: response.head.headerFields, body: response.body ?? ByteBuffer())
            }, port: port, store: store)
    }
}
