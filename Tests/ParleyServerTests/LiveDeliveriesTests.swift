import Logging
import NIOCore
import NIOPosix
import ParleyCore
@testable import ParleyServer
import ParleyStore
import Synchronization
import Testing

/// ``LiveDeliveries`` rule 1: a connection on another event loop gets a publish's events before a
/// frame sent to it afterwards from the same thread, however late its loop runs them.
@Suite struct LiveDeliveriesTests {
    @Test func aFrameSentAfterAPublishComesAfterItsEvents() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let hub = ConnectionHub(typingTimeoutSeconds: 5, metrics: ServerMetrics(), logger: Logger(label: "test"))
        let user = UserID.random()
        let connection = ClientConnection(userId: user, queueLimit: 10, eventLoop: loop)
        let writer = RecordingWriter()
        connection.beginWriting(writer)
        _ = connection.takeQueued()  // the first run is over: the connection is idle
        _ = hub.attach(connection)
        // The connection's loop is busy until the test lets it go: what is handed to it waits.
        let busy = Mutex(true)
        loop.execute { while busy.withLock({ $0 }) { usleep(1_000) } }
        let message = Message(
            id: .random(), conversationId: .direct(user, .random()), seq: 1, senderId: user, clientId: .random(), text: "hi",
            createdAt: Timestamp(milliseconds: 1))
        hub.publish([Delivery(recipient: user, event: StreamEvent(position: 1, payload: .message(message)))])
        hub.sendLocally(.pong(ref: "after"), to: [user])
        #expect(writer.log.isEmpty, "nothing reached the connection while its loop was busy")
        busy.withLock { $0 = false }
        try await loop.submit {}.get()
        #expect(writer.log == ["event 1", "run"], "the event was written at once, then the frame started a run")
        guard case .frame(.pong("after"))? = connection.takeQueued().items.first else {
            Issue.record("the frame is queued")
            return
        }
        try await group.shutdownGracefully()
    }
}
