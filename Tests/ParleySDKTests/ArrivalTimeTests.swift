import Foundation
import ParleyCore
import ParleySDK
import Synchronization
import Testing

/// ``Heartbeat`` rule 2 through the client: an answer counts when it came off the socket, so a
/// client busy with a backlog of frames is not taken for a dead line.
@MainActor
@Suite struct ArrivalTimeTests {
    /// Pings after 200 ms of silence (the watchdog looks every 50 ms), dead after 1 s unanswered.
    static let quick = Heartbeat(idleInterval: .milliseconds(200), timeout: .seconds(1))

    @Test func framesThatArrivedButAreNotHandledYetKeepTheLineAlive() async throws {
        let fixture = Fixture()
        // From the first ping on, frames come off the socket (the ping's answer among them) and
        // none reaches the client's handler.
        fixture.transport.backlogFromFirstPing.withLock { $0 = true }
        let client = try fixture.makeClient(heartbeat: Self.quick)
        let connection = try await fixture.connect(client)
        let opened = fixture.transport.connections.withLock { $0.count }

        _ = try await eventually("a ping") { connection.sent.contains { if case .ping = $0 { true } else { false } } ? true : nil }
        let pinged = ContinuousClock.now
        // Gate: the watchdog has looked twice after the ping's answer was overdue.
        _ = try await eventually("the watchdog past the timeout") { ContinuousClock.now - pinged > Self.quick.timeout ? true : nil }
        let reads = connection.arrivalReads.withLock { $0 }
        _ = try await eventually("two more looks, or the line dropped") {
            connection.arrivalReads.withLock { $0 } >= reads + 2 || fixture.transport.connections.withLock { $0.count } > opened ? true : nil
        }
        #expect(client.connectionState == .online)
        #expect(fixture.transport.connections.withLock { $0.count } == opened, "the line was not dropped")

        // The control: nothing arrives any more, and the same watchdog finds the line dead.
        connection.arrivingNow.withLock { $0 = false }
        _ = try await eventually("a new connection") { fixture.transport.connections.withLock { $0.count } > opened ? true : nil }
        client.stop()
    }
}
