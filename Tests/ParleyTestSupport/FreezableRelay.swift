import NIOCore
import NIOPosix
import Synchronization

/// A TCP relay in front of the server that can be frozen: it stops forwarding in both directions
/// without closing anything, as a dead network, a NAT that dropped the mapping, or a laptop asleep
/// would. Bytes wait in the socket buffers; new connections are accepted and go nowhere.
public final class FreezableRelay: Sendable {
    public let port: Int
    private let listener: any Channel
    private let state: RelayState

    final class RelayState: Sendable {
        let frozen = Atomic<Bool>(false)
        let channels = Mutex<[any Channel]>([])
        /// Bytes read just as the freeze began (a read already under way), held until the thaw.
        let held = Mutex<[(any Channel, ByteBuffer)]>([])
    }

    public init(to targetPort: Int) async throws {
        let state = RelayState()
        let group = MultiThreadedEventLoopGroup.singleton
        listener = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { inbound in
                inbound.setOption(.autoRead, value: !state.frozen.load(ordering: .relaxed)).flatMap {
                    ClientBootstrap(group: inbound.eventLoop)
                        .channelInitializer { outbound in
                            outbound.eventLoop.makeCompletedFuture {
                                try outbound.pipeline.syncOperations.addHandler(Forward(to: inbound, state: state))
                            }
                        }
                        .connect(host: "127.0.0.1", port: targetPort)
                }.flatMap { outbound in
                    state.channels.withLock { $0 += [inbound, outbound] }
                    // The outbound channel runs on the inbound one's loop, so this closure is on it too.
                    return outbound.setOption(.autoRead, value: !state.frozen.load(ordering: .relaxed)).flatMapThrowing {
                        try inbound.pipeline.syncOperations.addHandler(Forward(to: outbound, state: state))
                    }
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = listener.localAddress?.port ?? 0
        self.state = state
    }

    /// Stops forwarding (reading) on every connection, now and for new ones.
    public func freeze() async {
        state.frozen.store(true, ordering: .relaxed)
        for channel in state.channels.withLock({ $0 }) { try? await channel.setOption(.autoRead, value: false).get() }
    }

    /// Forwards again, including what waited meanwhile.
    public func thaw() async {
        state.frozen.store(false, ordering: .relaxed)
        for (peer, bytes) in state.held.withLock({ held in
            defer { held = [] }; return held
        }) { peer.writeAndFlush(bytes, promise: nil) }
        for channel in state.channels.withLock({ $0 }) {
            try? await channel.setOption(.autoRead, value: true).get()
            channel.read()
        }
    }

    public func close() async {
        try? await listener.close()
        for channel in state.channels.withLock({ $0 }) { try? await channel.close() }
    }

    /// Copies bytes to the other side; closing one side closes the other.
    private final class Forward: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let peer: any Channel
        let state: RelayState
        init(to peer: any Channel, state: RelayState) {
            self.peer = peer
            self.state = state
        }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = unwrapInboundIn(data)
            if state.frozen.load(ordering: .relaxed) {
                state.held.withLock { $0.append((peer, bytes)) }
            } else {
                peer.writeAndFlush(bytes, promise: nil)
            }
        }
        func channelInactive(context: ChannelHandlerContext) {
            peer.close(promise: nil)
            context.fireChannelInactive()
        }
        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
