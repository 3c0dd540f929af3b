import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import ParleyCore

/// How long a connection may take over each part of an HTTP exchange.
public struct HTTPTimeouts: Sendable {
    /// From connecting to the end of the first request's head: a request line without the blank
    /// line after it, or headers trickled a byte at a time, hold a connection no longer than this.
    public var header: TimeAmount = .seconds(10)
    /// From a request's head to the end of its body.
    public var body: TimeAmount = .seconds(30)
    /// From the end of a response to the end of the next request's head (keep-alive idle).
    public var idle: TimeAmount = .seconds(60)

    public init() {}
}

/// Sits between the HTTP decoder and the WebSocket upgrader of every connection and makes sure a
/// client can hold a connection only while it is making progress:
///
/// 1. A request the parser refuses (NUL or bare LF in a header, Content-Length with
///    Transfer-Encoding, oversized or too many headers, a method it does not know, TLS on the plain
///    port) is answered `400 Bad Request` (`malformed_request`, as JSON like every error) with
///    `Connection: close`, and the connection is closed.
/// 2. A head not complete within ``HTTPTimeouts/header`` (first request) or ``HTTPTimeouts/idle``
///    (later requests), or a body not complete within ``HTTPTimeouts/body``, ends the connection
///    (an upload's body, to `/v1/uploads`, may take as long as it needs while no gap between its
///    parts is that long: a large file on a slow link still arrives; a stalled one is let go):
///    with `408 Request Timeout` (`request_timeout`) if the client had started a request and no response has, silently
///    if it sent nothing (an idle keep-alive connection or a browser's preconnect).
/// 3. A request whose body the connection ends before it is whole (a FIN, a parse error, the body
///    timeout; a reset ends it with its own error) ends its body with ``RequestBodyCut``, not as
///    if it were whole: a chunked body has no Content-Length to tell the route it was cut short,
///    and Hummingbird ends a body whose connection ended as if its last part had come.
/// 4. Once the connection is upgraded to a WebSocket it steps aside (the WebSocket has its own
///    rules) and tells ``ConnectionAdmission`` to check frame masking.
///
/// Before the upgrade it sees HTTP parts; after it, raw bytes pass through untouched, which is why
/// it takes `Any` in both directions.
final class HTTPRequestGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = Any
    typealias InboundOut = Any
    typealias OutboundIn = Any
    typealias OutboundOut = HTTPServerResponsePart

    private let timeouts: HTTPTimeouts
    private let state: ConnectionGuardState
    private var deadline: Scheduled<Void>?
    private var responseOpen = false
    private var closing = false
    /// When the current upload's body last made progress (nil: not an upload, whose body has one deadline).
    private var uploadProgress: NIODeadline?
    /// A request's head came and its end has not (rule 3).
    private var bodyOpen = false

    init(timeouts: HTTPTimeouts, state: ConnectionGuardState) {
        self.timeouts = timeouts
        self.state = state
    }

    func handlerAdded(context: ChannelHandlerContext) {
        arm(timeouts.header, context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        cutOpenBody(context: context)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !state.upgraded, let part = unwrapInboundIn(data) as? HTTPServerRequestPart {
            switch part {
            case .head(let head):
                uploadProgress = head.uri.hasPrefix("/v1/uploads") ? .now() : nil
                bodyOpen = true
                arm(timeouts.body, context: context)
            case .body: if uploadProgress != nil { uploadProgress = .now() }
            case .end:
                uploadProgress = nil
                bodyOpen = false
                disarm()
            }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if !state.upgraded, let part = unwrapOutboundIn(data) as? HTTPServerResponsePart {
            switch part {
            case .head(let head) where head.status == .switchingProtocols:
                state.upgraded = true
                disarm()
            case .head(let head) where head.status.code < 200: break
            case .head: responseOpen = true
            case .body: break
            case .end:
                responseOpen = false
                state.requestStarted = false
                arm(timeouts.idle, context: context)
            }
        }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !state.upgraded, error is HTTPParserError || error is ByteToMessageDecoderError else {
            bodyOpen = false  // the error itself ends the body, as the cut would
            context.fireErrorCaught(error)
            return
        }
        refuse(.malformedRequest, "The server could not read this HTTP request.", context: context)
    }

    /// Rule 3: the body that was arriving ends with ``RequestBodyCut``.
    private func cutOpenBody(context: ChannelHandlerContext) {
        guard bodyOpen, !state.upgraded else { return }
        bodyOpen = false
        context.fireErrorCaught(RequestBodyCut())
    }

    private func arm(_ timeout: TimeAmount, context: ChannelHandlerContext) {
        deadline?.cancel()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: timeout) {
            let (handler, context) = loopBound.value
            if let progress = handler.uploadProgress, NIODeadline.now() - progress < handler.timeouts.body {
                handler.arm(handler.timeouts.body - (NIODeadline.now() - progress), context: context)
                return
            }
            if handler.state.requestStarted {
                handler.refuse(.requestTimeout, "The request did not arrive in time.", context: context)
            } else {
                handler.closing = true
                context.endQuietly()
            }
        }
    }

    private func disarm() {
        deadline?.cancel()
        deadline = nil
    }

    /// Answers `code` (unless a response is under way) and closes the connection.
    private func refuse(_ code: ErrorCode, _ message: String, context: ChannelHandlerContext) {
        guard !closing else { return }
        closing = true
        disarm()
        cutOpenBody(context: context)
        guard !responseOpen else {
            context.close(promise: nil)
            return
        }
        // As every error: `{"error": {code, message}}` (docs/protocol.md), though no route saw the request.
        let body = context.channel.allocator.buffer(bytes: (try? JSONEncoder().encode(ErrorBody(code: code, message: message))) ?? Data())
        let head = HTTPResponseHead(
            version: .http1_1, status: HTTPResponseStatus(statusCode: ParleyError.status(for: code).code),
            headers: ["Connection": "close", "Content-Type": "application/json; charset=utf-8", "Content-Length": "\(body.readableBytes)"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in loopBound.value.endQuietly() }
    }
}

/// A request's body that its connection ended before it was whole (``HTTPRequestGuard`` rule 3).
struct RequestBodyCut: Error {}

extension ChannelHandlerContext {
    /// Closes the connection after telling the handlers behind this one that the input ended, so
    /// the WebSocket upgrader gives up quietly instead of logging an error for every refused client.
    func endQuietly() {
        fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        close(promise: nil)
    }
}
