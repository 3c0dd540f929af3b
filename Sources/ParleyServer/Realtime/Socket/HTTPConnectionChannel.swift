import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket

/// The child channel of every connection: HTTP/1, upgraded to Parley's WebSocket on `GET /v1/ws`,
/// with the guards every connection gets: admission by address and WebSocket masking
/// (``ConnectionAdmission``), request timeouts and 400s for malformed requests
/// (``HTTPRequestGuard``), closing silent connections on shutdown, and one flush per turn of the
/// event loop (``FlushCoalescing``).
///
/// An upgraded connection is run by channel handlers (``WebSocketChannelHandler``, ``ConnectionLifecycle``),
/// not by a task: ``handle(value:logger:)`` returns as soon as the upgrade is done. The server's
/// quiesce still reaches it on shutdown, and the server waits for it to close.
struct HTTPConnectionChannel: ServerChildChannel, HTTPChannelHandler {
    enum UpgradeResult: Sendable {
        case webSocket
        case notUpgraded(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        case failedUpgrade(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
    }

    struct Value: ServerChildChannelValue {
        let upgradeResult: EventLoopFuture<UpgradeResult>
        let channel: any Channel
    }

    let responder: HTTPChannelHandler.Responder
    let http1: HTTP1Channel.Configuration
    let session: RealtimeGateway
    let counter: ConnectionCounter
    let timeouts: HTTPTimeouts

    init(
        responder: @escaping HTTPChannelHandler.Responder, http1: HTTP1Channel.Configuration, session: RealtimeGateway,
        counter: ConnectionCounter, timeouts: HTTPTimeouts
    ) {
        self.responder = Self.redirectingLateUpgrades(responder)
        self.http1 = http1
        self.session = session
        self.counter = counter
        self.timeouts = timeouts
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let state = ConnectionGuardState()
            // HTTP reads grow to 256 KiB while they come full (an upload's body) rather than
            // stopping at NIO's 64 KiB: a quarter of the hops into the request body per MiB. An
            // upgrade to a WebSocket puts NIO's sizes back (below).
            try channel.syncOptions?.setOption(ChannelOptions.recvAllocator, value: Self.receiveSizes)
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(FlushCoalescing())
            try pipeline.addHandler(ConnectionAdmission(counter: counter, state: state))
            try pipeline.addHandler(CloseSilentConnectionOnQuiesce())
            let result = try pipeline.configureUpgradableHTTPServerPipeline(configuration: upgradeConfiguration(channel, logger))
            // Between the HTTP decoder and the upgrader, so it sees parsed request parts and parser errors.
            let upgrader = try pipeline.context(handlerType: NIOTypedHTTPServerUpgradeHandler<UpgradeResult>.self)
            try pipeline.addHandler(HTTPRequestGuard(timeouts: timeouts, state: state), position: .before(upgrader.handler))
            return Value(upgradeResult: result, channel: channel)
        }
    }

    static let receiveSizes = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: 256 << 10)

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.upgradeResult.get() {
            case .notUpgraded(let http): await handleHTTP(asyncChannel: http, logger: logger)
            case .failedUpgrade(let http): await refuseUpgrade(http, logger: logger)
            case .webSocket: return  // its channel handlers run it from here on
            }
        } catch {
            logger.debug("Connection ended before a request", metadata: ["error": "\(error)"])
        }
    }

    private func upgradeConfiguration(_ channel: any Channel, _ logger: Logger) -> NIOUpgradableHTTPServerPipelineConfiguration<UpgradeResult> {
        let upgradeAttempted = NIOLoopBoundBox(false, eventLoop: channel.eventLoop)
        let webSocket = NIOTypedWebSocketServerUpgrader<UpgradeResult>(
            maxFrameSize: ServerLimits.maxBodyBytes,
            shouldUpgrade: { channel, head in
                upgradeAttempted.value = true
                let isEndpoint = head.method == .GET && head.uri.split(separator: "?", maxSplits: 1).first == "/v1/ws"
                return channel.eventLoop.makeSucceededFuture(isEndpoint ? HTTPHeaders() : nil)
            },
            upgradePipelineHandler: { [session] channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    // A WebSocket reads small frames and sits idle for hours: NIO's default sizes,
                    // so the buffers it keeps between reads stay small (the large ones are for uploads).
                    try channel.syncOptions?.setOption(ChannelOptions.recvAllocator, value: AdaptiveRecvByteBufferAllocator())
                    try channel.pipeline.syncOperations.addHandlers(
                        NIOWebSocketFrameAggregator(
                            minNonFinalFragmentSize: 1, maxAccumulatedFrameCount: 256, maxAccumulatedFrameSize: ServerLimits.maxBodyBytes),
                        WebSocketChannelHandler(session: session.start(channel: channel, logger: logger)))
                    return .webSocket
                }
            })
        let http1 = http1
        var configuration = NIOUpgradableHTTPServerPipelineConfiguration<UpgradeResult>(
            upgradeConfiguration: .init(
                upgraders: [webSocket],
                notUpgradingCompletionHandler: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                        try pipeline.addHandlers(http1.additionalChannelHandlers())
                        try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: http1.idleTimeout.map { .init($0) }, logger: logger))
                        let http = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                            wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                        return upgradeAttempted.value ? .failedUpgrade(http) : .notUpgraded(http)
                    }
                }))
        configuration.enablePipelining = false  // requests are read one by one by NIOAsyncChannel
        configuration.enableErrorHandling = false  // HTTPRequestGuard answers malformed requests
        configuration.enableResponseHeaderValidation = false  // HTTPTypes validated them
        configuration.decoderConfiguration.maxHeaderFieldSize = http1.httpDecoder.maxHeaderFieldSize
        configuration.decoderConfiguration.maxHeaderListSize = http1.httpDecoder.maxHeaderListSize
        configuration.decoderConfiguration.maxHeaderFieldCount = http1.httpDecoder.maxHeaderFieldCount
        return configuration
    }

    /// A WebSocket upgrade to anything but `GET /v1/ws`: 400 and close.
    private func refuseUpgrade(_ http: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, logger: Logger) async {
        do {
            try await http.executeThenClose { _, outbound in
                let head = HTTPResponse(status: .badRequest, headerFields: [.connection: "close", .contentLength: "0"])
                try await outbound.write(contentsOf: [.head(head), .end(nil)])
            }
        } catch {
            logger.trace("Could not answer a refused upgrade", metadata: ["error": "\(error)"])
        }
    }

    /// An upgrade asked for on a connection that already carried a request cannot be taken (the
    /// upgrade is only looked for in a connection's first request): the client is sent to the same
    /// address again with `Connection: close`, so it retries on a new connection.
    private static func redirectingLateUpgrades(_ responder: @escaping HTTPChannelHandler.Responder) -> HTTPChannelHandler.Responder {
        struct RedirectedUpgrade: Error {}
        return { request, writer, channel in
            guard request.headers[.upgrade]?.lowercased() == "websocket" else {
                try await responder(request, writer, channel)
                return
            }
            let location = request.uri.path + (request.uri.query.map { "?\($0)" } ?? "")
            try await writer.writeResponse(HTTPResponse(status: .temporaryRedirect, headerFields: [.connection: "close", .location: location]))
            throw RedirectedUpgrade()
        }
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
    /// HTTP/1 with Parley's WebSocket and connection guards (``HTTPConnectionChannel``).
    static func parley(
        http1: HTTP1Channel.Configuration, session: RealtimeGateway, counter: ConnectionCounter, timeouts: HTTPTimeouts
    ) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            HTTPConnectionChannel(responder: responder, http1: http1, session: session, counter: counter, timeouts: timeouts)
        }
    }
}
