import Foundation
import ParleySDK
import ParleyCore
import Synchronization

/// An in-memory ``ParleyAPI`` for view-model tests.
final class FakeAPI: ParleyAPI, @unchecked Sendable {
    var conversationList: [ConversationSummary] = []
    var pages: [ConversationID: [Message]] = [:]
    var users: [User] = []
    var failConversations: ParleyClientError?
    /// Awaited after the list is read and before it is answered (to let the stream overtake it).
    var holdConversations: (@Sendable () async -> Void)?
    private(set) var conversationRequests = 0

    func register(username: String, displayName: String, password: String) async throws -> API.SessionResponse { throw unsupported }
    func login(username: String, password: String) async throws -> API.SessionResponse { throw unsupported }
    func logout(token: String) async throws {}
    func conversations(token: String) async throws -> [ConversationSummary] {
        if let failConversations { throw failConversations }
        let list = conversationList
        conversationRequests += 1
        await holdConversations?()
        return list
    }
    func conversation(_ id: ConversationID, token: String) async throws -> ConversationSummary {
        guard let summary = conversationList.first(where: { $0.id == id }) else {
            throw ParleyClientError(status: 404, code: .conversationNotFound, message: "No such conversation.")
        }
        return summary
    }
    func history(_ id: ConversationID, before: Int64?, limit: Int, token: String) async throws -> MessagePage {
        let all = (pages[id] ?? []).filter { before == nil || $0.seq < before! }
        return MessagePage(messages: Array(all.suffix(limit)), hasMore: all.count > limit)
    }
    func searchUsers(_ query: String, token: String) async throws -> [User] {
        users.filter { $0.username.hasPrefix(query.lowercased()) || $0.displayName.lowercased().hasPrefix(query.lowercased()) }
    }
    func user(_ id: UserID, token: String) async throws -> User {
        guard let user = users.first(where: { $0.id == id }) else { throw unsupported }
        return user
    }
    /// The signed-in user, for ``setDisplayName(_:token:)`` (which refuses without one).
    var account: User?
    func setDisplayName(_ displayName: String, token: String) async throws -> User {
        guard var user = account else { throw unsupported }
        user.displayName = displayName
        account = user
        return user
    }
    private var unsupported: ParleyClientError { ParleyClientError(status: 500, code: nil, message: "not in this fake") }
    /// Uploads, when `takesFiles` (else refused as a server without files refuses them): what was
    /// created and what was given up; `onAppend` runs as each part is taken.
    var takesFiles = false
    var uploadsCreated: [UploadID] = []
    var uploadsDeleted: [UploadID] = []
    var onAppend: (@Sendable () -> Void)?
    /// Whether each created upload was sent as it was, in order.
    var uploadsOriginal: [Bool] = []
    func createUpload(length: Int64, name: String, sha256: String?, original: Bool, token: String) async throws -> API.Upload {
        guard takesFiles else { throw ParleyClientError(status: 404, code: .notFound, message: "This server does not take files.") }
        let id = UploadID.random()
        uploadsCreated.append(id)
        uploadsOriginal.append(original)
        return API.Upload(id: id, name: name, size: length, offset: 0, complete: length == 0, expiresAt: Timestamp(milliseconds: 0))
    }
    func appendUpload(_ id: UploadID, offset: Int64, bytes: Data, token: String) async throws { onAppend?() }
    func deleteUpload(_ id: UploadID, token: String) async throws { uploadsDeleted.append(id) }

    /// The bytes `fileBytes` serves, by upload (a hostile server may serve fewer than it said).
    var files: [UploadID: Data] = [:]
    func fileBytes(_ id: UploadID, offset: Int64, length: Int64, token: String) async throws -> Data {
        guard let data = files[id] else { throw ParleyClientError(status: 404, code: .fileNotFound, message: "No such file.") }
        let start = min(Int(offset), data.count)
        return data.subdata(in: start..<min(data.count, start + Int(length)))
    }

    // Groups: every action is logged with its clientId; `failures` are thrown first, one per call.
    private(set) var actions: [(name: String, clientId: ClientMessageID)] = []
    var failures: [ParleyClientError] = []
    var answer: (String, ClientMessageID) -> API.GroupActionResponse = { _, _ in API.GroupActionResponse(entry: nil, duplicate: false) }
    var pendingInvitations: [Invitation] = []
    private func act(_ name: String, _ clientId: ClientMessageID) throws -> API.GroupActionResponse {
        actions.append((name, clientId))
        if !failures.isEmpty { throw failures.removeFirst() }
        return answer(name, clientId)
    }
    func createGroup(_ request: API.CreateGroupRequest, token: String) async throws -> API.GroupActionResponse { try act("create", request.clientId) }
    func addMembers(to id: ConversationID, _ request: API.AddMembersRequest, token: String) async throws -> API.GroupActionResponse {
        try act("add", request.clientId)
    }
    func removeMember(_ user: UserID, from id: ConversationID, clientId: ClientMessageID, token: String) async throws -> API.GroupActionResponse {
        try act("remove", clientId)
    }
    func setRole(of user: UserID, in id: ConversationID, _ request: API.ChangeRoleRequest, token: String) async throws -> API.GroupActionResponse {
        try act("role", request.clientId)
    }
    func leave(_ id: ConversationID, clientId: ClientMessageID, token: String) async throws -> API.GroupActionResponse { try act("leave", clientId) }
    func rename(_ id: ConversationID, _ request: API.RenameGroupRequest, token: String) async throws -> API.GroupActionResponse {
        try act("rename", request.clientId)
    }
    func invitations(token: String) async throws -> [Invitation] { pendingInvitations }
    func acceptInvitation(_ id: ConversationID, clientId: ClientMessageID, token: String) async throws -> API.GroupActionResponse {
        try act("accept", clientId)
    }
    func declineInvitation(_ id: ConversationID, token: String) async throws {
        _ = try act("decline", .random())
        pendingInvitations.removeAll { $0.conversationId == id }
    }
    func messageInfo(_ id: ConversationID, seq: Int64, token: String) async throws -> MessageInfo {
        MessageInfo(seq: seq, readBy: [], deliveredTo: [], pending: [])
    }

    // Message actions: the client sends them over the live connection; versions are read here.
    var versions: [Int64: [MessageVersion]] = [:]
    func act(on seq: Int64, in id: ConversationID, _ body: API.MessageActionBody, token: String) async throws -> API.MessageActionResponse {
        throw unsupported
    }
    func versions(of seq: Int64, in id: ConversationID, token: String) async throws -> [MessageVersion] { versions[seq] ?? [] }

    // Search: answered by `searchAnswer` (SearchViewModelTests), every request logged.
    private(set) var searches: [(query: String, order: SearchOrder, cursor: String?)] = []
    var searchAnswer: (String, SearchOrder, String?) async throws -> API.SearchResults = { _, _, _ in API.SearchResults(results: [], nextCursor: nil) }
    func search(query: String, order: SearchOrder, limit: Int?, cursor: String?, token: String) async throws -> API.SearchResults {
        searches.append((query, order, cursor))
        return try await searchAnswer(query, order, cursor)
    }

    // Notifications: kept as the server would, every device token logged.
    var notifications = NotificationSettings()
    private(set) var deviceTokens: [String: API.APNsTokenBody.Environment] = [:]
    func notificationSettings(token: String) async throws -> NotificationSettings { notifications }
    func setNotificationPreview(_ preview: NotificationPreview, token: String) async throws -> NotificationSettings {
        notifications.preview = preview
        return notifications
    }
    func changeNotifications(of id: ConversationID, _ change: ConversationNotificationChange, token: String) async throws
        -> ConversationNotificationSetting
    {
        var setting = notifications.conversations.first { $0.conversationId == id } ?? ConversationNotificationSetting(conversationId: id)
        setting.apply(change, now: .now())
        notifications.conversations.removeAll { $0.conversationId == id }
        if !setting.isDefault(at: .now()) { notifications.conversations.append(setting) }
        return setting
    }
    func registerAPNsToken(_ deviceToken: String, environment: API.APNsTokenBody.Environment, token: String) async throws {
        deviceTokens[deviceToken] = environment
    }
    func unregisterAPNsToken(_ deviceToken: String, token: String) async throws { deviceTokens[deviceToken] = nil }
}

/// A scripted live connection: the test pushes server frames and reads what the client sent.
final class FakeTransport: RealtimeTransport, Sendable {
    let connections = Mutex<[FakeConnection]>([])
    var current: FakeConnection? { connections.withLock { $0.last } }
    /// New connections hold back everything from the answer to their first ping on (``FakeConnection/backlogFromFirstPing``).
    let backlogFromFirstPing = Mutex(false)

    func connect() async throws -> any RealtimeConnection {
        let connection = FakeConnection(backlogFromFirstPing: backlogFromFirstPing.withLock { $0 })
        connections.withLock { $0.append(connection) }
        return connection
    }
}

final class FakeConnection: RealtimeConnection, Sendable {
    let frames: AsyncStream<ServerFrame>
    private let sink: AsyncStream<ServerFrame>.Continuation
    private let sentFrames = Mutex<[ClientFrame]>([])

    /// As a real transport does, a pushed frame is stamped as it comes off the socket. While
    /// `arrivingNow` is set, frames keep coming off it that the client's handler never gets (a
    /// backlog); `arrivalReads` counts how often the watchdog asked.
    let arrivingNow = Mutex(false)
    let arrivalReads = Mutex(0)
    private let pushedAt = Mutex<ContinuousClock.Instant?>(nil)
    var lastArrival: ContinuousClock.Instant? {
        arrivalReads.withLock { $0 += 1 }
        return arrivingNow.withLock { $0 } ? .now : pushedAt.withLock { $0 }
    }
    /// When set, the first ping's answer and everything after it arrive as a backlog: `arrivingNow`
    /// is set as the ping goes out, so no stall between the ping and the test can beat it.
    private let backlogFromFirstPing: Bool
    private let pinged = Mutex(false)

    init(backlogFromFirstPing: Bool = false) {
        (frames, sink) = AsyncStream.makeStream(of: ServerFrame.self)
        self.backlogFromFirstPing = backlogFromFirstPing
    }

    func send(_ frame: ClientFrame) {
        sentFrames.withLock { $0.append(frame) }
        guard backlogFromFirstPing, case .ping = frame else { return }
        let first = pinged.withLock { wasPinged in
            defer { wasPinged = true }
            return !wasPinged
        }
        if first { arrivingNow.withLock { $0 = true } }
    }
    func close() { sink.finish() }
    func push(_ frame: ServerFrame) {
        pushedAt.withLock { $0 = .now }
        sink.yield(frame)
    }
    var sent: [ClientFrame] { sentFrames.withLock { $0 } }
    var sentMessages: [SendRequest] { sent.compactMap { if case .send(let request) = $0 { request } else { nil } } }
    var sentActions: [MessageActionRequest] { sent.compactMap { if case .action(let request) = $0 { request } else { nil } } }
    /// Sends and actions, in the order they went out.
    var sentWrites: [ClientFrame] { sent.filter { if case .send = $0 { true } else if case .action = $0 { true } else { false } } }
}

/// Test data and a client wired to the fakes.
@MainActor
struct Fixture {
    let me = User(id: .random(), username: "ada", displayName: "Ada Lovelace", createdAt: Timestamp(milliseconds: 0))
    let grace = User(id: .random(), username: "grace", displayName: "Grace Hopper", createdAt: Timestamp(milliseconds: 0))
    let api = FakeAPI()
    let transport = FakeTransport()
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-client-\(UUID().uuidString)")

    var conversation: ConversationID { .direct(me.id, grace.id) }

    func makeClient(heartbeat: Heartbeat = .standard) throws -> ParleyClient {
        let session = Session(serverURL: URL(string: "http://127.0.0.1:1")!, user: me, token: "token")
        return ParleyClient(
            session: session, api: api, transport: transport, store: try LocalStore(path: directory.appendingPathComponent("store.sqlite").path),
            heartbeat: heartbeat)
    }

    func summary(
        lastSeq: Int64 = 0, lastMessage: Message? = nil, myRead: Int64 = 0, theirDelivered: Int64 = 0, theirRead: Int64 = 0,
        activity: Int64 = 1000, online: Bool = false
    ) -> ConversationSummary {
        ConversationSummary(
            id: conversation, kind: .direct, createdAt: Timestamp(milliseconds: 0), lastSeq: lastSeq, lastMessage: lastMessage,
            lastActivityAt: Timestamp(milliseconds: activity), unreadCount: lastSeq - myRead,
            members: [
                ConversationMember(userId: me.id, username: me.username, displayName: me.displayName, deliveredSeq: myRead, readSeq: myRead),
                ConversationMember(
                    userId: grace.id, username: grace.username, displayName: grace.displayName, deliveredSeq: theirDelivered,
                    readSeq: theirRead, online: online),
            ])
    }

    func message(_ seq: Int64, from sender: User, _ text: String, at ms: Int64 = 1000, clientId: ClientMessageID = .random()) -> Message {
        Message(
            id: .random(), conversationId: conversation, seq: seq, senderId: sender.id, clientId: clientId, text: text, createdAt: Timestamp(milliseconds: ms))
    }

    /// Connects the client: hello answered with welcome and synced, so it is online. (A new
    /// connection: an earlier client of this fixture may have had one.) Every connection it opens is
    /// greeted: on a loaded machine a client with a quick heartbeat may give up on its first.
    func connect(_ client: ParleyClient, head: Int64 = 0) async throws -> FakeConnection {
        var greeted = transport.connections.withLock { $0.count }
        client.start()
        return try await eventually("online") {
            let connections = transport.connections.withLock { $0 }
            for connection in connections[greeted...] {
                connection.push(.welcome(userId: me.id, head: head))
                connection.push(.synced(position: head))
            }
            greeted = connections.count
            return client.connectionState == .online ? connections.last : nil
        }
    }
}

/// Polls `condition` on the main actor until it gives a value. The timeout is a hang guard, not a
/// timing check: the whole suite runs in parallel on two cores next to flooding and crash tests.
@MainActor
func eventually<T>(_ what: String, timeout: Duration = .seconds(30), _ condition: () -> T?) async throws -> T {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while ContinuousClock.now < deadline {
        if let value = condition() { return value }
        try await Task.sleep(for: .milliseconds(5))
    }
    throw ClientTestFailure("timed out waiting for \(what)")
}

struct ClientTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
