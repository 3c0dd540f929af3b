import NIOCore
import NIOPosix
import Synchronization

/// A plain TCP connection for tests that speak bytes the HTTP clients would never send: malformed
/// requests, half-sent heads, hand-made WebSocket frames. It may come from any loopback address
/// (127.0.0.2, …), which lets a test play several clients on one machine.
struct RawConnection: Sendable {
    let channel: any Channel
    private let received: Received

    final class Received: Sendable {
        private let state = Mutex<(bytes: [UInt8], closed: Bool)>(([], false))
        func append(_ buffer: ByteBuffer) { state.withLock { $0.bytes += buffer.readableBytesView } }
        func close() { state.withLock { $0.closed = true } }
        var snapshot: (bytes: [UInt8], closed: Bool) { state.withLock { $0 } }
    }

    private final class Collector: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let received: Received
        init(_ received: Received) { self.received = received }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) { received.append(unwrapInboundIn(data)) }
        func channelInactive(context: ChannelHandlerContext) { received.close() }
        func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
    }

    /// - Parameter receiveBuffer: the socket's receive buffer (`SO_RCVBUF`), to make a client that
    ///   stops reading fill up quickly.
    static func open(port: Int, from source: String = "127.0.0.1", receiveBuffer: Int? = nil) async throws -> RawConnection {
        let received = Received()
        var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        if let receiveBuffer { bootstrap = bootstrap.channelOption(.socketOption(.so_rcvbuf), value: .init(receiveBuffer)) }
        let channel =
            try await bootstrap
            .bind(to: try SocketAddress(ipAddress: source, port: 0))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Collector(received)) }
            }
            .connect(host: "127.0.0.1", port: port).get()
        return RawConnection(channel: channel, received: received)
    }

    func send(_ bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(ByteBuffer(bytes: bytes)).get()
    }

    func send(_ text: String) async throws { try await send(Array(text.utf8)) }

    var text: String { String(decoding: received.snapshot.bytes, as: UTF8.self) }
    var bytes: [UInt8] { received.snapshot.bytes }
    var isClosed: Bool { received.snapshot.closed }

    /// Waits until `condition` holds for what was received (and whether the server closed); fails
    /// after `timeout`, a hang guard rather than a timing check.
    func wait(_ what: String, timeout: Duration = .seconds(15), until condition: (String, Bool) -> Bool) async throws {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline {
            let (bytes, closed) = received.snapshot
            if condition(String(decoding: bytes, as: UTF8.self), closed) { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TestFailure("timed out waiting for \(what); received \(text.prefix(200).debugDescription), closed: \(isClosed)")
    }

    /// Waits for the server to close the connection.
    func waitUntilClosed(timeout: Duration = .seconds(15)) async throws {
        try await wait("the server to close", timeout: timeout) { _, closed in closed }
    }

    func close() async { try? await channel.close() }

    /// Shuts this side's output (a TCP FIN, no WebSocket close frame) and goes on reading, as a
    /// client that went away without saying goodbye looks to the server.
    func shutdownOutput() async throws { try await channel.close(mode: .output) }

    /// Stops reading from the socket (the kernel buffers fill, then the server's writes block), or
    /// reads again at full speed.
    func setReading(_ on: Bool) async throws {
        try await channel.setOption(.autoRead, value: on).get()
        if on { channel.read() }
    }

    /// Reads about `bytesPerSecond` (in 1 KiB reads) until `until` says stop.
    func readSlowly(bytesPerSecond: Int, until stop: @Sendable () async -> Bool) async throws {
        try await channel.setOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 1024)).get()
        // Few buffers per read(): NIO otherwise reads up to `maxMessagesPerRead` of them (8 KiB), and
        // "20 KB/s" read 160 KB/s, about what a loaded machine's flood sends.
        try await channel.setOption(.maxMessagesPerRead, value: 1).get()
        try await channel.setOption(.autoRead, value: false).get()
        let pause = Duration.milliseconds(max(1, 1_000 * 1024 / bytesPerSecond))
        while await !stop(), !isClosed {
            channel.read()
            try await Task.sleep(for: pause)
        }
    }

    /// Performs a WebSocket handshake on `/v1/ws`.
    func upgradeToWebSocket() async throws {
        try await send(
            "GET /v1/ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        try await wait("101 Switching Protocols") { text, _ in text.contains("\r\n\r\n") }
        guard text.hasPrefix("HTTP/1.1 101") else { throw TestFailure("no upgrade: \(text.prefix(100))") }
    }

    /// One WebSocket text frame (under 64 KiB), masked as a client must (RFC 6455 §5.1) unless
    /// `masked` is false.
    static func textFrame(_ text: String, masked: Bool = true) -> [UInt8] {
        frame(opcode: 0x1, payload: Array(text.utf8), masked: masked)
    }

    /// One client frame (payloads under 64 KiB): `opcode` 0x0 continuation, 0x1 text, 0x8 close, 0x9 ping.
    static func frame(opcode: UInt8, fin: Bool = true, payload: [UInt8], masked: Bool = true) -> [UInt8] {
        let length: [UInt8] =
            payload.count < 126
            ? [UInt8(payload.count)] : [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        let first = (fin ? 0x80 : 0) | opcode
        guard masked else { return [first] + length + payload }
        let key: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        return [first, 0x80 | length[0]] + length.dropFirst() + key + payload.enumerated().map { $1 ^ key[$0 % 4] }
    }
}
