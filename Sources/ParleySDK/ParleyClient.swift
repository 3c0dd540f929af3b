import Foundation
import Observation
import ParleyCore

/// The app's connection to Parley: signs in, keeps a local copy of conversations and messages, sends
/// through the ``MessageOutbox``, and stays in sync over one live connection.
///
/// Sync rules:
/// 1. On start, the cached conversations, messages and outbox show at once, before the network answers.
/// 2. The live connection resumes after the last stream position processed (persisted after each
///    event), so nothing is missed or applied twice; a first connection starts live from the head and
///    takes a REST snapshot. `resync` drops the cache and takes a snapshot again. A resumed
///    connection reads the list too, but takes only its people's names and photos from it
///    (``refreshProfiles()``): those changed while it was away come in no event (`profile` frames
///    are not replayed), and the replay brings everything else.
/// 3. Lost connections are retried with exponential backoff and full jitter (0.5 s … 15 s), or at
///    once after ``reconnectNow()`` (the network came back). A dead line is noticed by the
///    ``Heartbeat`` within seconds, not when TCP gives up.
/// 4. The same message from any source (my `sent` ack, the stream, a replay, another device) is
///    stored once, keyed by conversation and seq.
/// 5. Messages from others are marked delivered once stored; read when the app says they were seen.
/// 6. A snapshot races the stream (it may have been read before events already applied): it never
///    moves a cursor or a conversation's last message back.
/// 7. Groups follow the same rules; what they add (entries, the receipt aggregate, invitations,
///    unread counts without entries, idempotent actions) is in the Groups article,
///    `ParleyClient+GroupSync.swift` and `ParleyClient+Groups.swift`.
/// 8. Replies, reactions, edits and deletes go through the outbox too; how they are made and how
///    changed messages are applied is in the Message actions article,
///    `ParleyClient+MessageActions.swift` and `ParleyClient+MessageUpdates.swift`.
@MainActor
@Observable
public final class ParleyClient {
    /// `unauthorized`: the server ended the session (signed out elsewhere, password changed,
    /// expired). The client stops reconnecting; the app should sign in again.
    public enum ConnectionState: Sendable, Equatable { case offline, connecting, online, unauthorized }
    /// Whether the conversation list is loading, loaded, or failed with a message to show.
    public enum ListState: Sendable, Equatable { case loading, loaded, failed(String) }
    /// What the client knows of a contact's presence.
    public struct Presence: Sendable, Equatable {
        /// Connected to the server now.
        public var online: Bool
        /// When they were last connected (when offline, and if they share it).
        public var lastSeenAt: Timestamp?
        /// Creates a presence value.
        public init(online: Bool, lastSeenAt: Timestamp? = nil) {
            self.online = online
            self.lastSeenAt = lastSeenAt
        }
    }

    /// Someone typing in a conversation, until when the signal holds unless renewed.
    public struct TypingIndicator: Sendable, Equatable {
        /// Who is typing.
        public var user: UserID
        /// When the signal ends unless renewed.
        public var until: Date
        /// Creates a typing value.
        public init(user: UserID, until: Date) {
            self.user = user
            self.until = until
        }
    }

    /// The signed-in account; its user follows my profile changes made on other devices.
    public internal(set) var session: Session
    /// The signed-in user.
    public var me: User { session.user }
    /// The live connection's state (see the Connection lifecycle article).
    public internal(set) var connectionState: ConnectionState = .offline
    /// Whether the conversation list is known yet.
    public internal(set) var listState: ListState = .loading
    /// My conversations by id (``sortedConversations()`` gives the list order).
    public internal(set) var conversations: [ConversationID: ConversationSummary] = [:]
    /// Confirmed messages by conversation, then seq; read them through ``timeline(_:)``.
    var messages: [ConversationID: [Int64: Message]] = [:]
    var hasOlder: [ConversationID: Bool] = [:]
    /// Messages written and not yet confirmed by the server, persisted across restarts.
    public internal(set) var outbox: MessageOutbox
    /// Presence of my contacts, by user.
    public internal(set) var presence: [UserID: Presence] = [:]
    /// Who is typing, by conversation, in the order they started (``typingUsers(in:now:)`` applies
    /// the expiry). In a group several people may type at once.
    public internal(set) var typing: [ConversationID: [TypingIndicator]] = [:]
    /// My notification settings as the server last said (``loadNotificationSettings()``).
    public internal(set) var notificationSettings = NotificationSettings()
    /// Pending invitations to groups, newest first (``accept(_:)`` or ``decline(_:)`` them).
    public internal(set) var invitations: [Invitation] = []
    /// My message actions the server refused (dropped from the outbox), with their reasons, oldest
    /// first, until dismissed (``dismissRefusedActions(in:)``); the newest ``maxRefusedActions``.
    public internal(set) var refusedActions: [RefusedAction] = []
    /// The newest of ``refusedActions``.
    public var refusedAction: RefusedAction? { refusedActions.last }
    /// How many refusals ``refusedActions`` keeps.
    public static let maxRefusedActions = 20
    /// People fetched by id because no conversation of mine lists them (a group's former members,
    /// inviters), and people whose profile changed while I was connected: ``displayName(of:in:)``
    /// and ``photoPath(of:)`` read them.
    public internal(set) var users: [UserID: User] = [:]
    /// Names of people who were members of a group when I last saw it, kept when they (or I) leave.
    var formerNames: [UserID: String] = [:]
    /// Messages I deleted for me, by conversation (persisted): never shown or counted again.
    @ObservationIgnored var hiddenSeqs: [ConversationID: Set<Int64>] = [:]
    /// Whose names read alike in each group, and among the people of my direct conversations
    /// (``nameMarks(in:)``), kept with the names they were worked out from.
    @ObservationIgnored var lookAlikes: [ConversationID: LookAlikeMarks] = [:]
    @ObservationIgnored var directLookAlikes: LookAlikeMarks?

    @ObservationIgnored let api: any ParleyAPI
    @ObservationIgnored let transport: any RealtimeTransport
    @ObservationIgnored let store: LocalStore
    @ObservationIgnored var position: Int64?
    @ObservationIgnored var connection: (any RealtimeConnection)?
    @ObservationIgnored var loop: Task<Void, Never>?
    @ObservationIgnored var retryTimer: Task<Void, Never>?
    /// The outbox's file uploads, one at a time (``ParleyClient/pumpUploads()``).
    @ObservationIgnored var uploadTask: Task<Void, Never>?
    /// Bytes of the file being uploaded that the server has, by message (progress).
    var uploadOffsets: [ClientMessageID: Int64] = [:]
    @ObservationIgnored var deliveredTimer: Task<Void, Never>?
    @ObservationIgnored var deliveredPending: [ConversationID: Int64] = [:]
    @ObservationIgnored var readPending: [ConversationID: Int64] = [:]
    @ObservationIgnored var listeners: [UUID: AsyncStream<ClientEvent>.Continuation] = [:]
    @ObservationIgnored let heartbeat: Heartbeat
    @ObservationIgnored var lineWatch: LineWatch?
    @ObservationIgnored var watchdog: Task<Void, Never>?
    @ObservationIgnored var backoff: Task<Void, any Error>?
    @ObservationIgnored var pings = 0
    @ObservationIgnored var skipBackoff = false
    /// Set when the server refuses the session; ends the connection loop (no reconnecting).
    @ObservationIgnored var sessionEnded = false
    /// Idempotency keys of group actions not yet answered for sure (persisted).
    @ObservationIgnored var groupActions: GroupActionLedger
    /// Lookups of people by id, one per person per run (a failure is not retried in a loop).
    @ObservationIgnored var userFetches: [UserID: Task<Void, Never>] = [:]
    @ObservationIgnored var refetches: [ConversationID: Task<Void, Never>] = [:]
    /// Invitations that arrived on the stream while the list was being read over REST.
    @ObservationIgnored var invitationsDuringRefresh: [Invitation]?
    #if canImport(Network)
    @ObservationIgnored var pathWatcher: NetworkPathWatcher?
    #endif

    /// Rule 1: loads the cache synchronously, so the first frame shows it.
    public init(session: Session, api: any ParleyAPI, transport: any RealtimeTransport, store: LocalStore, heartbeat: Heartbeat = .standard) {
        self.session = session
        self.heartbeat = heartbeat
        self.api = api
        self.transport = transport
        self.store = store
        self.outbox = MessageOutbox(entries: (try? store.outbox()) ?? [])
        self.position = try? store.position()
        self.groupActions = (try? store.groupActions()) ?? GroupActionLedger()
        self.invitations = (try? store.invitations()) ?? []
        self.hiddenSeqs = (try? store.hiddenMessages()) ?? [:]
        for summary in (try? store.conversations()) ?? [] {
            conversations[summary.id] = summary
            let cached = (try? store.messages(in: summary.id)) ?? []
            if !cached.isEmpty { messages[summary.id] = Dictionary(uniqueKeysWithValues: cached.map { ($0.seq, $0) }) }
        }
        if !conversations.isEmpty { listState = .loaded }
    }

    /// A client on the real server at `session.serverURL`, with its database in `storage`.
    public convenience init(session: Session, storage: ClientStorage, heartbeat: Heartbeat = .standard) throws {
        self.init(
            session: session, api: HTTPParleyAPI(baseURL: session.serverURL), transport: WebSocketTransport(serverURL: session.serverURL),
            store: try storage.store(for: session.user.id), heartbeat: heartbeat)
    }

    // MARK: events

    /// Everything that happens from now on, for interfaces that print (observation serves SwiftUI).
    public func events() -> AsyncStream<ClientEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ClientEvent.self)
        let id = UUID()
        listeners[id] = continuation
        continuation.onTermination = { [weak self] _ in Task { @MainActor in self?.listeners[id] = nil } }
        return stream
    }

    func emit(_ event: ClientEvent) {
        for listener in listeners.values { listener.yield(event) }
    }

    // MARK: reading

    /// Whether older messages than those held may exist on the server (``loadOlder(_:)`` fetches them).
    public func hasOlderMessages(in id: ConversationID) -> Bool? { hasOlder[id] }

    /// The known conversations, most recent activity first.
    public func sortedConversations() -> [ConversationSummary] {
        conversations.values.sorted { ($0.lastActivityAt, $0.id.rawValue) > ($1.lastActivityAt, $1.id.rawValue) }
    }

    /// The member of a direct conversation who is not me.
    public func otherMember(of summary: ConversationSummary) -> ConversationMember? { summary.otherMember(than: me.id) }

    // MARK: actions

    /// Marks my read cursor up to `seq` (read on one device clears the count on all).
    /// In a group the unread and mention counts are counted again from the messages held.
    public func markRead(_ id: ConversationID, upTo seq: Int64) {
        guard var summary = conversations[id], let index = summary.members.firstIndex(where: { $0.userId == me.id }),
            summary.members[index].readSeq < seq, seq <= summary.lastSeq
        else { return }
        summary.members[index].readSeq = seq
        summary.members[index].deliveredSeq = max(summary.members[index].deliveredSeq, seq)
        conversations[id] = summary
        recountUnread(id)
        readPending[id] = seq
        flushReceipts()
    }

    /// Tells the other members I am typing (or stopped); sent only while connected and a member.
    public func setTyping(_ isTyping: Bool, in id: ConversationID) {
        guard let summary = conversations[id], summary.leftSeq == nil, connectionState == .online else { return }
        connection?.send(.typing(conversationId: id, isTyping: isTyping))
    }

    /// Users to start a chat with, by username or display name prefix (at least 3 characters).
    public func searchUsers(_ query: String) async throws -> [User] {
        try await api.searchUsers(query, token: session.token)
    }

    /// Loads the newest page of a conversation (the cache shows meanwhile).
    public func loadLatest(_ id: ConversationID) async throws {
        guard conversations[id] != nil else { return }
        let page = try await api.history(id, before: nil, limit: 50, token: session.token)
        store(page.messages)
        if hasOlder[id] == nil || (messages[id]?.count ?? 0) <= page.messages.count { hasOlder[id] = page.hasMore }
    }

    /// Loads the page before the oldest message held. Returns how many came.
    @discardableResult
    public func loadOlder(_ id: ConversationID) async throws -> Int {
        guard conversations[id] != nil, hasOlder[id] != false else { return 0 }
        let oldest = messages[id]?.keys.min()
        let page = try await api.history(id, before: oldest, limit: 50, token: session.token)
        store(page.messages)
        hasOlder[id] = page.hasMore
        return page.messages.count
    }

    /// Rule 4: stores messages once, by (conversation, seq). Group senders and the people entries
    /// name are looked up when no conversation lists them (``displayName(of:in:)``).
    func store(_ incoming: [Message]) {
        let incoming = withoutHidden(incoming)
        guard !incoming.isEmpty else { return }
        for message in incoming { messages[message.conversationId, default: [:]][message.seq] = message }
        try? store.save(messages: incoming)
        startResolvingNames(in: incoming)
    }

    func saveOutbox() {
        try? store.save(outbox: outbox.entries)
    }
}
