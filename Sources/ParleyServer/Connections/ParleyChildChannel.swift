import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1

/// The HTTP/1 + WebSocket-upgrade child channel, with the guards every connection gets:
/// admission by address and WebSocket masking (``ConnectionAdmission``), request timeouts and 400s
/// for malformed requests (``HTTPRequestGuard``), closing silent connections on shutdown, and one
/// flush per turn of the event loop (``FlushCoalescing``).
struct ParleyChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    let base: Base
    let counter: ConnectionCounter
    let timeouts: HTTPTimeouts

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Base.Value> {
        let state = ConnectionGuardState()
        do {
            try channel.pipeline.syncOperations.addHandler(CloseSilentConnectionOnQuiesce(), position: .first)
            try channel.pipeline.syncOperations.addHandler(ConnectionAdmission(counter: counter, state: state), position: .first)
            try channel.pipeline.syncOperations.addHandler(FlushCoalescing(), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        let guardState = NIOLoopBound(state, eventLoop: channel.eventLoop)
        return base.setup(channel: channel, logger: logger).flatMapThrowing { [timeouts] value in
            // Between the HTTP decoder and the upgrader, so it sees parsed request parts and parser errors.
            let upgrader = try channel.pipeline.syncOperations.context(
                handlerType: NIOTypedHTTPServerUpgradeHandler<HTTP1WebSocketUpgradeChannel.UpgradeResult>.self)
            try channel.pipeline.syncOperations.addHandler(
                HTTPRequestGuard(timeouts: timeouts, state: guardState.value), position: .before(upgrader.handler))
            return value
        }
    }

    func handle(value: Base.Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// Closes, on graceful shutdown, connections that never sent a byte.
///
/// Until a connection's first request arrives, the WebSocket-upgrade pipeline has no handler that
/// reacts to the server's quiesce event, so such a connection (a client that reconnected a moment
/// before shutdown, a pooled pre-opened connection) would hold the shutdown open until the client
/// went away. Connections that have sent something are left to the HTTP handlers as before.
final class CloseSilentConnectionOnQuiesce: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    private var receivedAnything = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        receivedAnything = true
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, !receivedAnything {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1 with WebSocket upgrade (as `http1WebSocketUpgrade(configuration:shouldUpgrade:)`),
    /// with Parley's connection guards.
    static func parley(
        webSocket: @escaping WebSocketEndpoint, configuration: HTTP1WebSocketUpgradeChannel.Configuration,
        counter: ConnectionCounter, timeouts: HTTPTimeouts
    ) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            ParleyChildChannel(
                base: HTTP1WebSocketUpgradeChannel(responder: responder, configuration: configuration, shouldUpgrade: webSocket),
                counter: counter, timeouts: timeouts)
        }
    }
}
