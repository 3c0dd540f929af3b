import NIOCore
import NIOWebSocket

/// A whole server-to-client WebSocket text frame, header and payload in one buffer: made once, then
/// written as is to every connection it goes to (the buffer is shared, not copied).
///
/// A server's frames carry no mask, so a frame's bytes are the same for every recipient. Handed to
/// NIO's frame encoder as a `WebSocketFrame`, each copy would get its header in a buffer of its own
/// (the frame's storage keeps the payload shared, so the encoder cannot write in front of it): two
/// buffers, two pipeline passes and two iovecs a frame. ``WebSocketChannelHandler/write(_:promise:)``
/// writes these bytes past the encoder instead.
struct TextFrameBytes: Sendable {
    /// The frame: header, then the UTF-8 payload.
    let buffer: ByteBuffer
    /// Bytes of the header in front of the payload (2, 4 or 10).
    let headerLength: Int

    init(_ text: String, allocator: ByteBufferAllocator = ByteBufferAllocator()) {
        let length = text.utf8.count
        var buffer = allocator.buffer(capacity: 10 + length)
        buffer.writeInteger(UInt8(0x81))  // FIN, opcode 1 (text)
        switch length {
        case 0...125:
            buffer.writeInteger(UInt8(length))
        case 126...Int(UInt16.max):
            buffer.writeInteger(UInt8(126))
            buffer.writeInteger(UInt16(length))
        default:
            buffer.writeInteger(UInt8(127))
            buffer.writeInteger(UInt64(length))
        }
        headerLength = buffer.readableBytes
        buffer.writeString(text)
        self.buffer = buffer
    }

    /// The payload's bytes.
    var payload: ByteBuffer {
        buffer.getSlice(at: buffer.readerIndex + headerLength, length: buffer.readableBytes - headerLength)!
    }

    /// The payload as text.
    var text: String { String(buffer: payload) }

    /// The same frame as NIO's frame type, for a pipeline without the encoder to write past.
    var frame: WebSocketFrame { WebSocketFrame(fin: true, opcode: .text, data: payload) }
}
