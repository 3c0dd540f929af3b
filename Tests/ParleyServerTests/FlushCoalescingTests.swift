import NIOCore
import NIOEmbedded
@testable import ParleyServer
import Testing

/// ``FlushCoalescing``'s rules on an embedded channel: the flushes of one turn of the loop become one,
/// at the end of that turn; a close flushes first.
@Suite struct FlushCoalescingTests {
    final class FlushCounter: ChannelOutboundHandler {
        typealias OutboundIn = NIOAny
        var flushes = 0
        func flush(context: ChannelHandlerContext) {
            flushes += 1
            context.flush()
        }
    }

    func makeChannel() throws -> (EmbeddedChannel, FlushCounter) {
        let counter = FlushCounter()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers([counter, FlushCoalescing()])
        return (channel, counter)
    }

    @Test func theFlushesOfOneTurnLeaveAsOneAtItsEnd() throws {
        let (channel, counter) = try makeChannel()
        for text in ["a", "b", "c"] {
            channel.write(ByteBuffer(string: text), promise: nil)
            channel.flush()
        }
        let midTurn = try channel.readOutbound(as: ByteBuffer.self)
        #expect(counter.flushes == 0 && midTurn == nil, "nothing leaves mid-turn")
        channel.embeddedEventLoop.run()
        #expect(counter.flushes == 1)
        let written = try (0..<3).map { _ in try channel.readOutbound(as: ByteBuffer.self).map { String(buffer: $0) } }
        #expect(written == ["a", "b", "c"], "in order, all of them")
        channel.write(ByteBuffer(string: "d"), promise: nil)
        channel.flush()
        channel.embeddedEventLoop.run()
        #expect(counter.flushes == 2, "the next turn flushes again")
        _ = try channel.finish()
    }

    @Test func aCloseFlushesWhatIsPendingFirst() throws {
        let (channel, counter) = try makeChannel()
        channel.write(ByteBuffer(string: "close frame"), promise: nil)
        channel.flush()
        channel.close(promise: nil)
        #expect(counter.flushes == 1)
        let written = try channel.readOutbound(as: ByteBuffer.self).map { String(buffer: $0) }
        #expect(written == "close frame")
        channel.embeddedEventLoop.run()
        #expect(counter.flushes == 1, "the scheduled flush has nothing left to do")
    }
}
