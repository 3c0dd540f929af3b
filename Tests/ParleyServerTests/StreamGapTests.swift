import Foundation
import ParleyCore
import ParleyStore
import Testing

/// Resume rules 3 and 5 (``WebSocketSession``) and ``ConnectionWriter`` rules 2 and 3: what is
/// committed but never published (written to the store behind the hub's back) is a gap; the writer
/// fetches it from the store before the live item that reveals it, then goes on writing in place.
@Suite struct StreamGapTests {
    /// Messages stored without the hub hearing of them: nothing is queued to any connection.
    static func storeBehindTheHub(_ count: Int, from sender: Account, to recipient: Account, api: TestAPI) async throws {
        for index in 1...count {
            _ = try await api.store.send(
                NewMessage(sender: sender.id, clientId: .random(), target: .user(recipient.id), text: "unpublished \(index)"), now: .now())
        }
    }

    @Test func aLiveEventBeyondTheNextPositionFetchesTheGapFirst() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            _ = try await api.send("hello", from: alice, to: bob)
            let b = try await api.socket(bob)
            let head = try await b.synced()
            try await Self.storeBehindTheHub(3, from: alice, to: bob, api: api)
            _ = try await api.send("live", from: alice, to: bob)  // published at head + 4
            _ = try await api.send("after", from: alice, to: bob)  // head + 5, nothing missing before it
            let texts = try await b.inbox.waitFor("five events") { frames -> [String]? in
                let texts = frames.compactMap { frame -> String? in
                    if case .event(let event) = frame, case .message(let message) = event.payload { message.text } else { nil }
                }
                return texts.count >= 5 ? texts : nil
            }
            #expect(texts == ["unpublished 1", "unpublished 2", "unpublished 3", "live", "after"])
            #expect(SentAckTests.positions(await b.inbox.frames) == Array(head + 1 ... head + 5), "every position once, in order")
        }
    }

    @Test func anAckBeyondTheNextPositionFetchesTheGapThenCarriesItsPosition() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            _ = try await api.send("hello", from: alice, to: bob)
            let a = try await api.socket(alice)
            let head = try await a.synced()
            try await Self.storeBehindTheHub(2, from: alice, to: bob, api: api)
            a.send(.send(SendRequest(clientId: .random(), recipientId: bob.id, text: "mine")))
            _ = try await a.sentAcks(count: 1)
            let frames = await a.inbox.frames
            let ackPosition = frames.compactMap { frame -> Int64?? in if case .sent(_, _, _, let p) = frame { .some(p) } else { nil } }.first
            #expect(ackPosition == head + 3, "the ack stands in for its event once the gap is written")
            #expect(SentAckTests.positions(frames) == Array(head + 1 ... head + 3))
            let fetched = frames.compactMap { frame -> String? in
                if case .event(let event) = frame, case .message(let message) = event.payload { message.text } else { nil }
            }
            #expect(fetched == ["unpublished 1", "unpublished 2"], "the gap came from the store, before the ack")
        }
    }
}
