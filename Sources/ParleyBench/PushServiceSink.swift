import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A push service for the bench, on loopback: takes every `POST /push/<n>` with 201 and notes when
/// push `n` arrived. It does not decrypt (the server's encryption is tested elsewhere): the bench
/// measures what sending pushes costs the server.
public final class PushServiceSink: Sendable {
    public let port: Int
    private let channel: any Channel
    private let arrivals = Arrivals()

    /// When each push arrived, and its body, by target.
    final class Arrivals: Sendable {
        let times = Mutex<[Int: [UInt64]]>([:])
        let bodies = Mutex<[Int: [[UInt8]]]>([:])
    }

    public init() async throws {
        let arrivals = self.arrivals
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(Handler(arrivals: arrivals))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = channel.localAddress?.port ?? 0
    }

    /// Arrival times (``BenchClock`` µs) of the pushes to target `n`.
    public func arrivals(of target: Int) -> [UInt64] { arrivals.times.withLock { $0[target] ?? [] } }
    /// The bodies of the pushes to target `n`, as received (encrypted).
    public func bodies(of target: Int) -> [[UInt8]] { arrivals.bodies.withLock { $0[target] ?? [] } }
    public var total: Int { arrivals.times.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    public func close() async { try? await channel.close() }

    private final class Handler: ChannelInboundHandler, Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let arrivals: Arrivals
        private let target = Mutex<(index: Int?, body: [UInt8])>((nil, []))

        init(arrivals: Arrivals) { self.arrivals = arrivals }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                target.withLock { $0 = (head.uri.split(separator: "/").last.flatMap { Int($0) }, []) }
            case .body(let buffer):
                target.withLock { $0.body += buffer.readableBytesView }
            case .end:
                let (index, body) = target.withLock { $0 }
                if let index {
                    let now = BenchClock.nowMicros()
                    arrivals.times.withLock { $0[index, default: []].append(now) }
                    arrivals.bodies.withLock { $0[index, default: []].append(body) }
                }
                let head = HTTPResponseHead(version: .http1_1, status: .created, headers: ["Content-Length": "0"])
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }
}
