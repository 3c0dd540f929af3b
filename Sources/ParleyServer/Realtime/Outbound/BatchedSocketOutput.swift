import NIOCore
import NIOWebSocket

/// Writes a connection's frames to its channel in batches: frames are gathered, then handed to the
/// event loop at once and flushed together (one hop and, usually, one system call for a burst).
///
/// Each ``flush()`` waits until its frames are written to the socket, and is marked on the
/// connection while it waits, so the hub can spot a write that never completes (``ClientConnection``
/// rule 2) and an outbound run never runs ahead of a client that stopped reading. Used by one task
/// at a time, or by ``writeNow(_:)`` on the event loop while no task uses it.
///
/// Frames are whole (``TextFrameBytes``): a frame made once for many connections is written to each
/// as the same bytes.
final class BatchedSocketOutput: @unchecked Sendable {
    private let channel: any Channel
    /// The socket's handler, which writes whole frames; only touched on the event loop.
    let frames: WebSocketChannelHandler
    private let connection: ClientConnection?
    private var pending: [TextFrameBytes] = []
    /// Beyond this many gathered frames, ``text(_:)`` flushes by itself (bounds a long catch-up).
    static let batchLimit = 64

    init(channel: any Channel, frames: WebSocketChannelHandler, connection: ClientConnection?) {
        self.channel = channel
        self.frames = frames
        self.connection = connection
    }

    /// Gathers one text frame; written at the next ``flush()``.
    func text(_ text: String) async throws {
        try await frame(TextFrameBytes(text, allocator: channel.allocator))
    }

    /// Gathers one whole frame; written at the next ``flush()``.
    func frame(_ frame: TextFrameBytes) async throws {
        pending.append(frame)
        if pending.count >= Self.batchLimit { try await flush() }
    }

    /// On the event loop, with nothing gathered: writes a frame and flushes it without waiting for
    /// it to reach the socket. False, writing nothing, when the socket is not taking more (its
    /// buffer is past the high-water mark): the caller then waits for it through ``flush()``, which
    /// is what lets the hub see a client that stopped reading (``ClientConnection`` rule 2).
    func writeNow(_ frame: TextFrameBytes) -> Bool {
        guard pending.isEmpty, channel.isWritable else { return false }
        frames.write(frame, promise: nil)
        frames.flush()
        return true
    }

    /// Writes what was gathered and waits until it is on the socket.
    func flush() async throws {
        try await flush(closing: nil)
    }

    /// Writes what was gathered, then the close frame.
    func close(_ code: WebSocketErrorCode, reason: String) async throws {
        try await flush(closing: Self.closeFrame(code, reason: reason, allocator: channel.allocator))
    }

    private func flush(closing: WebSocketFrame?) async throws {
        guard !pending.isEmpty || closing != nil else { return }
        let gathered = pending
        pending = []  // lets go of the storage: most connections are idle
        connection?.writeStarted(at: MonotonicClock.milliseconds)
        defer { connection?.writeFinished() }
        let written = channel.eventLoop.makePromise(of: Void.self)
        let write: @Sendable () -> Void = { [self] in
            let handler = frames
            for (index, frame) in gathered.enumerated() {
                handler.write(frame, promise: index == gathered.count - 1 && closing == nil ? written : nil)
            }
            if let closing {
                channel.writeAndFlush(closing, promise: written)  // through the handler: nothing after a close
            } else {
                handler.flush()
            }
        }
        // A writer on the event loop (``EventLoopTaskExecutor``) writes at once.
        if channel.eventLoop.inEventLoop { write() } else { channel.eventLoop.execute(write) }
        try await written.futureResult.get()
    }

    static func closeFrame(_ code: WebSocketErrorCode, reason: String, allocator: ByteBufferAllocator) -> WebSocketFrame {
        var data = allocator.buffer(capacity: 2 + reason.utf8.count)
        data.write(webSocketErrorCode: code)
        data.writeString(reason)
        return WebSocketFrame(fin: true, opcode: .connectionClose, data: data)
    }
}
