import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import ParleyCore

/// The REST calls the bench needs, over AsyncHTTPClient.
public struct BenchAPI: Sendable {
    public let baseURL: String
    let client: HTTPClient

    public init(baseURL: String, client: HTTPClient = .shared) {
        self.baseURL = baseURL
        self.client = client
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// A session for a user.
    public struct Session: Sendable {
        public let user: User
        public let token: String
    }

    func call<Response: Decodable>(
        _ method: HTTPMethod, _ path: String, token: String? = nil, body: (some Encodable)? = nil as String?, as type: Response.Type
    ) async throws -> Response {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try WireFormat.encoder().encode(body)))
        }
        let response = try await client.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        guard (200..<300).contains(response.status.code) else {
            throw Failure(description: "\(method) \(path): \(response.status.code) \(String(buffer: bytes))")
        }
        return try JSONDecoder().decode(Response.self, from: Data(bytes.readableBytesView))
    }

    /// Fails within `limit` unless a Parley server answers `/healthz` at ``baseURL``: the client
    /// otherwise retries a refused connection until a request's own 60 s deadline.
    public func checkReachable(within limit: TimeAmount = .seconds(5)) async throws {
        let response: HTTPClientResponse
        do {
            response = try await client.execute(HTTPClientRequest(url: baseURL + "/healthz"), timeout: limit)
        } catch {
            throw Failure(description: "no Parley server answers at \(baseURL) (\(error))")
        }
        guard response.status == .ok else {
            throw Failure(description: "the server at \(baseURL) is not ready: /healthz answered \(response.status.code)")
        }
    }

    public func register(_ username: String, password: String = "bench-password") async throws -> Session {
        let response = try await call(
            .POST, "/v1/auth/register", body: API.RegisterRequest(username: username, displayName: username, password: password),
            as: API.SessionResponse.self)
        return Session(user: response.user, token: response.token)
    }

    public func startConversation(_ session: Session, with other: UserID) async throws -> ConversationSummary {
        try await call(.POST, "/v1/conversations", token: session.token, body: API.CreateConversationRequest(userId: other), as: ConversationSummary.self)
    }

    public func history(_ session: Session, _ conversation: ConversationID, before: Int64? = nil, limit: Int = 50) async throws -> MessagePage {
        let query = "?limit=\(limit)" + (before.map { "&before=\($0)" } ?? "")
        return try await call(.GET, "/v1/conversations/\(conversation)/messages\(query)", token: session.token, as: MessagePage.self)
    }

    /// Registers `count` users named `<prefix><n>`, `concurrency` at a time.
    /// A conversation's whole history, oldest first.
    public func fullHistory(_ session: Session, _ conversation: ConversationID) async throws -> [Message] {
        var messages: [Message] = []
        while true {
            let page = try await call(
                .GET, "/v1/conversations/\(conversation)/messages?limit=200&after=\(messages.last?.seq ?? 0)", token: session.token,
                as: MessagePage.self)
            messages += page.messages
            if page.messages.isEmpty || !page.hasMore { return messages }
        }
    }

    public func registerMany(prefix: String, count: Int, concurrency: Int = 16) async throws -> [Session] {
        var sessions = [Session?](repeating: nil, count: count)
        try await withThrowingTaskGroup(of: (Int, Session).self) { group in
            var next = 0
            func addNext() {
                let index = next
                next += 1
                group.addTask { (index, try await register("\(prefix)\(index)")) }
            }
            for _ in 0..<min(concurrency, count) { addNext() }
            while let (index, session) = try await group.next() {
                sessions[index] = session
                if next < count { addNext() }
            }
        }
        return sessions.compactMap { $0 }
    }
}

/// The server a workload drives: its REST API, its WebSocket URL, and (to read its memory) its PID.
public struct BenchTarget: Sendable {
    public let api: BenchAPI
    public let webSocketURL: String
    public let serverPID: Int32?
    /// Where receivers connect, when not to `webSocketURL` (another node of a cluster: cross-node delivery).
    public let receiverWebSocketURL: String?

    public init(api: BenchAPI, webSocketURL: String, serverPID: Int32?, receiverWebSocketURL: String? = nil) {
        self.api = api
        self.webSocketURL = webSocketURL
        self.serverPID = serverPID
        self.receiverWebSocketURL = receiverWebSocketURL
    }
}
