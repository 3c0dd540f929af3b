import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore

/// Wraps the HTTP/WebSocket child channel so graceful shutdown also closes connections that never
/// sent a byte.
///
/// Until a connection's first request arrives, the WebSocket-upgrade pipeline has no handler that
/// reacts to the server's quiesce event, so such a connection (a client that reconnected a moment
/// before shutdown, a pooled pre-opened connection) would hold the shutdown open until the client
/// went away. Connections that have sent something are left to the HTTP handlers as before.
struct QuiescingChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    let base: Base

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Base.Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(CloseSilentConnectionOnQuiesce(), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return base.setup(channel: channel, logger: logger)
    }

    func handle(value: Base.Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

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
    /// HTTP/1 with WebSocket upgrade (as `http1WebSocketUpgrade(webSocketRouter:configuration:)`),
    /// plus closing silent connections on graceful shutdown.
    static func parley(
        webSocketRouter: Router<ParleyRequestContext>, configuration: HTTP1WebSocketUpgradeChannel.Configuration
    ) -> HTTPServerBuilder {
        let webSocketResponder = webSocketRouter.buildResponder()
        return HTTPServerBuilder { responder in
            QuiescingChildChannel(base: HTTP1WebSocketUpgradeChannel(
                responder: responder, webSocketResponder: webSocketResponder, configuration: configuration))
        }
    }
}
