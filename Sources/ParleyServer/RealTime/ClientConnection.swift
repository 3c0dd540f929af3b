import ParleyCore
import Synchronization

/// One authenticated WebSocket connection, as the hub sees it: a user, the session it signed in
/// with, and a bounded outbound queue.
///
/// Everything written to the socket goes through ``enqueue(_:)`` so that one writer task writes in
/// order. The connection ends for one of the reasons in ``EndReason``: the queue is closed, the
/// writer flushes what is queued and closes the socket with the reason's code, and the reader stops
/// handling frames at once. A slow reader (a full queue) costs a reconnect, never unbounded memory.
final class ClientConnection: Sendable {
    enum Outbound: Sendable {
        case frame(ServerFrame)
        /// Stream events for this user, already encoded, in position order (possibly with gaps or
        /// repeats: the writer sorts it out).
        case events([EncodedEvent])
    }

    /// Why the server ended a connection, in the order they win (the first one set stays).
    enum EndReason: Int, Sendable {
        case none = 0
        /// The queue overflowed: close 1008, the client resumes later.
        case slowConsumer
        /// The session was revoked (logout, password change) or expired: `unauthorized`, close 1008.
        case unauthorized
        /// Graceful shutdown: close 1001.
        case shutdown
    }

    let userId: UserID
    /// SHA-256 of the token the connection signed in with, to end it when that session is revoked.
    let tokenHash: String
    /// When the session expires (ms since 1970); the hub ends the connection then.
    let expiresAt: Timestamp
    let id: Int
    let outbound: AsyncStream<Outbound>
    private let continuation: AsyncStream<Outbound>.Continuation
    private let reason = Atomic<Int>(EndReason.none.rawValue)
    private static let nextID = Atomic<Int>(0)

    init(userId: UserID, tokenHash: String = "", expiresAt: Timestamp = Timestamp(milliseconds: .max), queueLimit: Int) {
        self.userId = userId
        self.tokenHash = tokenHash
        self.expiresAt = expiresAt
        self.id = Self.nextID.add(1, ordering: .relaxed).newValue
        (outbound, continuation) = AsyncStream.makeStream(of: Outbound.self, bufferingPolicy: .bufferingOldest(queueLimit))
    }

    var endReason: EndReason { EndReason(rawValue: reason.load(ordering: .acquiring)) ?? .none }
    var overflowed: Bool { endReason == .slowConsumer }
    /// True once the server decided to end the connection: inbound frames are no longer handled.
    var isEnding: Bool { endReason != .none }

    func enqueue(_ item: Outbound) {
        if case .dropped = continuation.yield(item) { end(.slowConsumer) }
    }

    func send(_ frame: ServerFrame) { enqueue(.frame(frame)) }

    /// Ends the connection for `why`: the writer stops writing queued frames (except on shutdown,
    /// which flushes them) and closes the socket with the reason's code. Only the first reason counts.
    func end(_ why: EndReason) {
        guard reason.compareExchange(expected: EndReason.none.rawValue, desired: why.rawValue, ordering: .acquiringAndReleasing).exchanged
        else { return }
        continuation.finish()
    }

    /// Ends the queue without a reason (the session itself is ending).
    func finish() { continuation.finish() }
}
