import Foundation
import ParleyCore
import Testing
import HTTPTypes
import ParleyStore

/// Real WebSocket clients over loopback against a real server: guarantees 1–5 end to end.
@Suite struct LiveDeliveryTests {
    @Test func messageReachesTheRecipientLiveAndStatusesReachTheSender() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let a = try await api.socket(alice), b = try await api.socket(bob)
            let clientId = ClientMessageID.random()
            a.send(.send(SendRequest(ref: "s1", clientId: clientId, recipientId: bob.id, text: "Hello Bob")))

            let sent = try await a.sentAcks(count: 1)[0]
            #expect(sent.message.text == "Hello Bob" && sent.message.seq == 1 && sent.message.clientId == clientId && !sent.duplicate)
            let bobsMessage = try await b.message(seq: 1)
            #expect(bobsMessage == sent.message)

            // Bob's device stores it (delivered), then Bob opens the chat (read).
            b.send(.receipt(ref: "d", conversationId: bobsMessage.conversationId, deliveredSeq: 1, readSeq: nil))
            let delivered = try await a.receipt(of: bob.id) { $0.deliveredSeq == 1 && $0.readSeq == 0 }
            #expect(delivered.conversationId == bobsMessage.conversationId)
            b.send(.receipt(ref: "r", conversationId: bobsMessage.conversationId, deliveredSeq: nil, readSeq: 1))
            _ = try await a.receipt(of: bob.id) { $0.readSeq == 1 }
            _ = try await b.inbox.waitFor("acks") { frames in frames.filter { if case .ack = $0 { true } else { false } }.count == 2 ? true : nil }

            let summary = try await api.request(.get, "/v1/conversations/\(bobsMessage.conversationId)", token: bob.token).decode(ConversationSummary.self)
            #expect(summary.unreadCount == 0)
            await a.close()
            await b.close()
        }
    }

    @Test func retriesFromAnyConnectionYieldOneMessage() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let phone = try await api.socket(alice), laptop = try await api.socket(alice), b = try await api.socket(bob)
            let request = SendRequest(clientId: .random(), recipientId: bob.id, text: "exactly once")
            phone.send(.send(request))
            phone.send(.send(request))
            let first = try await phone.sentAcks(count: 2)
            laptop.send(.send(request))
            let fromLaptop = try await laptop.sentAcks(count: 1)
            _ = try await api.send("exactly once", from: alice, to: bob, clientId: request.clientId)
            #expect(Set((first + fromLaptop).map(\.message)).count == 1)
            #expect((first + fromLaptop).map(\.duplicate) == [false, true, true])

            // A later message proves everything before it has been pushed; bob saw the first one once.
            _ = try await api.send("marker", from: alice, to: bob)
            _ = try await b.message(seq: 2)
            #expect(await b.inbox.messages.map(\.text) == ["exactly once", "marker"])
            // The laptop (another device of alice) sees alice's own message, once, as an event.
            _ = try await laptop.message(seq: 2)
            #expect(await laptop.inbox.messages.map(\.seq) == [1, 2])
        }
    }

    @Test func reconnectingWithAPositionReplaysExactlyWhatWasMissedInOrder() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let id = try await api.send("before", from: alice, to: bob).conversationId
            let firstVisit = try await api.socket(bob, after: 0)
            _ = try await firstVisit.message(seq: 1)
            _ = try await firstVisit.synced()
            let processed = try #require(await firstVisit.inbox.lastPosition)
            await firstVisit.close()

            let a = try await api.socket(alice)
            for i in 1...100 { a.send(.send(SendRequest(clientId: .random(), conversationId: id, text: "offline \(i)"))) }
            _ = try await a.sentAcks(count: 100)

            let back = try await api.socket(bob, after: processed)
            _ = try await back.synced()
            let replayed = await back.inbox.messages
            #expect(replayed.map(\.text) == (1...100).map { "offline \($0)" })
            #expect(replayed.map(\.seq) == Array(2...101))
            let positions = await back.inbox.streamEvents.map(\.position)
            #expect(positions == Array((processed + 1)...(processed + 100)))

            // And it goes on live after the replay, without repeats.
            a.send(.send(SendRequest(clientId: .random(), conversationId: id, text: "live again")))
            _ = try await back.message(seq: 102)
            #expect(await back.inbox.messages.count == 101)
        }
    }

    @Test func aPrunedPositionGetsResyncThenLiveEvents() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let id = try await api.send("m", from: alice, to: bob).conversationId
            for i in 0..<5 { _ = try await api.send("m\(i)", from: alice, in: id) }
            _ = try await api.store.pruneEvents(keepPerUser: 2)
            let b = try await api.socket(bob, after: 1)
            let position = try await b.inbox.waitFor("resync") { frames in
                frames.lazy.compactMap { if case .resync(let position) = $0 { position } else { nil } }.first
            }
            #expect(position == 7)
            #expect(await b.inbox.messages.isEmpty)
            _ = try await api.send("after resync", from: alice, in: id)
            let live = try await b.message(seq: 7)
            #expect(live.text == "after resync")
        }
    }

    @Test func concurrentFirstMessagesFromBothSidesMakeOneConversation() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let a = try await api.socket(alice), b = try await api.socket(bob)
            a.send(.send(SendRequest(clientId: .random(), recipientId: bob.id, text: "hi bob")))
            b.send(.send(SendRequest(clientId: .random(), recipientId: alice.id, text: "hi alice")))
            let fromA = try await a.sentAcks(count: 1), fromB = try await b.sentAcks(count: 1)
            #expect(fromA[0].message.conversationId == fromB[0].message.conversationId)
            #expect(Set([fromA[0].message.seq, fromB[0].message.seq]) == [1, 2])
            let list = try await api.request(.get, "/v1/conversations", token: alice.token).decode(API.ConversationList.self)
            #expect(list.conversations.count == 1)
            let conversationEvents = await a.inbox.streamEvents.filter { if case .conversation = $0.payload { true } else { false } }
            #expect(conversationEvents.count == 1)
        }
    }
}
