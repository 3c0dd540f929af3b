import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import ParleyCore
import Synchronization

/// One bench WebSocket: writes frames straight to its channel and hands every received text frame
/// to `onText` on the channel's event loop.
///
/// The load generator shares the machine's cores with the server, so it spends as little CPU as it
/// can: frames are not decoded here (workloads look only at what they need, by their first bytes),
/// and nothing hops to a task per frame; `onText` runs on the event loop and must be quick.
public final class BenchSocket: Sendable {
    private let channel: any Channel

    /// Connects, upgrades, says `hello` and returns once `welcome` came back.
    public static func connect(
        url: String, token: String, after: Int64? = nil, handshakeLimit: TimeAmount = handshakeLimit,
        onText: @escaping @Sendable (String) -> Void
    ) async throws -> BenchSocket {
        guard let parsed = URL(string: url), let host = parsed.host, let port = parsed.port else {
            throw BenchAPI.Failure(description: "not a WebSocket URL with a host and a port: \(url)")
        }
        let hello = try WireFormat.encoder().encode(ClientFrame.hello(token: token, after: after))
        let welcome = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: Bool.self)
        // Every path answers `welcome` (a promise left unanswered is a bug NIO reports): the frame
        // handler with the first text frame or when the connection ends, the lines below otherwise,
        // and at the latest `handshakeLimit` after the start (a promise answers once; later answers
        // are ignored), so no connect waits for ever.
        // At the limit the connection is closed too: a server that never answers the upgrade would
        // otherwise hold it, and this call, open.
        let opened = OpenedChannel(), upgradedInTime = welcome.futureResult.eventLoop.makePromise(of: (any Channel)?.self)
        let limit = welcome.futureResult.eventLoop.scheduleTask(in: handshakeLimit) {
            welcome.succeed(false)
            upgradedInTime.fail(BenchAPI.Failure(description: "no WebSocket handshake within \(handshakeLimit.nanoseconds / 1_000_000) ms"))
            opened.close()
        }
        welcome.futureResult.whenComplete { _ in limit.cancel() }
        do {
            let upgraded = try await Self.upgrade(host: host, port: port, path: parsed.path, welcome: welcome, opened: opened, onText: onText)
            upgraded.cascade(to: upgradedInTime)
        } catch {
            welcome.succeed(false)
            upgradedInTime.fail(error)
            throw error
        }
        let channel: any Channel
        do {
            guard let upgradedChannel = try await upgradedInTime.futureResult.get() else {
                throw BenchAPI.Failure(description: "the server refused the WebSocket upgrade")
            }
            channel = upgradedChannel
        } catch {
            welcome.succeed(false)
            throw error
        }
        let socket = BenchSocket(channel: channel)
        socket.write(ByteBuffer(bytes: hello))
        guard try await welcome.futureResult.get() else {
            socket.close()  // past the limit, the limit has closed the connection already
            throw BenchAPI.Failure(description: "WebSocket hello was refused or the connection failed")
        }
        return socket
    }

    /// How long a connect may take, from its start to `welcome`.
    public static let handshakeLimit = TimeAmount.seconds(10)

    private static func upgrade(
        host: String, port: Int, path: String, welcome: EventLoopPromise<Bool>, opened: OpenedChannel,
        onText: @escaping @Sendable (String) -> Void
    ) async throws -> EventLoopFuture<(any Channel)?> {
        try await ClientBootstrap(group: .singletonMultiThreadedEventLoopGroup)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .connect(host: host, port: port) { channel in
                opened.set(channel)
                return channel.eventLoop.makeCompletedFuture {
                    let upgrader = NIOTypedWebSocketClientUpgrader<(any Channel)?>(maxFrameSize: 1 << 20) { channel, _ in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandlers(
                                NIOWebSocketFrameAggregator(minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 1 << 10, maxAccumulatedFrameSize: 1 << 20),
                                BenchFrameHandler(welcome: welcome, onText: onText))
                            return channel
                        }
                    }
                    var headers = HTTPHeaders()
                    headers.add(name: "Host", value: "\(host):\(port)")
                    headers.add(name: "Content-Length", value: "0")
                    let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path.isEmpty ? "/" : path, headers: headers)
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                        configuration: .init(
                            upgradeConfiguration: .init(
                                upgradeRequestHead: head, upgraders: [upgrader],
                                notUpgradingCompletionHandler: { channel in channel.close().map { nil } })))
                }
            }
    }

    private init(channel: any Channel) { self.channel = channel }

    public func send(_ frame: ClientFrame) {
        if let data = try? WireFormat.encoder().encode(frame) { write(ByteBuffer(bytes: data)) }
    }

    /// Sends a frame already encoded as JSON text.
    public func send(text json: String) { write(ByteBuffer(string: json)) }

    /// Says goodbye with a close frame; the server answers and the connection ends.
    public func close() {
        channel.triggerUserOutboundEvent(BenchFrameHandler.Goodbye(), promise: nil)
    }

    /// Waits until the connection has ended (at most 5 s after `close()`; then it is cut).
    public func closed() async {
        let cut = channel.eventLoop.scheduleTask(in: .seconds(5)) { self.channel.close(promise: nil) }
        try? await channel.closeFuture.get()
        cut.cancel()
    }

    private func write(_ json: ByteBuffer) {
        let frame = WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: json)
        channel.writeAndFlush(frame, promise: nil)
    }
}

/// The connection a connect opened, for its handshake limit to close.
private final class OpenedChannel: Sendable {
    private let channel = Mutex<(any Channel)?>(nil)
    func set(_ opened: any Channel) { channel.withLock { $0 = opened } }
    func close() { channel.withLock { $0 }?.close(promise: nil) }
}

/// Text frames to `onText`; the first one answers whether the server said `welcome`. Pings are
/// answered. A close frame ends the connection, answered with one unless this side said goodbye
/// first (``Goodbye``: a close frame is sent once per connection).
private final class BenchFrameHandler: ChannelDuplexHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    /// Asks the handler to send the close frame.
    struct Goodbye: Sendable {}

    private let welcome: EventLoopPromise<Bool>
    private let onText: @Sendable (String) -> Void
    private var welcomed = false
    private var saidGoodbye = false

    init(welcome: EventLoopPromise<Bool>, onText: @escaping @Sendable (String) -> Void) {
        self.welcome = welcome
        self.onText = onText
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            let text = String(buffer: frame.unmaskedData)
            if !welcomed {
                welcomed = true
                welcome.succeed(text.contains(#""type":"welcome""#))
            }
            onText(text)
        case .ping:
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)), promise: nil)
        case .connectionClose:
            let channel = context.channel
            guard !saidGoodbye else { return context.close(promise: nil) }
            saidGoodbye = true
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: frame.unmaskedData)))
                .whenComplete { _ in channel.close(promise: nil) }
        default:
            break
        }
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is Goodbye else { return context.triggerUserOutboundEvent(event, promise: promise) }
        guard !saidGoodbye else {
            promise?.succeed()
            return
        }
        saidGoodbye = true
        context.writeAndFlush(
            wrapOutboundOut(
                WebSocketFrame(
                    fin: true, opcode: .connectionClose, maskKey: .random(),
                    data: ByteBuffer(integer: UInt16(1000)))), promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        welcome.succeed(false)
        context.fireChannelInactive()
    }

    /// A server killed while it answered the upgrade can close the connection before this handler
    /// is in place: it then never sees `channelInactive`, and `welcome` must be answered here.
    func handlerAdded(context: ChannelHandlerContext) {
        if !context.channel.isActive { welcome.succeed(false) }
    }
}
