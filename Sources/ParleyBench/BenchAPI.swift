import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import ParleyCore
import ParleySDK

/// The REST calls the bench needs: the SDK's ``HTTPParleyAPI`` (one REST client in the project),
/// plus what only a load generator wants (many accounts at once, a whole history, a quick
/// reachability check).
public struct BenchAPI: Sendable {
    public let baseURL: String
    let client: HTTPClient
    private let rest: HTTPParleyAPI

    public init(baseURL: String, client: HTTPClient = .shared) {
        self.baseURL = baseURL
        self.client = client
        rest = HTTPParleyAPI(baseURL: URL(string: baseURL) ?? URL(fileURLWithPath: "/"), client: client)
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// A session for a user.
    public struct Session: Sendable {
        public let user: User
        public let token: String
    }

    /// Runs one REST call; a refusal becomes a ``Failure`` naming the call.
    private func calling<T>(_ what: String, _ call: () async throws -> T) async throws -> T {
        do {
            return try await call()
        } catch let error as ParleyClientError {
            throw Failure(description: "\(what): \(error.status) \(error.code?.rawValue ?? "") \(error.message)")
        }
    }

    /// Fails within `limit` unless a Parley server answers `/healthz` at ``baseURL``: the client
    /// otherwise retries a refused connection until a request's own timeout.
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

    /// The server's count of open WebSockets, from its metrics (`nil` when it cannot be read).
    public func openWebSockets() async -> Int? {
        guard let response = try? await client.execute(HTTPClientRequest(url: baseURL + "/metrics"), timeout: .seconds(5)),
            let body = try? await response.body.collect(upTo: 4 << 20)
        else { return nil }
        let line = String(buffer: body).split(separator: "\n").first { $0.hasPrefix("parley_websocket_connections ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) }
    }

    public func register(_ username: String, password: String = "bench-password") async throws -> Session {
        let response = try await calling("register \(username)") {
            try await rest.register(username: username, displayName: username, password: password)
        }
        return Session(user: response.user, token: response.token)
    }

    public func startConversation(_ session: Session, with other: UserID) async throws -> ConversationSummary {
        try await calling("start a conversation") { try await rest.startConversation(with: other, token: session.token) }
    }

    /// The session's conversation list (first page), with each member's presence.
    public func conversations(_ session: Session) async throws -> [ConversationSummary] {
        try await calling("conversations") { try await rest.conversations(token: session.token) }
    }

    public func history(_ session: Session, _ conversation: ConversationID, before: Int64? = nil, limit: Int = 50) async throws -> MessagePage {
        try await calling("history") { try await rest.history(conversation, before: before, limit: limit, token: session.token) }
    }

    /// A conversation's whole history, oldest first.
    public func fullHistory(_ session: Session, _ conversation: ConversationID) async throws -> [Message] {
        var messages: [Message] = []
        while true {
            let after = messages.last?.seq ?? 0
            let page = try await calling("history") { try await rest.history(conversation, after: after, limit: 200, token: session.token) }
            messages += page.messages
            if page.messages.isEmpty || !page.hasMore { return messages }
        }
    }

    /// Registers `count` users named `<prefix><n>`, `concurrency` at a time.
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

extension BenchAPI {
    /// Creates a group owned by `owner`; the others are invited (the bench's users are strangers).
    public func createGroup(by owner: Session, inviting others: [UserID]) async throws -> ConversationID {
        let response: API.GroupActionResponse = try await post(
            "/v1/groups", API.CreateGroupRequest(clientId: .random(), title: "Bench", memberIds: others), token: owner.token)
        guard let id = response.conversation?.id else { throw Failure(description: "create group: no conversation in the answer") }
        return id
    }

    /// Accepts each (session, group) invitation, `concurrency` at a time.
    public func acceptAll(_ invitations: [(Session, ConversationID)], concurrency: Int = 16) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            func addNext() {
                let (session, conversation) = invitations[next]
                next += 1
                group.addTask {
                    let _: API.GroupActionResponse = try await post(
                        "/v1/invitations/\(conversation.rawValue)/accept", API.GroupActionRequest(clientId: .random()), token: session.token)
                }
            }
            for _ in 0..<min(concurrency, invitations.count) { addNext() }
            while try await group.next() != nil {
                if next < invitations.count { addNext() }
            }
        }
    }

    /// A JSON POST the SDK has no call for (the bench's group set-up).
    func post<Body: Encodable, Answer: Decodable>(_ path: String, _ body: Body, token: String) async throws -> Answer {
        try JSONDecoder().decode(Answer.self, from: Data(try await postRaw(path, body, token: token).readableBytesView))
    }

    /// A JSON POST answered with no body (204).
    func postNoContent<Body: Encodable>(_ path: String, _ body: Body, token: String) async throws {
        _ = try await postRaw(path, body, token: token)
    }

    /// The answer's body of a JSON POST; a status other than 2xx is a ``Failure``.
    private func postRaw<Body: Encodable>(_ path: String, _ body: Body, token: String) async throws -> ByteBuffer {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.body = .bytes(ByteBuffer(bytes: Array(try JSONEncoder().encode(body))))
        let response = try await client.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 16 << 20)
        guard (200..<300).contains(response.status.code) else {
            throw Failure(description: "POST \(path): \(response.status.code) \(String(buffer: bytes))")
        }
        return bytes
    }
}
