import Logging
import NIOCore
import NIOEmbedded
import ParleySQLite
@testable import ParleyServer
import ParleyTestSupport
import Testing

/// A WebSocket's handler and its ``ConnectionLifecycle`` hold each other (the lifecycle writes whole
/// frames through the handler): once the socket is gone, neither is kept, or every connection ever
/// made would stay in memory with its channel.
@Suite struct ConnectionLifecycleTests {
    @Test func aClosedSocketLetsGoOfItsConnectionState() async throws {
        let store = try SQLiteStore(path: TestServer.temporaryDatabase())
        let server = ServerContext(configuration: .forTests(), store: store, bus: nil, logger: Logger(label: "test"))
        let gateway = RealtimeGateway(
            store: store, hub: server.hub, messenger: server.messenger, typingLimiter: server.typingLimiter, configuration: server.configuration)
        let channel = EmbeddedChannel()
        weak var state: ConnectionLifecycle?
        do {
            let lifecycle = gateway.start(channel: channel, logger: server.logger)
            state = lifecycle
            try channel.pipeline.syncOperations.addHandler(WebSocketChannelHandler(session: lifecycle))
        }
        #expect(state != nil, "the socket's handler holds it while the socket is open")
        try await channel.close()
        channel.embeddedEventLoop.run()  // the pipeline lets go of its handlers
        #expect(state == nil)
        try await store.close()
    }
}
