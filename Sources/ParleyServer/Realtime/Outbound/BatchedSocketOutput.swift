import NIOCore
import NIOWebSocket

/// Writes a connection's frames to its channel in batches: frames are gathered, then handed to the
/// event loop at once and flushed together (one hop and, usually, one system call for a burst).
///
/// Each ``flush()`` waits until its frames are written to the socket, and is marked on the
/// connection while it waits, so the hub can spot a write that never completes (``ClientConnection``
/// rule 2) and an outbound run never runs ahead of a client that stopped reading. Used by one task at a time.
final class BatchedSocketOutput: @unchecked Sendable {
    private let channel: any Channel
    private let connection: ClientConnection?
    private var pending: [WebSocketFrame] = []
    /// Beyond this many gathered frames, ``text(_:)`` flushes by itself (bounds a long catch-up).
    static let batchLimit = 64

    init(channel: any Channel, connection: ClientConnection?) {
        self.channel = channel
        self.connection = connection
    }

    /// Room left in front of each frame's text, where NIO's frame encoder writes the frame header
    /// (at most 10 bytes for a server's frame: no mask) instead of in a buffer of its own: one
    /// buffer and one iovec per frame rather than two.
    static let headerRoom = 10

    /// Gathers one text frame; written at the next ``flush()``.
    func text(_ text: String) async throws {
        var data = channel.allocator.buffer(capacity: Self.headerRoom + text.utf8.count)
        data.moveWriterIndex(forwardBy: Self.headerRoom)
        data.moveReaderIndex(forwardBy: Self.headerRoom)
        data.writeString(text)
        pending.append(WebSocketFrame(fin: true, opcode: .text, data: data))
        if pending.count >= Self.batchLimit { try await flush() }
    }

    /// Writes what was gathered and waits until it is on the socket.
    func flush() async throws {
        guard let last = pending.last else { return }
        let frames = pending
        pending = []  // lets go of the storage: most connections are idle
        connection?.writeStarted(at: MonotonicClock.milliseconds)
        defer { connection?.writeFinished() }
        let written = channel.eventLoop.makePromise(of: Void.self)
        let channel = channel
        let write: @Sendable () -> Void = {
            for frame in frames.dropLast() { channel.write(frame, promise: nil) }
            channel.writeAndFlush(last, promise: written)
        }
        // A writer on the event loop (``EventLoopTaskExecutor``) writes at once.
        if channel.eventLoop.inEventLoop { write() } else { channel.eventLoop.execute(write) }
        try await written.futureResult.get()
    }

    /// Writes what was gathered, then the close frame.
    func close(_ code: WebSocketErrorCode, reason: String) async throws {
        pending.append(Self.closeFrame(code, reason: reason, allocator: channel.allocator))
        try await flush()
    }

    static func closeFrame(_ code: WebSocketErrorCode, reason: String, allocator: ByteBufferAllocator) -> WebSocketFrame {
        var data = allocator.buffer(capacity: 2 + reason.utf8.count)
        data.write(webSocketErrorCode: code)
        data.writeString(reason)
        return WebSocketFrame(fin: true, opcode: .connectionClose, data: data)
    }
}
