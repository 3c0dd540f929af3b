import Foundation
import ParleySDK
import ParleyCore
import ParleyViewModels
import Testing

/// Two real SDK clients against a real server on loopback.
@MainActor
@Suite(.serialized) struct EndToEndTests {
    func status(_ client: ParleyClient, _ conversation: ConversationID, _ text: String) -> MessageStatus? {
        client.timeline(conversation).first { $0.text == text }?.status ?? nil
    }

    @Test(arguments: Topology.allCases) func liveMessagesStatusesTypingAndPresence(topology: Topology) async throws {
        let (server, aliceSession, bobSession) = try await ServerHarness.withAliceAndBob(topology)
        let alice = try server.client(aliceSession, directory: temporaryDirectory())
        let bob = try server.client(bobSession, directory: temporaryDirectory())
        alice.start()
        bob.start()
        _ = try await eventually("both online") { alice.connectionState == .online && bob.connectionState == .online ? true : nil }

        let list = ConversationListViewModel(client: alice)
        let chat = list.startChat(with: bobSession.user)
        chat.messageText = "Hello Bob"
        chat.send()
        let conversation = chat.conversation
        let received = try await eventually("bob receives") { bob.timeline(conversation).first }
        #expect(received.text == "Hello Bob" && received.senderId == aliceSession.user.id)
        // Bob's client stored it, so it is delivered; then Bob reads it.
        _ = try await eventually("delivered at alice") { status(alice, conversation, "Hello Bob") == .delivered ? true : nil }
        ChatViewModel(client: bob, conversation: conversation, otherUser: nil).markVisible(upTo: 1)
        _ = try await eventually("read at alice") { status(alice, conversation, "Hello Bob") == .read ? true : nil }
        #expect(list.rows.first?.preview == "You: Hello Bob")

        let bobsChat = ChatViewModel(client: bob, conversation: conversation, otherUser: nil)
        chat.messageText = "typing…"
        _ = try await eventually("typing at bob") { bobsChat.otherUserTyping ? true : nil }
        // Presence is shared once both have written: Bob replies, then each sees the other online.
        #expect(bobsChat.presenceText != "online", "alice is a stranger to bob until he replies")
        bobsChat.messageText = "Hi Alice"
        bobsChat.send()
        _ = try await eventually("alice online for bob") { bobsChat.presenceText == "online" ? true : nil }
        alice.stop()
        _ = try await eventually("alice offline for bob") { bobsChat.presenceText.hasPrefix("last seen") ? true : nil }
        bob.stop()
        await server.stop()
    }

    @Test(arguments: Topology.allCases) func messagesWrittenWhileTheServerIsDownGoOutOnceInOrder(topology: Topology) async throws {
        let (server, aliceSession, bobSession) = try await ServerHarness.withAliceAndBob(topology)
        let alice = try server.client(aliceSession, directory: temporaryDirectory())
        let bob = try server.client(bobSession, directory: temporaryDirectory())
        alice.start()
        bob.start()
        let conversation = ConversationID.direct(aliceSession.user.id, bobSession.user.id)
        _ = try await eventually("online") { alice.connectionState == .online ? true : nil }
        // Bob may connect before or after the send: either way the message reaches his timeline.
        try alice.send("before", in: conversation, to: bobSession.user.id)
        _ = try await eventually("bob has it") { bob.timeline(conversation).count == 1 ? true : nil }

        await server.stop()
        _ = try await eventually("alice offline") { alice.connectionState != .online ? true : nil }
        for text in ["one", "two", "three"] { try alice.send(text, in: conversation) }
        #expect(alice.timeline(conversation).suffix(3).map(\.status) == [.sending, .sending, .sending])

        try await server.start()
        _ = try await eventually("the three arrive", timeout: .seconds(30)) { bob.timeline(conversation).count == 4 ? true : nil }
        #expect(bob.timeline(conversation).map(\.text) == ["before", "one", "two", "three"])
        #expect(bob.timeline(conversation).map(\.seq) == [1, 2, 3, 4])
        _ = try await eventually("alice's are confirmed") { alice.outbox.entries.isEmpty ? true : nil }
        alice.stop()
        bob.stop()
        await server.stop()
    }

    @Test(arguments: Topology.allCases) func aKilledClientsOutboxGoesOutOnceFromTheNextStart(topology: Topology) async throws {
        let (server, aliceSession, bobSession) = try await ServerHarness.withAliceAndBob(topology)
        let aliceDirectory = temporaryDirectory()
        let conversation = ConversationID.direct(aliceSession.user.id, bobSession.user.id)
        do {
            // Never connected: the messages only reach the local database, then the app is gone.
            let doomed = try server.client(aliceSession, directory: aliceDirectory)
            try doomed.send("written before the crash", in: conversation, to: bobSession.user.id)
            try doomed.send("and another", in: conversation, to: bobSession.user.id)
        }
        let bob = try server.client(bobSession, directory: temporaryDirectory())
        bob.start()
        let alice = try server.client(aliceSession, directory: aliceDirectory)
        #expect(alice.outbox.entries.map(\.text) == ["written before the crash", "and another"], "the outbox survives the restart")
        alice.start()
        _ = try await eventually("bob gets both") { bob.timeline(conversation).count == 2 ? true : nil }
        _ = try await eventually("outbox empty") { alice.outbox.entries.isEmpty ? true : nil }
        // A third start must not send them again.
        alice.stop()
        let again = try server.client(aliceSession, directory: aliceDirectory)
        #expect(again.outbox.entries.isEmpty)
        again.start()
        try again.send("after restart", in: conversation)
        _ = try await eventually("third") { bob.timeline(conversation).count == 3 ? true : nil }
        #expect(bob.timeline(conversation).map(\.text) == ["written before the crash", "and another", "after restart"])
        again.stop()
        bob.stop()
        await server.stop()
    }

    @Test(arguments: Topology.allCases) func aClientThatWasOfflineGetsExactlyWhatItMissed(topology: Topology) async throws {
        let (server, aliceSession, bobSession) = try await ServerHarness.withAliceAndBob(topology)
        let bobDirectory = temporaryDirectory()
        let conversation = ConversationID.direct(aliceSession.user.id, bobSession.user.id)
        let alice = try server.client(aliceSession, directory: temporaryDirectory())
        alice.start()
        _ = try await eventually("alice online") { alice.connectionState == .online ? true : nil }
        try alice.send("hello", in: conversation, to: bobSession.user.id)
        let firstBob = try server.client(bobSession, directory: bobDirectory)
        firstBob.start()
        _ = try await eventually("bob synced") { firstBob.conversations[conversation]?.lastSeq == 1 ? true : nil }
        firstBob.stop()

        for i in 1...100 { try alice.send("missed \(i)", in: conversation) }
        _ = try await eventually("all sent", timeout: .seconds(30)) { alice.outbox.entries.isEmpty ? true : nil }

        let bob = try server.client(bobSession, directory: bobDirectory)
        let events = bob.events()
        let collector = Task { @MainActor in
            var received: [Message] = []
            for await event in events {
                if case .message(let message) = event { received.append(message) }
                if received.count == 100 { break }
            }
            return received
        }
        bob.start()
        _ = try await eventually("100 missed messages", timeout: .seconds(30)) { bob.timeline(conversation).count >= 100 ? true : nil }
        bob.stop()
        let received = await collector.value
        #expect(received.map(\.text) == (1...100).map { "missed \($0)" })
        #expect(received.map(\.seq) == Array(2...101))
        #expect(bob.timeline(conversation).count == 101, "the missed ones, and the first, which came with the snapshot")
        try await bob.loadLatest(conversation)
        #expect(bob.timeline(conversation).suffix(50).map(\.seq) == Array(52...101))
        alice.stop()
        bob.stop()
        await server.stop()
    }
}
