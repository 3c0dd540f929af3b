import NIOCore
import ParleyCore
import Synchronization

/// One authenticated WebSocket connection, as the hub sees it: a user, the session it signed in
/// with, and a bounded outbound queue.
///
/// Everything written to the socket goes through ``enqueue(_:)`` so that one outbound stream writes in
/// order. The connection ends for one of the reasons in ``EndReason``. Rules:
/// 1. A client that reads too slowly ends as a slow consumer (close 1008; it resumes later): when
///    the queue is full, or when the outbound stream has not caught up with the queue for the lag limit (a
///    reader that keeps reading, only slower than its messages come). A slow reader costs a
///    reconnect, never unbounded memory or a connection held forever.
/// 2. A socket write that has not completed within the write timeout (the client stopped reading,
///    its buffers are full) is aborted: the TCP connection is dropped without a close handshake,
///    which could not be written either. The outbound stream marks each write (``writeStarted()``) so the
///    hub can tell.
/// 3. A revoked or expired session ends with an `unauthorized` error and close 1008; frames that
///    arrive after that are not handled.
/// 4. Graceful shutdown first stops handling new frames, waits for the frames being handled
///    (``framesInFlight``) so their answers are queued, then ends the queue: the outbound stream flushes
///    everything and closes 1001.
/// 5. A client that sends no frame at all (not even `ping`) for the idle limit is closed (1000,
///    "idle"): a dead peer holds no memory for long. Clients ping every ~20 s when idle.
/// 6. No task waits on an empty queue: the outbound stream is started when something is queued (or the
///    queue ends) and stops when it has written everything. A task keeps the memory of its deepest
///    stack until it ends, and socket writes and store reads are deep, so an idle connection holding
///    an outbound stream run cost ~13 KB more.
/// 7. A connection that cannot make progress is dropped as in rule 2: a frame whose answer has
///    waited past the answer timeout (its database call does not come back), or a connection the
///    server ended that is still open past it (its outbound stream waits on the store). Its reads
///    may be paused meanwhile (a full inbound queue), so the client's own close would never be
///    seen, and it would stay counted, its user online, for ever. The client connects again and
///    sends again; every write is idempotent.
/// 8. A live event that finds the connection idle (no outbound run under way, nothing queued) is
///    written on the connection's event loop at once, without a task (``deliver(_:)``): the
///    connection grants that write as it grants a run, one writer at a time. An event that cannot
///    go that way (it follows a gap, the socket is not taking more) is queued instead, and a run
///    starts for it once the live write lets go.
final class ClientConnection: Sendable {
    enum Outbound: Sendable {
        case frame(ServerFrame)
        /// Stream events for this user, already encoded, in position order (possibly with gaps or
        /// repeats: the outbound stream sorts it out).
        case events([EncodedEvent])
        /// Events were committed elsewhere (another node): fetch them from the store up to this
        /// position, or to the head when `nil`.
        case catchUp(Int64?)
        /// The answer to this connection's own send, whose event at `step` in the sender's
        /// stream was not queued here: the outbound stream sends the ack in its place (see ``RealtimeGateway``).
        case sent(ref: String?, message: Message, duplicate: Bool, step: StreamStep?)
    }

    /// Why the server ended a connection; the first one set stays.
    enum EndReason: Int, Sendable {
        case none = 0
        case slowConsumer
        case unauthorized
        case shutdown
        case idle
    }

    let userId: UserID
    /// SHA-256 of the token the connection signed in with, to end it when that session is revoked.
    let tokenHash: String
    /// When the session expires; the hub ends the connection then.
    let expiresAt: Timestamp
    let id: Int
    /// The event loop of the connection's socket, where ``deliver(_:)`` must be called; nil in unit
    /// tests without a socket.
    let eventLoop: (any EventLoop)?
    private let queueLimit: Int
    private let queue = Mutex(OutboundQueue())
    private let reason = Atomic<Int>(EndReason.none.rawValue)
    private let inFlight = Atomic<Int>(0)
    /// Monotonic milliseconds when the current socket write began; 0 when no write is under way.
    private let writeBegan = Atomic<Int64>(0)
    /// Items queued and not yet written, and since when (monotonic ms; 0 = caught up).
    private let pending = Atomic<Int>(0)
    /// Monotonic ms of the last frame the client sent.
    private let lastInbound = Atomic<Int64>(MonotonicClock.milliseconds)
    private let behindSince = Atomic<Int64>(0)
    /// Monotonic ms when the answer being worked on began; 0 when none is (rule 7).
    private let answerBegan = Atomic<Int64>(0)
    /// Monotonic ms when the server ended the connection for a reason other than shutdown; 0 before (rule 7).
    private let endedAt = Atomic<Int64>(0)
    private let abortSocket: @Sendable () -> Void
    private static let nextID = Atomic<Int>(0)

    init(
        userId: UserID, tokenHash: String = "", expiresAt: Timestamp = Timestamp(milliseconds: .max), queueLimit: Int,
        eventLoop: (any EventLoop)? = nil, abort: @escaping @Sendable () -> Void = {}
    ) {
        self.userId = userId
        self.eventLoop = eventLoop
        self.tokenHash = tokenHash
        self.expiresAt = expiresAt
        self.abortSocket = abort
        self.id = Self.nextID.add(1, ordering: .relaxed).newValue
        self.queueLimit = queueLimit
    }

    var endReason: EndReason { EndReason(rawValue: reason.load(ordering: .sequentiallyConsistent)) ?? .none }
    var overflowed: Bool { endReason == .slowConsumer }
    /// True once the server decided to end the connection: inbound frames are no longer handled.
    var isEnding: Bool { endReason != .none }

    func enqueue(_ item: Outbound) {
        let (outcome, writer) = queue.withLock { queue in queue.append(item, limit: queueLimit) }
        switch outcome {
        case .ended: return
        case .full:
            end(.slowConsumer)
            return
        case .queued:
            if pending.add(1, ordering: .relaxed).newValue == 1 { behindSince.store(MonotonicClock.milliseconds, ordering: .relaxed) }
        }
        writer?.startRun()
    }

    /// Rule 6: the writer's run is started whenever one is needed and none runs; the caller runs
    /// one now (the first run also replays), so nothing is started here. Rule 8: the writer writes
    /// a live event at once while granted. Held weakly: the writer holds the connection.
    func beginWriting(_ writer: some OutboundWriter) {
        queue.withLock { queue in
            queue.writer = writer
            queue.writing = true
        }
    }

    /// No outbound run is started from now on (the session is ending).
    func stopWriting() {
        queue.withLock { $0.writer = nil }
    }

    /// Hands over a live event (rule 8). Call on ``eventLoop``.
    func deliver(_ event: EncodedEvent) {
        eventLoop?.assertInEventLoop()
        guard let writer = queue.withLock({ $0.grantLive() }) else {
            enqueue(.events([event]))
            return
        }
        // Queued while granted, an item starts no run: the release below starts one.
        if !writer.writeLive(event) { enqueue(.events([event])) }
        queue.withLock { $0.releaseLive() }?.startRun()
    }

    /// For the outbound stream: what is queued, in order, and whether the queue has ended. Empty and not
    /// ended means the outbound stream must stop now; the next item starts a new one.
    func takeQueued() -> (items: [Outbound], ended: Bool) {
        queue.withLock { queue in queue.take() }
    }

    /// Called by the outbound stream after it has written (or skipped) one queued item.
    func itemWritten() {
        if pending.subtract(1, ordering: .relaxed).newValue <= 0 { behindSince.store(0, ordering: .relaxed) }
    }

    /// Whether the outbound stream has been behind its queue since before `deadline` (monotonic ms).
    func isLagging(since deadline: Int64) -> Bool {
        let since = behindSince.load(ordering: .relaxed)
        if since == 0 {
            // A caught-up mark can race with a new item; re-arm so the next check sees it.
            if pending.load(ordering: .relaxed) > 0 { behindSince.store(MonotonicClock.milliseconds, ordering: .relaxed) }
            return false
        }
        return since < deadline
    }

    func send(_ frame: ServerFrame) { enqueue(.frame(frame)) }

    /// Ends the connection for `why` (rule 1, 3 or 4). For a shutdown the queue stays open until
    /// ``finish()``, so answers to frames in flight still go out.
    func end(_ why: EndReason) {
        guard reason.compareExchange(expected: EndReason.none.rawValue, desired: why.rawValue, ordering: .sequentiallyConsistent).exchanged
        else { return }
        guard why != .shutdown else { return }
        endedAt.store(max(1, MonotonicClock.milliseconds), ordering: .relaxed)
        finish()
    }

    /// Ends the queue; the outbound stream writes what is queued and closes.
    func finish() {
        queue.withLock { queue in queue.end() }?.startRun()
    }

    // MARK: Frames in flight (rule 4)

    /// Called by the reader before it handles a frame; false means the frame must be dropped.
    /// Counting first and checking after pairs with ``end(_:)`` then ``framesInFlight``: a frame is
    /// either counted before the shutdown looks, or sees the shutdown and is not handled.
    func beginFrame() -> Bool {
        lastInbound.store(MonotonicClock.milliseconds, ordering: .relaxed)
        inFlight.add(1, ordering: .sequentiallyConsistent)
        guard !isEnding else {
            inFlight.subtract(1, ordering: .sequentiallyConsistent)
            return false
        }
        return true
    }

    func endFrame() { inFlight.subtract(1, ordering: .sequentiallyConsistent) }

    var framesInFlight: Int { inFlight.load(ordering: .sequentiallyConsistent) }

    // MARK: Stalled writes (rule 2)

    func writeStarted(at milliseconds: Int64) { writeBegan.store(max(1, milliseconds), ordering: .relaxed) }
    func writeFinished() { writeBegan.store(0, ordering: .relaxed) }

    /// Whether a write has been under way since before `deadline` (monotonic milliseconds).
    func isWriteStalled(since deadline: Int64) -> Bool {
        let began = writeBegan.load(ordering: .relaxed)
        return began != 0 && began < deadline
    }

    // MARK: Stuck connections (rule 7)

    func answerStarted() { answerBegan.store(max(1, MonotonicClock.milliseconds), ordering: .relaxed) }
    func answerFinished() { answerBegan.store(0, ordering: .relaxed) }

    /// Whether an answer has been under way, or the connection ended and still open, since before
    /// `deadline` (monotonic milliseconds).
    func isStuck(since deadline: Int64) -> Bool {
        let began = answerBegan.load(ordering: .relaxed), ended = endedAt.load(ordering: .relaxed)
        return (began != 0 && began < deadline) || (ended != 0 && ended < deadline)
    }

    /// Whether the client has sent nothing since before `deadline` (rule 5).
    func isIdle(since deadline: Int64) -> Bool { lastInbound.load(ordering: .relaxed) < deadline }

    /// Drops the TCP connection at once (no close handshake): the blocked write fails, the reader ends.
    func abort() { abortSocket() }
}

/// What writes a connection's socket (its ``OutboundStream``), as the connection sees it.
protocol OutboundWriter: AnyObject, Sendable {
    /// Starts a run (rule 6): the connection asks only when none is under way.
    func startRun()
    /// Writes a live event at once, while the connection grants it (rule 8); false when it must
    /// be queued for a run instead.
    func writeLive(_ event: EncodedEvent) -> Bool
}

/// A connection's queue of outbound items and whether an outbound run runs (``ClientConnection`` rule 6).
/// Empty arrays hold no memory, which matters at tens of thousands of idle connections.
private struct OutboundQueue {
    enum Outcome { case queued, full, ended }

    var items: [ClientConnection.Outbound] = []
    var ended = false
    /// True while a writer holds the socket: an outbound run, or a live write (rule 8).
    var writing = false
    /// The outbound stream, once writing began; nil when it stopped (or is gone).
    weak var writer: (any OutboundWriter)?

    /// Appends the item; returns the outbound stream to start, if one is needed.
    mutating func append(_ item: ClientConnection.Outbound, limit: Int) -> (Outcome, (any OutboundWriter)?) {
        guard !ended else { return (.ended, nil) }
        guard items.count < limit else { return (.full, nil) }
        items.append(item)
        return (.queued, wakeOutbound())
    }

    mutating func end() -> (any OutboundWriter)? {
        guard !ended else { return nil }
        ended = true
        return wakeOutbound()  // the outbound stream writes what is left, then closes
    }

    mutating func take() -> (items: [ClientConnection.Outbound], ended: Bool) {
        defer { items = [] }
        if items.isEmpty, !ended { writing = false }
        return (items, ended)
    }

    /// The live writer, granted when the connection is idle: writing began (the replay is done),
    /// no writer holds the socket, nothing is queued and the queue is open.
    mutating func grantLive() -> (any OutboundWriter)? {
        guard !writing, items.isEmpty, !ended, let writer else { return nil }
        writing = true
        return writer
    }

    /// The live write is done: the run to start for what was queued meanwhile (or for the end), if any.
    mutating func releaseLive() -> (any OutboundWriter)? {
        guard let writer else { return nil }  // stopped: nothing more is written
        guard items.isEmpty, !ended else { return writer }
        writing = false
        return nil
    }

    private mutating func wakeOutbound() -> (any OutboundWriter)? {
        guard !writing, let writer else { return nil }
        writing = true
        return writer
    }
}
