import NIOCore
import Synchronization

/// Counts open connections per client address, so one address cannot take every file descriptor.
/// Trusted proxies are exempt: many clients legitimately share their address.
final class ConnectionCounter: Sendable {
    private let counts = Mutex<[String: Int]>([:])
    let limitPerAddress: Int
    let trustedProxies: TrustedProxies

    init(limitPerAddress: Int, trustedProxies: TrustedProxies) {
        self.limitPerAddress = limitPerAddress
        self.trustedProxies = trustedProxies
    }

    /// Takes a slot for `address`; false when the address already holds its limit.
    func admit(_ address: String) -> Bool {
        if trustedProxies.isTrusted(address) { return true }
        return counts.withLock { counts in
            let open = counts[address, default: 0]
            guard open < limitPerAddress else { return false }
            counts[address] = open + 1
            return true
        }
    }

    func release(_ address: String) {
        if trustedProxies.isTrusted(address) { return }
        counts.withLock { counts in
            let open = counts[address, default: 0] - 1
            counts[address] = open > 0 ? open : nil
        }
    }
}

/// What the two guards of one connection share. Both run on the connection's event loop.
final class ConnectionGuardState {
    /// Set when the server answered `101 Switching Protocols`: from then on the bytes are WebSocket frames.
    var upgraded = false
    /// Whether the client sent anything since the last response ended (a timeout then answers 408;
    /// an idle connection, a browser's preconnect, is closed without a word).
    var requestStarted = false
}

/// The first handler of every connection (raw bytes): admission by address, and, once the
/// connection is a WebSocket, the masking rule of RFC 6455 §5.1 (a client frame without a mask is
/// answered with close 1002 and the connection is dropped).
final class ConnectionAdmission: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private let counter: ConnectionCounter
    private let state: ConnectionGuardState
    private var admittedAddress: String?
    private var maskCheck = WebSocketMaskCheck()

    init(counter: ConnectionCounter, state: ConnectionGuardState) {
        self.counter = counter
        self.state = state
    }

    func channelActive(context: ChannelHandlerContext) {
        let address = context.channel.remoteAddress?.ipAddress ?? "unknown"
        guard counter.admit(address) else {
            let refusal = "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 10\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(wrapOutboundOut(.byteBuffer(ByteBuffer(string: refusal)))).whenComplete { _ in
                loopBound.value.endQuietly()
            }
            return
        }
        admittedAddress = address
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let admittedAddress { counter.release(admittedAddress) }
        admittedAddress = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard admittedAddress != nil else { return }
        state.requestStarted = true
        if state.upgraded, !maskCheck.feed(unwrapInboundIn(data)) {
            // Close frame, code 1002 (protocol error), then drop the connection.
            let close = ByteBuffer(bytes: [0x88, 0x02, 0x03, 0xEA])
            context.writeAndFlush(wrapOutboundOut(.byteBuffer(close))).whenComplete { [channel = context.channel] _ in
                channel.close(promise: nil)
            }
            admittedAddress.map(counter.release)
            admittedAddress = nil
            return
        }
        context.fireChannelRead(data)
    }
}

/// Follows WebSocket frame boundaries in a byte stream to check that every client frame is masked.
struct WebSocketMaskCheck {
    private var header: [UInt8] = []
    private var payloadLeft: UInt64 = 0

    /// Consumes `buffer`; false as soon as an unmasked frame header is seen.
    mutating func feed(_ buffer: ByteBuffer) -> Bool {
        var bytes = buffer.readableBytesView[...]
        while !bytes.isEmpty {
            if payloadLeft > 0 {
                let skip = Int(min(payloadLeft, UInt64(bytes.count)))
                bytes = bytes.dropFirst(skip)
                payloadLeft -= UInt64(skip)
                continue
            }
            header.append(bytes.removeFirst())
            guard header.count >= 2 else { continue }
            guard header[1] & 0x80 != 0 else { return false }
            let length7 = header[1] & 0x7F
            let extended = length7 == 126 ? 2 : length7 == 127 ? 8 : 0
            guard header.count == 2 + extended + 4 else { continue }
            payloadLeft =
                extended == 0
                ? UInt64(length7) : header[2..<(2 + extended)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            header.removeAll(keepingCapacity: true)
        }
        return true
    }
}
