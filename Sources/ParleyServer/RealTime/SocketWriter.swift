import NIOCore
import NIOWebSocket

/// Writes a connection's frames to its channel in batches: frames are gathered, then handed to the
/// event loop at once and flushed together (one hop and, usually, one system call for a burst).
///
/// Each flush completes once its frames are written to the socket, and is marked on the connection
/// while it waits, so the hub can spot a write that never completes (``ClientConnection`` rule 2)
/// and a writer never runs ahead of a client that stopped reading. Used by one writer run at a time:
/// a task (``flush()``) or the event loop (``flushInPlace(_:)``).
final class SocketWriter: @unchecked Sendable {
    private let channel: any Channel
    private let connection: ClientConnection?
    private var pending: [WebSocketFrame] = []
    /// Beyond this many gathered frames, ``text(_:)`` flushes by itself (bounds a long catch-up).
    static let batchLimit = 64

    init(channel: any Channel, connection: ClientConnection?) {
        self.channel = channel
        self.connection = connection
    }

    var eventLoop: any EventLoop { channel.eventLoop }

    /// Gathers one text frame; written at the next flush.
    func append(_ text: String) {
        pending.append(WebSocketFrame(fin: true, opcode: .text, data: channel.allocator.buffer(string: text)))
    }

    /// Gathers one text frame, flushing once ``batchLimit`` frames wait.
    func text(_ text: String) async throws {
        append(text)
        if pending.count >= Self.batchLimit { try await flush() }
    }

    /// Writes what was gathered and waits until it is on the socket.
    func flush() async throws {
        guard !pending.isEmpty else { return }
        let written = channel.eventLoop.makePromise(of: Void.self)
        channel.eventLoop.execute { self.writeGathered(promise: written) }
        try await written.futureResult.get()
    }

    /// On the event loop: writes what was gathered; `done` runs on the loop once it is on the
    /// socket, or at once when nothing was gathered.
    func flushInPlace(_ done: @escaping (Result<Void, any Error>) -> Void) {
        channel.eventLoop.preconditionInEventLoop()
        guard !pending.isEmpty else { return done(.success(())) }
        let written = channel.eventLoop.makePromise(of: Void.self)
        writeGathered(promise: written)
        // After the write's own mark is cleared: `done` may start the next write.
        written.futureResult.whenComplete(done)
    }

    /// Writes what was gathered, then the close frame.
    func close(_ code: WebSocketErrorCode, reason: String) async throws {
        pending.append(Self.closeFrame(code, reason: reason, allocator: channel.allocator))
        try await flush()
    }

    /// On the event loop: the gathered frames, flushed once; the write is marked on the connection
    /// until `promise` completes.
    private func writeGathered(promise: EventLoopPromise<Void>) {
        guard let last = pending.last else { return promise.succeed(()) }
        let frames = pending
        pending = []  // lets go of the storage: most connections are idle
        if let connection {
            connection.writeStarted(at: MonotonicClock.milliseconds)
            promise.futureResult.whenComplete { _ in connection.writeFinished() }
        }
        for frame in frames.dropLast() { channel.write(frame, promise: nil) }
        channel.writeAndFlush(last, promise: promise)
    }

    static func closeFrame(_ code: WebSocketErrorCode, reason: String, allocator: ByteBufferAllocator) -> WebSocketFrame {
        var data = allocator.buffer(capacity: 2 + reason.utf8.count)
        data.write(webSocketErrorCode: code)
        data.writeString(reason)
        return WebSocketFrame(fin: true, opcode: .connectionClose, data: data)
    }
}
