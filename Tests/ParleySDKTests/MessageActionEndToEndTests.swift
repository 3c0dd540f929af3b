import Foundation
import ParleySDK
import ParleyCore
import ParleyViewModels
import Testing

/// Replies, reactions, edits and deletes between two real SDK clients and a real server on loopback.
@MainActor
@Suite(.serialized) struct MessageActionEndToEndTests {
    func item(_ client: ParleyClient, _ conversation: ConversationID, seq: Int64) -> TimelineItem? {
        client.timeline(conversation).first { $0.seq == seq }
    }

    @Test(arguments: Topology.allCases) func repliesReactionsEditsAndDeletesReachTheOtherSideLive(topology: Topology) async throws {
        let (server, aliceSession, bobSession) = try await ServerHarness.withAliceAndBob(topology)
        let alice = try server.client(aliceSession, directory: temporaryDirectory())
        let bob = try server.client(bobSession, directory: temporaryDirectory())
        alice.start()
        bob.start()
        _ = try await eventually("both online") { alice.connectionState == .online && bob.connectionState == .online ? true : nil }
        let conversation = ConversationID.direct(aliceSession.user.id, bobSession.user.id)
        try alice.send("hello\nsecond line", in: conversation, to: bobSession.user.id)
        let hello = try await eventually("bob has it") { item(bob, conversation, seq: 1) }

        try bob.reply(to: hello, text: "hi Alice")
        let reply = try await eventually("alice has the reply") { item(alice, conversation, seq: 2) }
        #expect(reply.replyTo == ReplyQuote(seq: 1, senderId: aliceSession.user.id, preview: "hello", deleted: false))
        try bob.react(hello, emoji: "👍")
        _ = try await eventually("alice sees the reaction") { item(alice, conversation, seq: 1)?.reactions.first?.userIds == [bobSession.user.id] ? true : nil }

        try alice.edit(try #require(item(alice, conversation, seq: 1)), text: "hello there")
        _ = try await eventually("bob sees the edit") { item(bob, conversation, seq: 1)?.isEdited == true ? true : nil }
        #expect(item(bob, conversation, seq: 1)?.text == "hello there")
        #expect(item(bob, conversation, seq: 2)?.replyTo?.preview == "hello there", "the quote follows the original")
        let versions = try await alice.versions(of: try #require(item(alice, conversation, seq: 1)))
        #expect(versions.map(\.text) == ["hello\nsecond line"])

        try alice.deleteForEveryone(try #require(item(alice, conversation, seq: 1)))
        _ = try await eventually("bob sees the tombstone") { item(bob, conversation, seq: 1)?.isDeleted == true ? true : nil }
        let chat = ChatViewModel(client: bob, conversation: conversation, otherUser: nil)
        let tombstone = try #require(item(bob, conversation, seq: 1)), quoting = try #require(item(bob, conversation, seq: 2))
        #expect(chat.display(of: tombstone).text == "This message was deleted" && tombstone.reactions.isEmpty)
        #expect(chat.display(of: quoting).quote?.text == "Deleted message")

        try bob.deleteForMe(quoting)
        _ = try await eventually("gone for bob") { item(bob, conversation, seq: 2) == nil ? true : nil }
        #expect(item(alice, conversation, seq: 2) != nil, "delete for me is for me only")
        alice.stop()
        bob.stop()
        await server.stop()
    }

    @Test func anEditAndADeleteMadeWhileTheOtherClientWasOfflineShowAfterItReconnects() async throws {
        let (server, aliceSession, bobSession) = try await ServerHarness.withAliceAndBob()
        let alice = try server.client(aliceSession, directory: temporaryDirectory())
        let bobDirectory = temporaryDirectory()
        let conversation = ConversationID.direct(aliceSession.user.id, bobSession.user.id)
        alice.start()
        _ = try await eventually("alice online") { alice.connectionState == .online ? true : nil }
        try alice.send("typo here", in: conversation, to: bobSession.user.id)
        try alice.send("regret this", in: conversation)
        let firstBob = try server.client(bobSession, directory: bobDirectory)
        firstBob.start()
        _ = try await eventually("bob synced") { firstBob.conversations[conversation]?.lastSeq == 2 ? true : nil }
        try await firstBob.loadLatest(conversation)  // a first connection takes only the list's snapshot
        #expect(firstBob.timeline(conversation).count == 2)
        firstBob.stop()

        try alice.edit(try #require(item(alice, conversation, seq: 1)), text: "typo fixed")
        try alice.deleteForEveryone(try #require(item(alice, conversation, seq: 2)))
        _ = try await eventually("both answered") { alice.outbox.entries.isEmpty ? true : nil }

        let bob = try server.client(bobSession, directory: bobDirectory)
        #expect(bob.timeline(conversation).map(\.text) == ["typo here", "regret this"], "the cache, before the network answers")
        bob.start()
        _ = try await eventually("bob catches up") { item(bob, conversation, seq: 2)?.isDeleted == true ? true : nil }
        #expect(item(bob, conversation, seq: 1)?.text == "typo fixed" && item(bob, conversation, seq: 1)?.isEdited == true)
        #expect(ConversationListViewModel(client: bob).rows.first?.preview == "This message was deleted")
        alice.stop()
        bob.stop()
        await server.stop()
    }

    @Test func aClientKilledWithActionsQueuedSendsThemOnceWhenItComesBack() async throws {
        let (server, aliceSession, bobSession) = try await ServerHarness.withAliceAndBob()
        let aliceDirectory = temporaryDirectory()
        let conversation = ConversationID.direct(aliceSession.user.id, bobSession.user.id)
        let bob = try server.client(bobSession, directory: temporaryDirectory())
        bob.start()
        do {
            let first = try server.client(aliceSession, directory: aliceDirectory)
            first.start()
            _ = try await eventually("online") { first.connectionState == .online ? true : nil }
            try first.send("first draft", in: conversation, to: bobSession.user.id)
            _ = try await eventually("confirmed") { first.outbox.entries.isEmpty ? true : nil }
            first.stop()
        }
        do {
            // Offline: the actions only reach the local database, then the app is gone.
            let doomed = try server.client(aliceSession, directory: aliceDirectory)
            let message = try #require(item(doomed, conversation, seq: 1))
            try doomed.edit(message, text: "final draft")
            try doomed.react(message, emoji: "🎉")
        }
        let alice = try server.client(aliceSession, directory: aliceDirectory)
        #expect(alice.outbox.entries.compactMap(\.action?.kind) == [.edit, .react], "the actions survive the kill")
        alice.start()
        _ = try await eventually("bob sees both") {
            let seen = item(bob, conversation, seq: 1)
            return seen?.text == "final draft" && seen?.reactions.first?.emoji == "🎉" ? true : nil
        }
        _ = try await eventually("answered") { alice.outbox.entries.isEmpty ? true : nil }
        alice.stop()
        let again = try server.client(aliceSession, directory: aliceDirectory)
        #expect(again.outbox.entries.isEmpty, "nothing is sent twice")
        let versions = try await bob.versions(of: try #require(item(bob, conversation, seq: 1)))
        #expect(versions.map(\.text) == ["first draft"], "the edit was applied once")
        bob.stop()
        await server.stop()
    }

    @Test func actionsOnMessagesStillInTheOutboxFollowTheOutboxRules() async throws {
        let (server, aliceSession, bobSession) = try await ServerHarness.withAliceAndBob()
        let alice = try server.client(aliceSession, directory: temporaryDirectory())
        let bob = try server.client(bobSession, directory: temporaryDirectory())
        let conversation = ConversationID.direct(aliceSession.user.id, bobSession.user.id)
        alice.start()
        bob.start()
        _ = try await eventually("online") { alice.connectionState == .online ? true : nil }
        try alice.send("before", in: conversation, to: bobSession.user.id)
        _ = try await eventually("bob has it") { bob.timeline(conversation).count == 1 ? true : nil }

        await server.stop()
        _ = try await eventually("alice offline") { alice.connectionState != .online ? true : nil }
        try alice.send("helo", in: conversation)
        try alice.send("oops", in: conversation)
        let pending = alice.timeline(conversation)
        try alice.edit(pending[1], text: "hello")
        try alice.deleteForEveryone(pending[2])
        try alice.react(try #require(alice.timeline(conversation).last), emoji: "❤️")
        try alice.reply(to: try #require(alice.timeline(conversation).last), text: "replying to my own pending message")

        try await server.start()
        _ = try await eventually("bob gets them", timeout: .seconds(30)) { bob.timeline(conversation).count == 3 ? true : nil }
        _ = try await eventually("the reaction") { item(bob, conversation, seq: 2)?.reactions.isEmpty == false ? true : nil }
        #expect(bob.timeline(conversation).map(\.text) == ["before", "hello", "replying to my own pending message"])
        #expect(item(bob, conversation, seq: 2)?.isEdited == false, "one send with the new text, no edit")
        #expect(item(bob, conversation, seq: 3)?.replyTo?.seq == 2)
        _ = try await eventually("alice's outbox empties") { alice.outbox.entries.isEmpty ? true : nil }
        alice.stop()
        bob.stop()
        await server.stop()
    }
}
