import NIOCore
import NIOEmbedded
import NIOWebSocket
@testable import ParleyServer
import Testing

/// ``TextFrameBytes`` are the bytes NIO's frame encoder writes for the same text frame, at every
/// length class of the header (7-bit, 16-bit and 64-bit lengths and their edges).
@Suite struct TextFrameBytesTests {
    static func encodedByNIO(_ text: String) throws -> [UInt8] {
        let channel = EmbeddedChannel(handler: WebSocketFrameEncoder())
        var data = channel.allocator.buffer(capacity: text.utf8.count)
        data.writeString(text)
        try channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: data)).wait()
        var bytes: [UInt8] = []
        while var part = try channel.readOutbound(as: ByteBuffer.self) { bytes += part.readBytes(length: part.readableBytes)! }
        _ = try channel.finish()
        return bytes
    }

    @Test(arguments: [0, 1, 125, 126, 127, 65_535, 65_536, 70_000])
    func aFrameIsWhatTheEncoderWrites(length: Int) throws {
        let text = String(repeating: "é", count: length / 2) + String(repeating: "a", count: length % 2)
        let frame = TextFrameBytes(text)
        #expect(Array(frame.buffer.readableBytesView) == (try Self.encodedByNIO(text)))
        #expect(String(buffer: frame.frame.data) == text, "the payload as NIO's frame type")
        #expect(frame.frame.opcode == .text && frame.frame.fin)
    }
}
