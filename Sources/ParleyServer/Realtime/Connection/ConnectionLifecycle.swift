import Logging
import NIOCore
import NIOWebSocket
import ParleyCore
import ParleyStore

/// One WebSocket connection's state from the upgrade to close, driven by its
/// ``WebSocketChannelHandler`` on the channel's event loop; what has to wait (the store, the socket)
/// runs in tasks that end, so an idle connection holds no task. The tasks run on the same event loop
/// (``EventLoopTaskExecutor``).
///
/// Rules:
/// 1. The first message must arrive within the hello timeout; otherwise close 1008 "hello expected".
/// 2. Messages that arrive while `hello` is checked are kept and handled in order once the
///    connection is signed in; from the first of them on, reads pause until then, so a client that
///    floods before it is signed in is not buffered. A client that waits for `welcome`, as clients
///    do, is never paused (a pause and resume cost two system calls per connect).
/// 3. A signed-in connection's messages go to its ``InboundFrameQueue``; while the inbound queue is full,
///    reads pause, and its room resumes them.
/// 4. When the socket closes, the connection leaves the hub at once, and frames already read are
///    still answered (their sends commit) (``RealtimeGateway/finish(_:inbound:outbound:counted:)``).
/// 5. Graceful shutdown: a signed-in connection ends after its answers, 1001 (``ClientConnection``
///    rule 4); one not signed in yet is closed 1001 at once.
/// 6. Signing in waits on the database at most ``ServerConfiguration/signInTimeoutSeconds`` per step; past it the
///    connection is let go (detached, closed 1011) and the client connects again. What a late answer
///    would still do is taken back (``CountedAnywhere``).
final class ConnectionLifecycle: @unchecked Sendable {  // `phase` is only touched on the channel's event loop
    private enum Phase {
        case awaitingHello(Scheduled<Void>?)
        case signingIn(waiting: [[UInt8]])
        case open(Open)
        case ended
    }

    /// A signed-in connection's parts.
    private struct Open: Sendable {
        let connection: ClientConnection
        let inbound: InboundFrameQueue
        let outbound: OutboundStream
        let counted: CountedAnywhere
    }

    private let shared: RealtimeGateway
    private let channel: any Channel
    /// Where this connection's tasks run: its event loop (``EventLoopTaskExecutor``).
    private let executor: EventLoopTaskExecutor
    private let logger: Logger
    private var phase = Phase.awaitingHello(nil)
    /// The socket handler, which writes whole frames (set when it is added, before any frame is read).
    private var frames: WebSocketChannelHandler?

    init(shared: RealtimeGateway, channel: any Channel, logger: Logger) {
        self.shared = shared
        self.channel = channel
        self.executor = EventLoopTaskExecutor(channel.eventLoop)
        self.logger = logger
    }

    /// The socket handler is in place: the hello timeout starts (rule 1).
    func opened(frames: WebSocketChannelHandler) {
        self.frames = frames
        let timeout = TimeAmount.milliseconds(Int64(shared.configuration.helloTimeoutSeconds * 1000))
        phase = .awaitingHello(
            channel.eventLoop.scheduleTask(in: timeout) {
                guard case .awaitingHello = self.phase else { return }
                self.close(.policyViolation, reason: "hello expected")
            })
    }

    /// A whole text or binary message from the client.
    func received(_ bytes: [UInt8]) {
        switch phase {
        case .awaitingHello(let timer):
            timer?.cancel()
            phase = .signingIn(waiting: [])
            Task(executorPreference: executor) { await self.signIn(bytes) }
        case .signingIn(var waiting):
            phase = .ended  // not to copy `waiting` on append
            waiting.append(bytes)
            phase = .signingIn(waiting: waiting)
            setReading(false)
        case .open(let open):
            if !handle(bytes, open) { setReading(false) }
        case .ended:
            return
        }
    }

    /// The socket closed (rule 4).
    func ended() {
        frames = nil  // the handler holds this lifecycle: no cycle once the socket is gone
        switch phase {
        case .awaitingHello(let timer): timer?.cancel()
        case .open(let open): Task(executorPreference: executor) { await self.finish(open) }
        case .signingIn, .ended: break  // `signedIn` finishes a connection that closed while signing in
        }
        phase = .ended
    }

    /// The server is shutting down (rule 5).
    func quiesce() {
        switch phase {
        case .awaitingHello, .signingIn:
            close(.goingAway, reason: "server shutting down")
        case .open(let open):
            open.connection.end(.shutdown)
            open.connection.finish()
        case .ended:
            break
        }
    }

    private func signIn(_ first: [UInt8]) async {
        guard let frames else { return }
        let socket = BatchedSocketOutput(channel: channel, frames: frames, connection: nil)
        do {
            guard let checked = await boundedWait(shared.signInLimit, { [shared] in try await shared.authenticate(first) }) else {
                throw SignInTimedOut()
            }
            switch try checked.get() {
            case .refused(let frame, let code):
                try await socket.text(frame)
                try await socket.close(.policyViolation, reason: code.rawValue)
            case .hello(let hello):
                try await open(hello, socket)
            }
        } catch {
            logger.debug("WebSocket sign-in failed", metadata: ["error": "\(String(reflecting: error))"])
            try? await socket.close(.unexpectedServerError, reason: "internal error")
        }
    }

    private func open(_ hello: Hello, _ socket: BatchedSocketOutput) async throws {
        let user = hello.session.user
        var logger = logger
        logger[metadataKey: "user"] = "\(user)"
        let channel = channel
        let connection = ClientConnection(
            userId: user, tokenHash: hello.tokenHash, expiresAt: hello.session.expiresAt,
            queueLimit: shared.configuration.connectionQueueLimit, eventLoop: channel.eventLoop, abort: { channel.close(promise: nil) })
        guard let firstHere = shared.hub.attach(connection) else {
            try await socket.close(.goingAway, reason: "server shutting down")
            return
        }
        let handler = FrameResponder(
            store: shared.store, hub: shared.hub, messenger: shared.messenger, typingLimiter: shared.typingLimiter,
            connection: connection, logger: logger)
        let inbound = InboundFrameQueue(
            executor: executor, answer: handler.answer, room: { channel.triggerUserOutboundEvent(WebSocketChannelHandler.ReadFlow.resume, promise: nil) })
        let counted = CountedAnywhere()
        // Rule 6: bounded, or a database that never answers would keep this connection attached
        // (its user online) after its socket is gone.
        let begun = await boundedWait(shared.signInLimit) { [shared] in
            try await shared.begin(connection, firstHere: firstHere, counted: counted)
        }
        guard case .success(let head) = begun else {
            await shared.finish(connection, inbound: inbound, outbound: nil, counted: counted)
            switch begun {
            case .failure(let error): throw error
            default: throw SignInTimedOut()
            }
        }
        let outbound = OutboundStream(
            connection: connection, socket: BatchedSocketOutput(channel: channel, frames: socket.frames, connection: connection),
            store: shared.store, hub: shared.hub,
            resumeAfter: hello.after, head: head, logger: logger, executor: executor)
        let open = Open(connection: connection, inbound: inbound, outbound: outbound, counted: counted)
        channel.eventLoop.execute { self.signedIn(open) }
    }

    private func signedIn(_ open: Open) {
        guard case .signingIn(let waiting) = phase else {
            Task(executorPreference: executor) { await self.finish(open) }  // the socket closed while signing in
            return
        }
        phase = .open(open)
        open.outbound.begin()
        guard !waiting.isEmpty else { return }  // reads were not paused (rule 2)
        var room = true
        for bytes in waiting { room = handle(bytes, open) }
        if room { setReading(true) }
    }

    /// Hands one message to the inbound queue; false when it is full (rule 3).
    private func handle(_ bytes: [UInt8], _ open: Open) -> Bool {
        // A revoked, expired, overflowed or shutting-down connection is closing: nothing it sends
        // counts any more (a send not answered is retried by the client after reconnecting).
        guard open.connection.beginFrame() else { return true }
        switch WireCoding.decodeFrame(bytes) {
        case .success(let frame): return open.inbound.offer(.frame(frame))
        case .failure(let error): return open.inbound.offer(.undecodable(ref: WireCoding.ref(in: bytes), error))
        }
    }

    private func finish(_ open: Open) async {
        await shared.finish(open.connection, inbound: open.inbound, outbound: open.outbound, counted: open.counted)
    }

    private func setReading(_ on: Bool) {
        channel.triggerUserOutboundEvent(on ? WebSocketChannelHandler.ReadFlow.resume : .pause, promise: nil)
    }

    private func close(_ code: WebSocketErrorCode, reason: String) {
        channel.writeAndFlush(BatchedSocketOutput.closeFrame(code, reason: reason, allocator: channel.allocator), promise: nil)
    }
}

/// The database did not answer a sign-in step within ``ServerConfiguration/signInTimeoutSeconds``.
struct SignInTimedOut: Error {}
