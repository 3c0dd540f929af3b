import NIOCore
import NIOWebSocket

/// Runs one upgraded WebSocket on its event loop, with no task of its own: an idle connection is a
/// channel and a few objects, not tasks waiting on streams (each task keeps the memory of its
/// deepest stack while it lives). Whole messages go to the connection's ``ConnectionLifecycle``.
///
/// Rules:
/// 1. Fragments are joined first (`NIOWebSocketFrameAggregator`, within the frame limit; beyond it
///    close 1009). A text message must be UTF-8, otherwise close 1007. Client frames without a mask
///    were refused before this handler (``ConnectionAdmission``).
/// 2. `ping` is answered with a `pong` carrying the same data; `pong` is ignored.
/// 3. Close handshake: a client's close is answered with its code and the TCP connection is closed.
///    Once the server has sent its close, no data frame goes out or is handled, and the connection
///    is dropped when the client's close arrives or after ``closeTimeout``.
/// 4. Reads pause while the session asks (``ReadFlow``): nothing more is read from the socket, so a
///    client that floods is slowed down, not buffered.
/// 5. On graceful shutdown (quiesce) the session ends the connection after its answers (1001).
/// 6. A client that shuts its side of the TCP connection without a close frame (a killed app, a
///    dropped network, a process that exited) is gone: the connection is closed at once. The HTTP
///    server allows half-closed connections, so without this the end of input was only an event
///    nobody acted on: the socket sat in CLOSE-WAIT, counted and its user online, until the idle
///    limit (issue #33's stale sockets).
/// 7. Whole frames made once (``TextFrameBytes``) are written past NIO's frame encoder, under rule 3:
///    nothing after the server's close.
final class WebSocketChannelHandler: ChannelDuplexHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    /// Outbound user events that pause and resume reading (rule 4); safe to send from any thread
    /// with `channel.triggerUserOutboundEvent`.
    enum ReadFlow: Sendable { case pause, resume }

    static let closeTimeout = TimeAmount.seconds(5)
    private let session: ConnectionLifecycle
    private var closeSent = false
    private var closeReceived = false
    private var readsPaused = false
    private var readPending = false
    private var closeTimer: Scheduled<Void>?
    /// This handler's context, and the frame encoder's, past which whole frames are written (rule 7);
    /// both let go when the handler is removed.
    private var context: ChannelHandlerContext?
    private var encoderContext: ChannelHandlerContext?

    init(session: ConnectionLifecycle) {
        self.session = session
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        encoderContext = try? context.pipeline.syncOperations.context(handlerType: WebSocketFrameEncoder.self)
        session.opened(frames: self)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        encoderContext = nil
    }

    /// Writes a whole frame on the event loop (rule 7); flushed by ``flush()``.
    func write(_ frame: TextFrameBytes, promise: EventLoopPromise<Void>?) {
        guard !closeSent, let context else {
            promise?.fail(ChannelError.outputClosed)
            return
        }
        if let encoderContext {
            encoderContext.write(NIOAny(frame.buffer), promise: promise)
        } else {
            context.write(wrapOutboundOut(frame.frame), promise: promise)
        }
    }

    /// Flushes what was written, on the event loop.
    func flush() {
        context?.flush()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text, .binary:
            guard !closeSent, !closeReceived else { return }
            let bytes = Self.unmaskedBytes(of: frame)
            if frame.opcode == .text, !WireCoding.isUTF8(bytes) {
                fail(.dataInconsistentWithMessage, context: context)
                return
            }
            session.received(bytes)
        case .ping:
            guard !closeSent else { return }
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        case .connectionClose:
            closeReceived = true
            if closeSent {
                context.close(promise: nil)
                return
            }
            // Answer with the client's own code (none if it gave none), then drop the connection.
            var echo = frame.unmaskedData
            let code = echo.readSlice(length: min(2, echo.readableBytes)) ?? context.channel.allocator.buffer(capacity: 0)
            closeSent = true
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: code))).whenComplete { _ in
                loopBound.value.close(promise: nil)
            }
        case .pong:
            return
        default:
            fail(.protocolError, context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        closeTimer?.cancel()
        closeTimer = nil
        session.ended()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch error {
        case NIOWebSocketFrameAggregator.Error.accumulatedFrameSizeIsTooLarge: fail(.messageTooLarge, context: context)
        case is NIOWebSocketFrameAggregator.Error: fail(.protocolError, context: context)
        case is NIOWebSocketError: break  // answered and closed by WebSocketProtocolErrorHandler
        default: context.close(promise: nil)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            session.quiesce()
            return
        }
        if case .inputClosed? = event as? ChannelEvent {  // rule 6
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    // MARK: Outbound

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !closeSent else {
            promise?.fail(ChannelError.outputClosed)
            return
        }
        if unwrapOutboundIn(data).opcode == .connectionClose {
            closeSent = true
            resumeReading(context)  // to read the client's answering close
            if closeReceived {
                let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
                let written = promise ?? context.eventLoop.makePromise()
                written.futureResult.whenComplete { _ in loopBound.value.close(promise: nil) }
                context.write(data, promise: written)
                return
            }
            let channel = context.channel
            closeTimer = context.eventLoop.scheduleTask(in: Self.closeTimeout) { channel.close(promise: nil) }
        }
        context.write(data, promise: promise)
    }

    func read(context: ChannelHandlerContext) {
        if readsPaused {
            readPending = true
        } else {
            context.read()
        }
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let flow = event as? ReadFlow else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        switch flow {
        case .pause:
            readsPaused = true
        case .resume:
            resumeReading(context)
        }
        promise?.succeed()
    }

    private func resumeReading(_ context: ChannelHandlerContext) {
        readsPaused = false
        if readPending {
            readPending = false
            context.read()
        }
    }

    /// Closes with `code` (if no close went out yet) and drops the connection.
    private func fail(_ code: WebSocketErrorCode, context: ChannelHandlerContext) {
        guard !closeSent else {
            context.close(promise: nil)
            return
        }
        closeSent = true
        var data = context.channel.allocator.buffer(capacity: 2)
        data.write(webSocketErrorCode: code)
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data))).whenComplete { _ in
            loopBound.value.close(promise: nil)
        }
    }

    /// The payload, unmasked, copied once (`unmaskedData` would copy into a buffer first).
    static func unmaskedBytes(of frame: WebSocketFrame) -> [UInt8] {
        var bytes = Array(frame.data.readableBytesView)
        guard let key = frame.maskKey else { return bytes }  // joined fragments come unmasked
        for index in bytes.indices { bytes[index] ^= key[index % 4] }
        return bytes
    }
}
