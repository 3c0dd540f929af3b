import Foundation
import ParleyCore
import ParleyStore
import Testing

/// Resume rules 3 and 5 (``RealtimeGateway``): what is committed but never published (written to
/// the store behind the hub's back) is a gap; the connection's writer fetches it from the store
/// before the live event or ack that reveals it, and an ack then still carries its position.
@Suite struct StreamGapTests {
    /// Alice and bob share a conversation; `listener` (one of them) is connected and synced at
    /// `head`; then `count` messages from alice to bob are stored without the hub hearing of them:
    /// nothing is queued to any connection, so the socket's next item finds a gap.
    static func gapAhead(
        unpublished count: Int, listening listener: (_ alice: Account, _ bob: Account) -> Account, api: TestAPI
    ) async throws -> (alice: Account, bob: Account, socket: TestSocket, head: Int64) {
        let alice = try await api.register("alice"), bob = try await api.register("bob")
        _ = try await api.send("hello", from: alice, to: bob)
        let socket = try await api.socket(listener(alice, bob))
        let head = try await socket.synced()
        for index in 1...count {
            _ = try await api.store.send(
                NewMessage(sender: alice.id, clientId: .random(), target: .user(bob.id), text: "unpublished \(index)"), now: .now())
        }
        return (alice, bob, socket, head)
    }

    /// The texts of the message events among `frames`, in order.
    static func messageTexts(_ frames: [ServerFrame]) -> [String] {
        frames.compactMap { frame in
            if case .event(let event) = frame, case .message(let message) = event.payload { message.text } else { nil }
        }
    }

    @Test func aLiveEventBeyondTheNextPositionFetchesTheGapFirst() async throws {
        try await TestServer.run { api in
            let (alice, bob, b, head) = try await Self.gapAhead(unpublished: 3, listening: { $1 }, api: api)
            _ = try await api.send("live", from: alice, to: bob)  // published at head + 4
            _ = try await api.send("after", from: alice, to: bob)  // head + 5, nothing missing before it
            let texts = try await b.inbox.waitFor("five events") { frames -> [String]? in
                let texts = Self.messageTexts(frames)
                return texts.count >= 5 ? texts : nil
            }
            #expect(texts == ["unpublished 1", "unpublished 2", "unpublished 3", "live", "after"])
            #expect(SentAckTests.positions(await b.inbox.frames) == Array(head + 1...head + 5), "every position once, in order")
        }
    }

    @Test func anAckBeyondTheNextPositionFetchesTheGapThenCarriesItsPosition() async throws {
        try await TestServer.run { api in
            let (_, bob, a, head) = try await Self.gapAhead(unpublished: 2, listening: { alice, _ in alice }, api: api)
            a.send(.send(SendRequest(clientId: .random(), recipientId: bob.id, text: "mine")))
            _ = try await a.sentAcks(count: 1)
            let frames = await a.inbox.frames
            let ackPosition = frames.compactMap { frame -> Int64?? in if case .sent(_, _, _, let p) = frame { .some(p) } else { nil } }.first
            #expect(ackPosition == head + 3, "the ack stands in for its event once the gap is written")
            #expect(SentAckTests.positions(frames) == Array(head + 1...head + 3))
            #expect(Self.messageTexts(frames) == ["unpublished 1", "unpublished 2"], "the gap came from the store, before the ack")
        }
    }

    /// In a group, positions skip (one position for all its members, past the furthest member's
    /// head): each live event names the position before it, so the gap is still seen and fetched,
    /// and the group's messages stored once come back from the store through the member's span.
    @Test func inAGroupWhosePositionsSkipALiveEventStillFetchesTheGapFirst() async throws {
        try await TestServer.run { api in
            let ada = try await api.register("ada"), grace = try await api.register("grace"), alan = try await api.register("alan")
            for friend in [grace, alan] {
                _ = try await api.send("hi", from: ada, to: friend)
                _ = try await api.send("hi!", from: friend, to: ada)
            }
            for index in 0..<4 { _ = try await api.send("grace \(index)", from: ada, to: grace) }  // Grace's stream runs ahead
            let group = try await api.store.createGroup(
                NewGroup(creator: ada.id, clientId: .random(), title: "Three", memberIds: [grace.id, alan.id], maxMembers: 256), now: .now()
            ).conversationId
            let socket = try await api.socket(alan)
            let head = try await socket.synced()
            for index in 1...2 {
                _ = try await api.store.send(
                    NewMessage(sender: grace.id, clientId: .random(), target: .conversation(group), text: "unpublished \(index)"), now: .now())
            }
            _ = try await api.send("live", from: ada, in: group)
            _ = try await api.send("after", from: grace, in: group)
            let texts = try await socket.inbox.waitFor("four group messages") { frames -> [String]? in
                let texts = Self.messageTexts(frames)
                return texts.count >= 4 ? texts : nil
            }
            #expect(texts == ["unpublished 1", "unpublished 2", "live", "after"])
            guard case .events(let stored, _) = try await api.store.events(of: alan.id, after: head, limit: 100) else {
                Issue.record("no replay")
                return
            }
            let positions = SentAckTests.positions(await socket.inbox.frames)
            #expect(positions == stored.map(\.position), "every position of the stream once, in order")
            #expect(positions.first.map { $0 > head + 1 } == true, "the group's first message skipped positions: \(head) then \(positions)")
        }
    }
}
