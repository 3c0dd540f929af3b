import Logging
import NIOWebSocket
import ParleyCore
import ParleyStore
import Synchronization

/// The only writer of a connection's socket once it is signed in: `welcome`, the replay, then queued frames and live
/// events, under the resume rules of ``WebSocketSession``.
///
/// It writes in runs, started whenever something is queued and ended when the queue is empty
/// (``ClientConnection`` rule 6); what it must remember between runs (the stream cursor) lives here.
/// Rules:
/// 1. One run at a time: the connection starts a run only when none is under way, so the state
///    below is touched by one run at a time, on whichever thread that run is.
/// 2. A run writes on the socket's event loop, without a task, whatever needs nothing from the
///    store: frames, acks and events that continue the cursor. Most runs are only that, so a
///    message reaches the socket in one hop from the thread that published it.
/// 3. The first item that needs the store (a gap to fetch, a catch-up from another node), and an
///    ended queue, hand the rest of the run's items to a task; once it has written them, the run
///    goes on on the event loop. The first run, which replays, is a task too.
/// 4. A run takes more items only once its last write is on the socket: a client that stops reading
///    holds one batch in flight, and its queue fills (rule 1 of ``ClientConnection``).
final class ConnectionWriter: @unchecked Sendable {
    private let connection: ClientConnection
    private let socket: SocketWriter
    private let store: any ParleyStore
    private let hub: ConnectionHub
    private let logger: Logger
    private var cursor: StreamCursor
    private let resumeAfter: Int64?
    private lazy var encoder = WireFormat.encoder()
    private let runs = Mutex(Runs())

    private struct Runs {
        /// The task run under way; a finished one lets go of its task (an idle connection holds none).
        var current: Task<Void, Never>?
        var started = 0
        var stopped = false
    }

    init(
        connection: ClientConnection, socket: SocketWriter, store: any ParleyStore, hub: ConnectionHub,
        resumeAfter: Int64?, head: Int64, logger: Logger
    ) {
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
        connection.beginWriting { [weak self] in
            guard let self, !self.isStopped else { return }
            self.socket.eventLoop.execute { self.runInPlace() }
        }
        startTaskRun(replaying: true, [], ended: false)
    }

    /// The session is ending: no run starts any more, and a task run under way is cancelled and
    /// awaited (the session closes the socket itself, with the code its end calls for).
    func stop() async {
        connection.stopWriting()
        let current = runs.withLock { runs in
            runs.stopped = true
            return runs.current
        }
        current?.cancel()
        await current?.value
    }

    private var isStopped: Bool { runs.withLock { $0.stopped } }

    /// Rule 2, on the event loop: writes the queued items in place until one needs the store.
    private func runInPlace() {
        guard !isStopped else { return }
        let (taken, ended) = connection.takeQueued()
        if taken.isEmpty, !ended { return }  // the run ends; the next item starts another
        let items = ClientConnection.Outbound.inPositionOrder(taken)
        if ended { return startTaskRun(items[...], ended: true) }
        do {
            for index in items.indices {
                if connection.isEnding, connection.endReason != .shutdown { break }
                guard case .written = try writeInPlace(items[index]) else {
                    return startTaskRun(items[index...], ended: false)  // rule 3
                }
                connection.itemWritten()
            }
        } catch {
            return failed(error)
        }
        socket.flushInPlace { result in
            switch result {
            case .success: self.socket.eventLoop.execute { self.runInPlace() }  // rule 4
            case .failure(let error): self.failed(error)
            }
        }
    }

    private func startTaskRun(replaying: Bool = false, _ items: ArraySlice<ClientConnection.Outbound>, ended: Bool) {
        runs.withLock { runs in
            guard !runs.stopped else { return }
            runs.started += 1
            let number = runs.started
            runs.current = Task {
                await self.taskRun(replaying: replaying, items, ended: ended)
                self.runs.withLock { runs in if runs.started == number { runs.current = nil } }
            }
        }
    }

    /// Rule 3: the replay or the items that need the store, then back to the event loop.
    private func taskRun(replaying: Bool, _ items: ArraySlice<ClientConnection.Outbound>, ended: Bool) async {
        do {
            if replaying { try await replay() }
            for item in items {
                if connection.isEnding, connection.endReason != .shutdown { break }
                try await write(item)
                connection.itemWritten()
            }
            try await socket.flush()
            if ended { return try await close() }
            socket.eventLoop.execute { self.runInPlace() }
        } catch {
            failed(error)
        }
    }

    /// A write failed (the socket closed, or a frame could not be encoded): no run starts any more.
    private func failed(_ error: any Error) {
        logger.debug("WebSocket writer stopped", metadata: ["error": "\(error)"])
        connection.stopWriting()
        // Stopped means the socket closed and the session is ending: nothing left to close.
        guard !isStopped else { return }
        Task { try? await socket.close(.unexpectedServerError, reason: "internal error") }
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

    /// What ``writeInPlace(_:)`` found.
    private enum InPlace {
        case written
        /// Positions after the cursor up to this one are missing: fetch them first.
        case gap(upTo: Int64)
        /// A catch-up from the store (another node committed), to this position or the head.
        case catchUp(Int64?)
    }

    /// Gathers the item's frames if nothing is missing before them (resume rules 2, 3 and 5);
    /// otherwise writes nothing and says what the store must give first. With `fetched`, the store
    /// has just been asked for the gap: whatever it still lacks is not waited for (an ack goes
    /// without a position, an event that does not continue the cursor is skipped).
    private func writeInPlace(_ item: ClientConnection.Outbound, fetched: Bool = false) throws -> InPlace {
        switch item {
        case .frame(let frame):
            socket.append(String(decoding: try encoder.encode(frame), as: UTF8.self))
        case .sent(let ref, let message, let duplicate, var position):
            if let target = position {
                if target > cursor.position + 1, !fetched { return .gap(upTo: target - 1) }
                if target != cursor.position + 1 { position = nil }
            }
            socket.append(MessageFrameJSON.sent(ref: ref, message: message, duplicate: duplicate, position: position))
            if let position { cursor.position = position }
        case .catchUp(let limit):
            if limit.map({ $0 > cursor.position }) ?? true { return .catchUp(limit) }
        case .events(let events):
            var next = cursor.position
            for event in events where event.position > next && !fetched {
                if event.position > next + 1 { return .gap(upTo: event.position - 1) }
                next = event.position
            }
            for event in events where event.position == cursor.position + 1 {
                socket.append(event.text)
                cursor.position = event.position
            }
        }
        return .written
    }

    /// Writes the item, fetching from the store whatever is missing before it.
    private func write(_ item: ClientConnection.Outbound) async throws {
        var fetched = false
        while true {
            switch try writeInPlace(item, fetched: fetched) {
            case .written:
                return
            case .gap(let limit):
                if try await !catchUp(to: limit) { try await write(.resync(position: cursor.position)) }
                fetched = cursor.position < limit  // the store lacks part of the gap: do not ask again
            case .catchUp(let limit):
                if try await !catchUp(to: limit) { try await write(.resync(position: cursor.position)) }
                return
            }
        }
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
            switch try await store.events(of: connection.userId, after: cursor.position, limit: WebSocketSession.replayPage) {
            case .tooOld(let head):
                cursor.position = head
                return false
            case .events(let events, _):
                var encoder = EventFrameEncoder()
                for event in events where limit.map({ event.position <= $0 }) ?? true {
                    try await socket.text(encoder.encode(event).text)
                    cursor.position = event.position
                }
                try await socket.flush()
                if events.count < WebSocketSession.replayPage { return true }
            }
        }
        return true
    }
}

/// The last stream position written to a connection.
struct StreamCursor {
    var position: Int64
}
