import Foundation
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket
import ParleyCore
import ParleyStore

/// One WebSocket connection from `hello` to close.
///
/// Resume rules (guarantee 5):
/// 1. The connection is registered with the hub *before* the replay is read, so an event committed
///    meanwhile is either in the replay, or queued live, or both — never neither.
/// 2. The writer remembers the last position it wrote and skips anything at or below it: nothing twice.
/// 3. A live event beyond the next position means something was missed (publishing raced); the
///    writer fetches the gap from the store first: nothing lost, always in order.
/// 4. A position the store no longer has (pruned, or from another database) gets `resync` with the
///    head; the client reloads a snapshot and the stream goes on from the head.
/// 5. The connection a message was sent on gets its `sent` ack *instead of* the message's event in
///    the sender's stream: the ack carries the position and is written when the cursor reaches it
///    (after fetching anything before it), so positions still arrive one by one. If the event was
///    already written (a catch-up fetched it first), the ack goes without a position.
struct WebSocketSession: Sendable {
    let store: any ParleyStore
    let hub: ConnectionHub
    let messenger: Messenger
    let typingLimiter: RateLimiter
    let configuration: ServerConfiguration
    static let replayPage = 500

    /// - Parameter abort: drops the TCP connection at once (for a client that stopped reading).
    func run(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, abort: @escaping @Sendable () -> Void = {}, logger: Logger
    ) async throws {
        var messages = inbound.messages(maxSize: ServerLimits.maxBodyBytes).makeAsyncIterator()
        let timeout = configuration.helloTimeoutSeconds
        let watchdog = Task {
            try await Task.sleep(for: .milliseconds(Int64(timeout * 1000)))
            try await outbound.close(.policyViolation, reason: "hello expected")
        }
        let hello = try await readHello(&messages, outbound)
        watchdog.cancel()
        guard let hello else { return }
        let user = hello.session.user, after = hello.after

        let connection = ClientConnection(
            userId: user, tokenHash: hello.tokenHash, expiresAt: hello.session.expiresAt, queueLimit: configuration.connectionQueueLimit,
            abort: abort)
        guard let first = hub.attach(connection) else {
            try await outbound.close(.goingAway, reason: "server shutting down")
            return
        }
        let logger = {
            var logger = logger
            logger[metadataKey: "user"] = "\(user)"
            return logger
        }()
        var failure: (any Error)?
        var counted = false
        do {
            let head = try await store.streamHead(of: user)
            try await outbound.writeTextMessage(WireCoding.encode(.welcome(userId: user, head: head)))
            let presence = PresenceAnnouncer(store: store, hub: hub)
            // In a cluster, "first" means first anywhere, which only the bus knows.
            let firstAnywhere = if let bus = hub.bus { try await bus.connectionOpened(user) } else { first }
            counted = true
            let contacts = try await store.contacts(of: user)  // read once for both
            if firstAnywhere { presence.announceOnline(user, to: contacts) }
            try await presence.sendSnapshot(of: contacts, to: connection)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    await self.writeLoop(connection, outbound, resumeAfter: after, head: head, logger: logger)
                }
                try await readLoop(&messages, connection, logger: logger)
                group.cancelAll()
            }
        } catch {
            // Cleaned up below, then rethrown so the socket closes with the code the error carries
            // (e.g. 1007 for invalid UTF-8) instead of a normal close.
            failure = error
            logger.debug("WebSocket session ended with error", metadata: ["error": "\(String(reflecting: error))"])
        }
        connection.finish()
        let lastHere = hub.detach(connection)
        let lastAnywhere = if let bus = hub.bus { counted ? (try? await bus.connectionClosed(user)) ?? false : false } else { lastHere }
        if lastAnywhere {
            try? await PresenceAnnouncer(store: store, hub: hub).announceOffline(user)
        }
        if let failure { throw failure }
    }

    /// Reads the first frame, which must be a valid `hello`; answers and closes otherwise.
    private func readHello(
        _ messages: inout WebSocketInboundMessageStream.AsyncIterator, _ outbound: WebSocketOutboundWriter
    ) async throws -> Hello? {
        guard let message = try await messages.next() else { return nil }
        let bytes = Self.bytes(of: message)
        let refused: ParleyError
        switch WireCoding.decodeFrame(bytes) {
        case .success(.hello(let token, let after)):
            if SessionTokens.isWellFormed(token), case let hash = SessionTokens.hash(token),
                let session = try await store.session(tokenHash: hash, now: .now())
            {
                return Hello(session: session, tokenHash: hash, after: after)
            }
            refused = ParleyError(.unauthorized, "The token is invalid, expired or revoked.")
        case .success:
            refused = ParleyError(.notAuthenticated, "The first frame must be 'hello' with a token.")
        case .failure(let error):
            refused = error
        }
        try await outbound.writeTextMessage(
            WireCoding.encode(.error(ref: WireCoding.ref(in: bytes), clientId: nil, code: refused.code, message: refused.message)))
        try await outbound.close(.policyViolation, reason: refused.code.rawValue)
        return nil
    }

    private func readLoop(
        _ messages: inout WebSocketInboundMessageStream.AsyncIterator, _ connection: ClientConnection, logger: Logger
    ) async throws {
        let handler = FrameHandler(
            store: store, hub: hub, messenger: messenger, typingLimiter: typingLimiter, connection: connection, logger: logger)
        let pipeline = FramePipeline(answer: handler.answer)
        do {
            while let message = try await messages.next() {
                // A revoked, expired, overflowed or shutting-down connection is closing: nothing it
                // sends counts any more (a send not answered is retried by the client after reconnecting).
                guard connection.beginFrame() else { continue }
                let bytes = Self.bytes(of: message)
                switch WireCoding.decodeFrame(bytes) {
                case .success(let frame):
                    await pipeline.submit(.frame(frame))
                case .failure(let error):
                    await pipeline.submit(.undecodable(ref: WireCoding.ref(in: bytes), error))
                }
            }
        } catch {
            await pipeline.drain()
            throw error
        }
        // Frames read before the close are still answered (their sends committed) before the session ends.
        await pipeline.drain()
    }

    /// The only writer of the socket after `welcome`: replay, then queued frames and live events.
    private func writeLoop(
        _ connection: ClientConnection, _ outbound: WebSocketOutboundWriter, resumeAfter: Int64?, head: Int64, logger: Logger
    ) async {
        var cursor = StreamCursor(position: head)
        let encoder = WireFormat.encoder()
        let socket = SocketWriter(outbound: outbound, connection: connection)
        func write(_ frame: ServerFrame) async throws {
            try await socket.text(String(decoding: try encoder.encode(frame), as: UTF8.self))
        }
        do {
            if let after = resumeAfter {
                cursor.position = after
                if try await !catchUp(&cursor, to: nil, socket, user: connection.userId) {
                    try await write(.resync(position: cursor.position))
                }
            }
            try await write(.synced(position: cursor.position))
            for await item in connection.outbound {
                defer { connection.itemWritten() }
                if connection.isEnding, connection.endReason != .shutdown { break }
                switch item {
                case .frame(let frame):
                    try await write(frame)
                case .sent(let ref, let message, let duplicate, var position):
                    if let target = position {
                        if target > cursor.position + 1,
                            try await !catchUp(&cursor, to: target - 1, socket, user: connection.userId)
                        {
                            try await write(.resync(position: cursor.position))
                        }
                        if target != cursor.position + 1 { position = nil }
                    }
                    try await socket.text(MessageFrameJSON.sent(ref: ref, message: message, duplicate: duplicate, position: position))
                    if let position { cursor.position = position }
                case .catchUp(let limit):
                    if limit.map({ $0 > cursor.position }) ?? true,
                        try await !catchUp(&cursor, to: limit, socket, user: connection.userId)
                    {
                        try await write(.resync(position: cursor.position))
                    }
                case .events(let events):
                    for event in events where event.position > cursor.position {
                        if event.position > cursor.position + 1,
                            try await !catchUp(&cursor, to: event.position - 1, socket, user: connection.userId)
                        {
                            try await write(.resync(position: cursor.position))
                        }
                        if event.position == cursor.position + 1 {
                            try await socket.text(event.text)
                            cursor.position = event.position
                        }
                    }
                }
            }
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
        } catch {
            logger.debug("WebSocket writer stopped", metadata: ["error": "\(error)"])
            // Cancelled means the reader ended the session and the handler closes the socket with the
            // right code; closing here too would claim the close without sending it.
            if !Task.isCancelled { try? await socket.close(.unexpectedServerError, reason: "internal error") }
        }
    }

    /// Writes stored events after the cursor up to `limit` (or the head). Returns false when the
    /// position is too old to replay, leaving the cursor at the head.
    private func catchUp(_ cursor: inout StreamCursor, to limit: Int64?, _ socket: SocketWriter, user: UserID) async throws -> Bool {
        while limit.map({ cursor.position < $0 }) ?? true {
            switch try await store.events(of: user, after: cursor.position, limit: Self.replayPage) {
            case .tooOld(let head):
                cursor.position = head
                return false
            case .events(let events, _):
                var encoder = EventFrameEncoder()
                for event in events where limit.map({ event.position <= $0 }) ?? true {
                    try await socket.text(encoder.encode(event).text)
                    cursor.position = event.position
                }
                if events.count < Self.replayPage { return true }
            }
        }
        return true
    }

    static func bytes(of message: WebSocketMessage) -> [UInt8] {
        switch message {
        case .text(let text): Array(text.utf8)
        case .binary(let buffer): Array(buffer.readableBytesView)
        }
    }
}

/// Writes to the socket, marking each write so the hub can spot one that never completes
/// (``ClientConnection`` rule 2).
struct SocketWriter {
    let outbound: WebSocketOutboundWriter
    let connection: ClientConnection

    func text(_ text: String) async throws {
        try await marked { try await outbound.writeTextMessage(text) }
    }

    func close(_ code: WebSocketErrorCode, reason: String) async throws {
        try await marked { try await outbound.close(code, reason: reason) }
    }

    private func marked(_ write: () async throws -> Void) async throws {
        connection.writeStarted(at: MonotonicClock.milliseconds)
        defer { connection.writeFinished() }
        try await write()
    }
}

/// A valid `hello`: the session it signed in with and where the stream resumes.
struct Hello {
    var session: SessionInfo
    var tokenHash: String
    var after: Int64?
}

/// The last stream position written to a connection.
struct StreamCursor {
    var position: Int64
}
