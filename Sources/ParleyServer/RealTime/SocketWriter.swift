import NIOCore
import NIOWebSocket

/// Writes a connection's frames to its channel in batches: frames are gathered, then handed to the
/// event loop at once and flushed together (one hop and, usually, one system call for a burst).
///
/// A batch is handed over without waiting for it to reach the socket, unless the channel is no
/// longer writable (more than its high-water mark waits to be sent): then ``flush()`` waits until
/// the batch is written, so a writer never runs far ahead of a client that reads slowly or not at
/// all. Such a client is noticed by its unwritable channel (``ClientConnection`` rule 2), not here.
/// Used by one task at a time.
final class SocketWriter: @unchecked Sendable {
    private let channel: any Channel
    private var pending: [WebSocketFrame] = []
    /// Beyond this many gathered frames, ``text(_:)`` flushes by itself (bounds a long catch-up).
    static let batchLimit = 64

    init(channel: any Channel) {
        self.channel = channel
    }

    /// Gathers one text frame; written at the next ``flush()``.
    func text(_ text: String) async throws {
        pending.append(WebSocketFrame(fin: true, opcode: .text, data: channel.allocator.buffer(string: text)))
        if pending.count >= Self.batchLimit { try await flush() }
    }

    /// Hands what was gathered to the event loop; waits for it only while the channel is not writable.
    /// - Throws: `ChannelError.ioOnClosedChannel` once the channel is closed.
    func flush() async throws {
        guard let last = pending.last else { return }
        guard channel.isActive else { throw ChannelError.ioOnClosedChannel }
        let frames = pending
        pending = []  // lets go of the storage: most connections are idle
        let written = channel.eventLoop.makePromise(of: Void.self)
        let channel = channel
        channel.eventLoop.execute {
            for frame in frames.dropLast() { channel.write(frame, promise: nil) }
            channel.writeAndFlush(last, promise: written)
        }
        if !channel.isWritable { try await written.futureResult.get() }
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
