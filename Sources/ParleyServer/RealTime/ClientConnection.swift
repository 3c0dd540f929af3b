import ParleyCore
import Synchronization

/// One authenticated WebSocket connection, as the hub sees it: a user and a bounded outbound queue.
///
/// Everything written to the socket goes through ``enqueue(_:)`` so that one writer task writes in
/// order. When the queue is full the reader is too slow: the connection is marked overflowed, the
/// queue ends, and the session closes the socket; the client resumes from its last position later,
/// so a slow reader costs a reconnect, never unbounded server memory.
final class ClientConnection: Sendable {
    enum Outbound: Sendable {
        case frame(ServerFrame)
        /// Stream events for this user, already encoded, in position order (possibly with gaps or
        /// repeats: the writer sorts it out).
        case events([EncodedEvent])
    }

    let userId: UserID
    let id: Int
    let outbound: AsyncStream<Outbound>
    private let continuation: AsyncStream<Outbound>.Continuation
    private let overflowFlag = Atomic<Bool>(false)
    private static let nextID = Atomic<Int>(0)

    init(userId: UserID, queueLimit: Int) {
        self.userId = userId
        self.id = Self.nextID.add(1, ordering: .relaxed).newValue
        (outbound, continuation) = AsyncStream.makeStream(of: Outbound.self, bufferingPolicy: .bufferingOldest(queueLimit))
    }

    var overflowed: Bool { overflowFlag.load(ordering: .acquiring) }

    func enqueue(_ item: Outbound) {
        if case .dropped = continuation.yield(item) {
            overflowFlag.store(true, ordering: .releasing)
            continuation.finish()
        }
    }

    func send(_ frame: ServerFrame) { enqueue(.frame(frame)) }

    /// Ends the queue; the writer finishes what is queued and stops.
    func finish() { continuation.finish() }
}
