import Foundation
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket
import ParleyCore
import ParleyStore
import Synchronization

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
        guard let first = try await firstMessage(&messages, outbound) else { return }
        // The deep work (store reads, socket writes) runs in child tasks that end: a task keeps the
        // memory of its deepest stack for as long as it lives, and this one lives as long as the socket.
        guard let hello = try await Self.inChildTask({ try await self.authenticate(first, outbound) }) else { return }
        let user = hello.session.user

        let connection = ClientConnection(
            userId: user, tokenHash: hello.tokenHash, expiresAt: hello.session.expiresAt, queueLimit: configuration.connectionQueueLimit,
            abort: abort)
        guard let firstHere = hub.attach(connection) else {
            try await outbound.close(.goingAway, reason: "server shutting down")
            return
        }
        let logger = {
            var logger = logger
            logger[metadataKey: "user"] = "\(user)"
            return logger
        }()
        let counted = CountedAnywhere()
        var failure: (any Error)?
        var writer: ConnectionWriter?
        do {
            let head = try await Self.inChildTask { try await self.welcome(connection, outbound, firstHere: firstHere, counted: counted) }
            writer = ConnectionWriter(
                connection: connection, outbound: outbound, store: store, hub: hub, resumeAfter: hello.after, head: head, logger: logger)
            writer?.begin()
            try await readLoop(&messages, connection, logger: logger)
        } catch {
            // Cleaned up below, then rethrown so the socket closes with the code the error carries
            // (e.g. 1007 for invalid UTF-8) instead of a normal close.
            failure = error
            logger.debug("WebSocket session ended with error", metadata: ["error": "\(String(reflecting: error))"])
        }
        await writer?.stop()
        connection.finish()
        let lastHere = hub.detach(connection)
        let lastAnywhere = if let bus = hub.bus { counted.value ? (try? await bus.connectionClosed(user)) ?? false : false } else { lastHere }
        if lastAnywhere {
            try? await Self.inChildTask { try await PresenceAnnouncer(store: self.store, hub: self.hub).announceOffline(user) }
        }
        if let failure { throw failure }
    }

    /// Runs `work` in a child task of its own, whose stack memory is freed when it ends.
    static func inChildTask<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask(operation: work)
            guard let value = try await group.next() else { throw CancellationError() }
            return value
        }
    }

    /// The first message, which must arrive within the hello timeout (the socket is closed otherwise).
    private func firstMessage(
        _ messages: inout WebSocketInboundMessageStream.AsyncIterator, _ outbound: WebSocketOutboundWriter
    ) async throws -> WebSocketMessage? {
        let timeout = configuration.helloTimeoutSeconds
        let watchdog = Task {
            try await Task.sleep(for: .milliseconds(Int64(timeout * 1000)))
            try await outbound.close(.policyViolation, reason: "hello expected")
        }
        defer { watchdog.cancel() }
        return try await messages.next()
    }

    /// The first frame must be a valid `hello`; answers and closes otherwise.
    private func authenticate(_ message: WebSocketMessage, _ outbound: WebSocketOutboundWriter) async throws -> Hello? {
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
        try await outbound.write(.text(
            WireCoding.encode(.error(ref: WireCoding.ref(in: bytes), clientId: nil, code: refused.code, message: refused.message))))
        try await outbound.close(.policyViolation, reason: refused.code.rawValue)
        return nil
    }

    /// `welcome`, the online announcement and the presence snapshot; returns the stream head.
    private func welcome(
        _ connection: ClientConnection, _ outbound: WebSocketOutboundWriter, firstHere: Bool, counted: CountedAnywhere
    ) async throws -> Int64 {
        let user = connection.userId
        let head = try await store.streamHead(of: user)
        try await outbound.write(.text(WireCoding.encode(.welcome(userId: user, head: head))))
        let presence = PresenceAnnouncer(store: store, hub: hub)
        // In a cluster, "first" means first anywhere, which only the bus knows.
        let firstAnywhere = if let bus = hub.bus { try await bus.connectionOpened(user) } else { firstHere }
        counted.set()
        let contacts = try await store.contacts(of: user)  // read once for both
        if firstAnywhere { presence.announceOnline(user, to: contacts) }
        try await presence.sendSnapshot(of: contacts, to: connection)
        return head
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

    static func bytes(of message: WebSocketMessage) -> [UInt8] {
        switch message {
        case .text(let text): Array(text.utf8)
        case .binary(let buffer): Array(buffer.readableBytesView)
        }
    }
}

/// A valid `hello`: the session it signed in with and where the stream resumes.
struct Hello {
    var session: SessionInfo
    var tokenHash: String
    var after: Int64?
}

/// Whether this connection was counted by the cluster bus (so its close must be counted too).
final class CountedAnywhere: Sendable {
    private let counted = Atomic<Bool>(false)
    var value: Bool { counted.load(ordering: .sequentiallyConsistent) }
    func set() { counted.store(true, ordering: .sequentiallyConsistent) }
}
