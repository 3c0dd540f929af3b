import Logging
import NIOCore
import NIOWebSocket
import ParleyCore
import ParleyStore
import Synchronization

/// What every WebSocket connection shares, and the steps of one connection from `hello` to close;
/// each connection's own state is a ``ConnectionLifecycle``.
///
/// Resume rules (guarantee 5):
/// 1. The connection is registered with the hub *before* the replay is read, so an event committed
///    meanwhile is either in the replay, or queued live, or both — never neither.
/// 2. The outbound stream remembers the last position it wrote and skips anything at or below it: nothing twice.
/// 3. Each live event names the position before it in the user's stream (``Delivery/previous``:
///    positions may skip, a group message taking one for all its members). One whose previous
///    position is beyond the last written means something was missed (publishing raced); the
///    outbound fetches the gap from the store first: nothing lost, always in order.
/// 4. A position the store no longer has (pruned, or from another database) gets `resync` with the
///    head; the client reloads a snapshot and the stream goes on from the head.
/// 5. The connection a message was sent on gets its `sent` ack *instead of* the message's event in
///    the sender's stream: the ack carries the position and is written when the cursor reaches the
///    one before it (after fetching anything before it), so the stream still arrives in order. If the event was
///    already written (a catch-up fetched it first), the ack goes without a position.
///
/// One instance serves every connection (a class: each connection holds a reference, not a copy).
final class RealtimeGateway: Sendable {
    let store: any ParleyStore
    let hub: ConnectionHub
    let messenger: Messenger
    let typingLimiter: RateLimiter
    let configuration: ServerConfiguration
    static let replayPage = 500

    init(store: any ParleyStore, hub: ConnectionHub, messenger: Messenger, typingLimiter: RateLimiter, configuration: ServerConfiguration) {
        self.store = store
        self.hub = hub
        self.messenger = messenger
        self.typingLimiter = typingLimiter
        self.configuration = configuration
    }

    /// The state of a new connection on `channel`, which its socket handler drives.
    func start(channel: any Channel, logger: Logger) -> ConnectionLifecycle {
        ConnectionLifecycle(shared: self, channel: channel, logger: logger)
    }

    /// The answer to a connection's first frame.
    enum SignIn {
        case hello(Hello)
        /// The error frame to send before closing 1008 with the error's code as the reason.
        case refused(frame: String, code: ErrorCode)
    }

    /// The first frame must be a valid `hello` with a live session.
    func authenticate(_ bytes: [UInt8]) async throws -> SignIn {
        let refused: ParleyError
        switch WireCoding.decodeFrame(bytes) {
        case .success(.hello(let token, let after, _)):
            if SessionTokens.isWellFormed(token), case let hash = SessionTokens.hash(token),
                let session = try await store.session(tokenHash: hash, now: .now())
            {
                return .hello(Hello(session: session, tokenHash: hash, after: after))
            }
            refused = ParleyError(.unauthorized, "The token is invalid, expired or revoked.")
        case .success:
            refused = ParleyError(.notAuthenticated, "The first frame must be 'hello' with a token.")
        case .failure(let error):
            refused = error
        }
        let frame = try WireCoding.encode(.error(ref: WireCoding.ref(in: bytes), clientId: nil, code: refused.code, message: refused.message))
        return .refused(frame: frame, code: refused.code)
    }

    /// Once the connection is attached: the online announcement and the presence snapshot (queued,
    /// so they follow `welcome` and `synced`); returns the stream head, read after attaching
    /// (resume rule 1), for `welcome`, which the outbound stream sends first.
    func begin(_ connection: ClientConnection, firstHere: Bool, counted: CountedAnywhere) async throws -> Int64 {
        let user = connection.userId
        let start = try await store.liveStart(of: user)  // head and contacts in one read
        let presence = PresenceAnnouncer(store: store, hub: hub)
        // In a cluster, "first" means first anywhere, which only the bus knows.
        let firstAnywhere = if let bus = hub.bus { try await bus.connectionOpened(user) } else { firstHere }
        guard counted.set() else {
            // The sign-in was let go while this waited (ConnectionLifecycle rule 6): the count that
            // just landed is taken back, and the user goes offline again if nothing else holds them.
            if let bus = hub.bus, try await bus.connectionClosed(user) { try await presence.announceOffline(user) }
            throw SignInTimedOut()
        }
        if firstAnywhere { presence.announceOnline(user, to: start.contacts) }
        try await presence.sendSnapshot(of: start.contacts, to: connection)
        return start.head
    }

    /// After the socket closed: the hub lets go at once (nobody is counted online through a socket
    /// that is gone, and their typing ends), answers to frames read before are committed, the
    /// outbound stops, and the user's contacts learn they went offline if this was their last
    /// connection anywhere.
    ///
    /// Every step that waits on the database is bounded (``closeStepLimit``, ``boundedWait(_:_:)``):
    /// a database that restarts, or a query whose answer is lost, must not keep a closed socket
    /// counted, hold its user online, or hold graceful shutdown. A step cut short is repaired later:
    /// a send answered after the close was committed (the client retries it idempotently), and the
    /// cluster's presence rows are checked against the hub (``ClusterRelay/dropStalePresence()``).
    /// Graceful shutdown waits for all of it (``ConnectionHub/finishing(_:)``), so the store is still
    /// open when last seen is recorded.
    func finish(_ connection: ClientConnection, inbound: InboundFrameQueue, outbound: OutboundStream?, counted: CountedAnywhere) async {
        await hub.finishing {
            let user = connection.userId
            let lastHere = hub.detach(connection)
            let limit = Self.closeStepLimit
            _ = await boundedWait(limit) { await inbound.drain() }
            _ = await boundedWait(limit) { await outbound?.stop() }
            connection.finish()
            // One bounded step: a count written late (the database came back after the limit) still
            // announces the user offline when it lands, and a count that failed is repaired by
            // ``ClusterRelay/dropStalePresence()``.
            let counted = counted.close()
            _ = await boundedWait(limit) { [hub, store] in
                let lastAnywhere = if let bus = hub.bus { counted ? try await bus.connectionClosed(user) : false } else { lastHere }
                if lastAnywhere { try await PresenceAnnouncer(store: store, hub: hub).announceOffline(user) }
            }
        }
    }

    /// How long the close of a connection waits for each step that needs the database.
    static let closeStepLimit: Duration = .seconds(3)

    /// How long signing in waits for each step that needs the database (ConnectionLifecycle rule 6).
    var signInLimit: Duration { .milliseconds(Int64(configuration.signInTimeoutSeconds * 1000)) }
}

/// A valid `hello`: the session it signed in with and where the stream resumes.
struct Hello {
    var session: SessionInfo
    var tokenHash: String
    var after: Int64?
}

/// Whether this connection was counted by the cluster bus, so its close must be counted too. A
/// sign-in let go before its count landed races with the close: whichever comes second sees the
/// other, so a count is taken back exactly once.
final class CountedAnywhere: Sendable {
    private let state = Mutex<(counted: Bool, closed: Bool)>((false, false))

    /// The count landed; false when the connection had already closed (the caller takes it back).
    func set() -> Bool {
        state.withLock { state in
            state.counted = true
            return !state.closed
        }
    }

    /// The connection closes; true when its count had landed (the close takes it back).
    func close() -> Bool {
        state.withLock { state in
            state.closed = true
            return state.counted
        }
    }
}
