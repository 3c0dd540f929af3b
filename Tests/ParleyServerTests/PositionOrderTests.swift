import ParleyCore
@testable import ParleyServer
import Testing

/// ``ClientConnection/Outbound/inPositionOrder(_:)``: what a writer takes from its queue is written
/// in stream order, so acks stand in for the sender's own events.
@Suite struct PositionOrderTests {
    typealias Outbound = ClientConnection.Outbound

    static func ack(_ position: Int64?) -> Outbound {
        let (a, b) = (UserID.random(), UserID.random())
        let message = Message(
            id: .random(), conversationId: .direct(a, b), seq: 1, senderId: a, clientId: .random(), text: "x", createdAt: .now())
        return .sent(ref: nil, message: message, duplicate: false, step: position.map { StreamStep(position: $0, previous: $0 - 1) })
    }

    static func events(_ positions: Int64...) -> Outbound {
        .events(positions.map { EncodedEvent(position: $0, text: "e\($0)") })
    }

    /// What a batch says, item by item: `e5` an event, `a4` an ack at 4, `a-` one without, `f` a frame.
    static func describe(_ items: [Outbound]) -> [String] {
        items.map { item in
            switch item {
            case .events(let events): events.map { "e\($0.position)" }.joined(separator: ",")
            case .sent(_, _, _, let step): "a" + (step.map { String($0.position) } ?? "-")
            case .frame: "f"
            case .catchUp: "c"
            }
        }
    }

    @Test func anOrderedBatchIsLeftAsItIs() {
        let items = [Self.events(1, 2), Self.ack(3), .frame(.pong(ref: nil)), Self.events(4)]
        #expect(Self.describe(Outbound.inPositionOrder(items)) == ["e1,e2", "a3", "f", "e4"])
    }

    /// The other member's events were queued before the sender's acks that precede them in the stream:
    /// each moves right behind the last of those acks; the answers (the pong, the acks) stay in the
    /// order queued, and an event no ack needs moved stays where it was.
    @Test func laterEventsMoveBehindAcksAndAnswersKeepTheirOrder() {
        let items = [Self.events(6, 8), .frame(.pong(ref: nil)), Self.ack(5), Self.ack(7), Self.ack(nil)]
        #expect(Self.describe(Outbound.inPositionOrder(items)) == ["f", "a5", "e6", "a7", "e8", "a-"])
        let typing = ClientConnection.Outbound.frame(.typing(conversationId: .direct(.random(), .random()), userId: .random(), isTyping: true))
        let kept = [Self.events(3), typing, Self.events(10), Self.ack(9), Self.ack(nil)]
        #expect(Self.describe(Outbound.inPositionOrder(kept)) == ["e3", "f", "a9", "e10", "a-"])
    }

    /// The sender's ack was queued before the other member's events committed ahead of it: those go
    /// before the ack (written after it, each would be fetched from the store first).
    @Test func earlierEventsQueuedAfterAnAckGoBeforeIt() {
        let items = [Self.ack(7), .frame(.pong(ref: nil)), Self.events(5, 6), Self.events(8)]
        #expect(Self.describe(Outbound.inPositionOrder(items)) == ["e5", "e6", "a7", "f", "e8"])
    }

    /// Two sends refused (the database was restarting) and a third stored: its ack, at a position
    /// before an event queued ahead of it, still comes after the first two's errors (a cluster node
    /// once answered the third first).
    @Test func anAckNeverOvertakesTheAnswersToFramesBeforeIt() {
        let refused = ClientConnection.Outbound.frame(.error(ref: "1", clientId: nil, code: .storageUnavailable, message: "x"))
        let items = [Self.events(10), refused, refused, Self.ack(9)]
        #expect(Self.describe(Outbound.inPositionOrder(items)) == ["f", "f", "a9", "e10"])
    }

    /// Repeats (a replayed event queued live as well) keep their order; the writer skips the second.
    @Test func repeatedPositionsStayInTheOrderQueued() {
        let items = [Self.events(3), Self.events(2), Self.events(3), Self.ack(1)]
        #expect(Self.describe(Outbound.inPositionOrder(items)) == ["a1", "e2", "e3", "e3"])
    }
}
