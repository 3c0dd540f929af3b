import NIOCore

/// Turns the flushes a connection asks for within one turn of its event loop into one.
///
/// Each WebSocket frame is written and flushed on its own (one `writev` per frame), and under load
/// several frames for one connection land in the same turn of the loop: this handler, next to the
/// socket, lets the first flush of a turn schedule one flush at the end of the turn and drops the
/// rest, so they leave in one system call. Rules:
/// 1. Nothing waits longer than the current turn of the event loop: no timers, no added latency
///    beyond the writes already queued in that turn.
/// 2. A close flushes what is pending first, so a close frame and what precedes it are not lost.
final class FlushCoalescing: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny
    private var flushScheduled = false

    func flush(context: ChannelHandlerContext) {
        guard !flushScheduled else { return }
        flushScheduled = true
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let (handler, context) = bound.value
            handler.flushNow(context)
        }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        flushNow(context)
        context.close(mode: mode, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        flushNow(context)
    }

    private func flushNow(_ context: ChannelHandlerContext) {
        guard flushScheduled else { return }
        flushScheduled = false
        context.flush()
    }
}
