import Logging
import NIOWebSocket
import ParleyCore
import ParleyStore
import Synchronization
import Foundation
import Metrics

/// The only writer of a connection's socket once it is signed in: `welcome`, the replay, then queued frames and live
/// events, under the resume rules of ``RealtimeGateway``.
///
/// It runs as a short task whenever something is queued and stops when the queue is empty
/// (``ClientConnection`` rule 6); what it must remember between runs (the stream cursor) lives here.
/// A live event that finds the connection idle is written without a task (``writeLive(_:)``,
/// ``ClientConnection`` rule 8). The connection grants one writer at a time, a run or a live write,
/// and both run on the connection's event loop, so the mutable state below is touched by one at a time.
final class OutboundStream: OutboundWriter, @unchecked Sendable {
    private let connection: ClientConnection
    private let socket: BatchedSocketOutput
    private let store: any ParleyStore
    private let hub: ConnectionHub
    private let logger: Logger
    /// Where each run's task runs: the connection's event loop.
    private let executor: any TaskExecutor
    private var cursor: StreamCursor
    private let resumeAfter: Int64?
    private var replayed = false
    private lazy var encoder = WireFormat.encoder()
    private let runs = Mutex(Runs())

    private struct Runs {
        /// The run under way; a finished run lets go of its task (an idle connection holds none).
        var current: Task<Void, Never>?
        var started = 0
        var stopped = false
    }

    init(
        connection: ClientConnection, socket: BatchedSocketOutput, store: any ParleyStore, hub: ConnectionHub,
        resumeAfter: Int64?, head: Int64, logger: Logger, executor: any TaskExecutor
    ) {
        self.executor = executor
        self.connection = connection
        self.socket = socket
        self.store = store
        self.hub = hub
        self.resumeAfter = resumeAfter
        self.cursor = StreamCursor(position: head)
        self.logger = logger
    }

    /// Starts writing: the first run writes `welcome`, replays and writes `synced`; later runs start
    /// when items are queued.
    func begin() {
        connection.beginWriting(self)
        startRun()
    }

    /// Writes a live event at once, on the event loop, while the connection grants it (no run under
    /// way, nothing queued): true when it is written, or was already (at or below the cursor).
    /// False when it must wait for a run: it follows a gap (``follows(_:)`` fetches it), or the socket is not
    /// taking more (the run waits for it), or the connection is ending.
    func writeLive(_ event: EncodedEvent) -> Bool {
        if event.position <= cursor.position { return true }
        guard event.previous == cursor.position, !connection.isEnding, socket.writeNow(event.frame) else { return false }
        cursor.position = event.position
        return true
    }

    /// The session is ending: no run starts any more, and the one under way is cancelled and awaited
    /// (the session closes the socket itself, with the code its end calls for).
    func stop() async {
        connection.stopWriting()
        let current = runs.withLock { runs in
            runs.stopped = true
            return runs.current
        }
        current?.cancel()
        await current?.value
    }

    func startRun() {
        runs.withLock { runs in
            guard !runs.stopped else { return }
            runs.started += 1
            let number = runs.started
            runs.current = Task(executorPreference: executor) {
                await self.run()
                self.runs.withLock { runs in if runs.started == number { runs.current = nil } }
            }
        }
    }

    private func run() async {
        do {
            if !replayed {
                replayed = true
                try await replay()
                try await socket.flush()  // before `takeQueued` can end this run (one run at a time)
            }
            while true {
                let (items, ended) = connection.takeQueued()
                if items.isEmpty, !ended { return }  // the next item starts a new run
                for item in ClientConnection.Outbound.inPositionOrder(items) {
                    if connection.isEnding, connection.endReason != .shutdown { break }
                    try await write(item)
                    connection.itemWritten()
                }
                try await socket.flush()
                if ended {
                    try await close()
                    return
                }
            }
        } catch {
            logger.debug("Outbound stream stopped", metadata: ["error": "\(error)"])
            connection.stopWriting()
            // Cancelled means the socket closed and the session is ending: nothing left to close.
            if !Task.isCancelled { try? await socket.close(.unexpectedServerError, reason: "internal error") }
        }
    }

    /// `welcome` with the head read when the connection began, the replay, then `synced`.
    private func replay() async throws {
        try await write(.welcome(userId: connection.userId, head: cursor.position))
        if let after = resumeAfter {
            cursor.position = after
            if try await !catchUp(to: nil) {
                try await write(.resync(position: cursor.position))
            }
        }
        try await write(.synced(position: cursor.position))
    }

    private func write(_ frame: ServerFrame) async throws {
        try await socket.text(String(decoding: try encoder.encode(frame), as: UTF8.self))
    }

    private func write(_ item: ClientConnection.Outbound) async throws {
        switch item {
        case .frame(let frame):
            try await write(frame)
        case .sent(let ref, let message, let duplicate, let step):
            var position: Int64? = nil
            if let step, try await follows(step) { position = step.position }
            try await socket.text(MessageFrameJSON.sent(ref: ref, message: message, duplicate: duplicate, position: position))
            if let position { cursor.position = position }
        case .catchUp(let limit):
            if limit.map({ $0 > cursor.position }) ?? true, try await !catchUp(to: limit) {
                try await write(.resync(position: cursor.position))
            }
        case .events(let events):
            for event in events where event.position > cursor.position {
                if try await follows(StreamStep(position: event.position, previous: event.previous)) {
                    try await socket.frame(event.frame)
                    cursor.position = event.position
                }
            }
        }
    }

    /// Whether the cursor is where `step` follows on, once anything stored between them has been
    /// written: a live event behind a gap (one queued before it, or committed on another node)
    /// waits for the store's copy of what came first. False when the step is behind the cursor
    /// (written already, say by that catch-up) or the gap could not be filled (a resync was sent).
    private func follows(_ step: StreamStep) async throws -> Bool {
        if step.previous > cursor.position, try await !catchUp(to: step.previous) {
            try await write(.resync(position: cursor.position))
        }
        return step.previous == cursor.position
    }

    /// The queue has ended: close the socket as the connection's end calls for.
    private func close() async throws {
        switch connection.endReason {
        case .slowConsumer:
            hub.metrics.slowConsumersDisconnected.increment()
            logger.notice("Disconnecting a slow reader")
            try await socket.close(.policyViolation, reason: "slow consumer: reconnect and resume")
        case .unauthorized:
            try await write(.error(ref: nil, clientId: nil, code: .unauthorized, message: "The session was revoked or has expired. Sign in again."))
            try await socket.close(.policyViolation, reason: "unauthorized")
        case .idle:
            try await socket.close(.normalClosure, reason: "idle: send a ping at least every 60 s")
        case .shutdown, .none:
            if !Task.isCancelled { try await socket.close(.goingAway, reason: "server shutting down") }
        }
    }

    /// Writes stored events after the cursor up to `limit` (or the head). Returns false when the
    /// position is too old to replay, leaving the cursor at the head.
    private func catchUp(to limit: Int64?) async throws -> Bool {
        while limit.map({ cursor.position < $0 }) ?? true {
            switch try await store.events(of: connection.userId, after: cursor.position, limit: RealtimeGateway.replayPage) {
            case .tooOld(let head):
                cursor.position = head
                return false
            case .events(let events, _):
                var encoder = EventFrameEncoder()
                for event in events where limit.map({ event.position <= $0 }) ?? true {
                    try await socket.frame(encoder.encode(event).frame)
                    cursor.position = event.position
                }
                try await socket.flush()
                if events.count < RealtimeGateway.replayPage { return true }
            }
        }
        return true
    }
}

/// The last stream position written to a connection.
struct StreamCursor {
    var position: Int64
}
