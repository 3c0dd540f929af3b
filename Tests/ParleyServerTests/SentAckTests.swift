import Foundation
import ParleyCore
import Testing
import ParleyStore

/// Resume rule 5 (``RealtimeGateway``): the connection a message was sent on gets its `sent` ack
/// with the message's stream position instead of a separate event; the sender's other
/// connections get the event. Positions still arrive one by one, and resuming from any of them
/// loses nothing.
@Suite struct SentAckTests {
    /// The positions a socket was given, from events and from acks that stand in for them.
    static func positions(_ frames: [ServerFrame]) -> [Int64] {
        frames.compactMap { frame in
            switch frame {
            case .event(let event): event.position
            case .sent(_, _, _, let position?): position
            default: nil
            }
        }
    }

    @Test func acksStandInForTheSendersOwnEventsAndInterleavingLosesNothing() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let conversation = try await api.send("hi", from: bob, to: alice).conversationId
            let phone = try await api.socket(alice, after: 0), laptop = try await api.socket(alice, after: 0)
            let b = try await api.socket(bob)
            _ = try await phone.synced()
            _ = try await laptop.synced()
            // Alice sends from her phone while bob writes to her: her stream interleaves her own
            // messages and his.
            for index in 1...40 {
                phone.send(.send(SendRequest(clientId: .random(), conversationId: conversation, text: "a\(index)")))
                b.send(.send(SendRequest(clientId: .random(), conversationId: conversation, text: "b\(index)")))
            }
            let acks = try await phone.sentAcks(count: 40)
            #expect(acks.map(\.message.text) == (1...40).map { "a\($0)" }, "acked in the order sent")
            // Bob's frames are handled in order: after his pong, all of them are committed.
            b.send(.ping(ref: "bob done"))
            _ = try await b.inbox.waitFor("bob's pong") { $0.contains(.pong(ref: "bob done")) ? true : nil }
            let head = try await api.store.streamHead(of: alice.id)
            #expect(head == 1 + 1 + 40 + 40, "conversation, hi, 40 + 40 messages")
            phone.send(.ping(ref: "end"))
            _ = try await phone.inbox.waitFor("the rest") { $0.contains(.pong(ref: "end")) && Self.positions($0).last == head ? true : nil }

            let onPhone = await phone.inbox.frames
            #expect(Self.positions(onPhone) == Array(1...head), "every position once, in order, on the phone")
            // While bob writes, an ack may find its own event already fetched in a catch-up (another
            // event came first) and go without a position (rule 5); either way each own message once.
            let withPosition = onPhone.filter { if case .sent(_, _, _, _?) = $0 { true } else { false } }.count
            let ownEvents = onPhone.filter { if case .event(let e) = $0, case .message(let m) = e.payload { m.senderId == alice.id } else { false } }
            #expect(withPosition + ownEvents.count == 40, "each own message once: as an ack with its position, or as an event")

            _ = try await laptop.inbox.waitFor("laptop at head") { Self.positions($0).last == head ? true : nil }
            let onLaptop = await laptop.inbox.frames
            #expect(Self.positions(onLaptop) == Array(1...head), "the other device gets every event")
            let mineOnLaptop = onLaptop.compactMap {
                if case .event(let e) = $0, case .message(let m) = e.payload, m.senderId == alice.id { m.text } else { nil }
            }
            #expect(mineOnLaptop == (1...40).map { "a\($0)" })

            // With nothing else in her stream, every ack stands in for its event: it carries the
            // next position, and no event of her own follows.
            let before = await phone.inbox.frames.count
            for index in 1...5 {
                phone.send(.send(SendRequest(clientId: .random(), conversationId: conversation, text: "alone \(index)")))
            }
            _ = try await phone.sentAcks(count: 45)
            phone.send(.ping(ref: "alone"))
            _ = try await phone.inbox.waitFor("pong") { $0.contains(.pong(ref: "alone")) ? true : nil }
            let alone = Array(await phone.inbox.frames.dropFirst(before))
            let ackPositions = alone.compactMap { frame -> Int64? in if case .sent(_, _, _, let p?) = frame { p } else { nil } }
            #expect(ackPositions == Array(head + 1...head + 5), "each ack carries its position")
            #expect(Self.positions(alone) == ackPositions, "and no event stands beside it")

            // Resuming from a position the phone got from an ack replays what follows, nothing twice.
            let resumed = try await api.socket(alice, after: head + 2)
            _ = try await resumed.synced()
            #expect(Self.positions(await resumed.inbox.frames) == Array(head + 3...head + 5))
        }
    }

    @Test func aDuplicateSendIsAckedWithoutAPositionAndNoEvent() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let a = try await api.socket(alice, after: 0)
            _ = try await a.synced()
            let request = SendRequest(clientId: .random(), recipientId: bob.id, text: "once")
            a.send(.send(request))
            a.send(.send(request))
            let acks = try await a.sentAcks(count: 2)
            #expect(acks.map(\.duplicate) == [false, true])
            let frames = await a.inbox.frames
            let positions = frames.compactMap { frame -> Int64?? in if case .sent(_, _, _, let p) = frame { .some(p) } else { nil } }
            #expect(positions.count == 2 && positions[0] != nil && positions[1] == nil)
            // The conversation event came first (position 1), then the ack for the message (2).
            #expect(Self.positions(frames) == [1, 2])
        }
    }
}
