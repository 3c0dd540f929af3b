import Foundation
@testable import ParleySDK
import ParleyViewModels
import ParleyCore
import Testing

/// The client's side of message actions, on fakes: the outbox over the live connection
/// (``MessageOutbox`` rules 8–12) and `ParleyClient+MessageActions.swift` rules.
@MainActor
@Suite struct MessageActionClientTests {
    /// A direct conversation with Grace holding "hello" (hers, seq 1) and "mine" (seq 2).
    func connectedClient(_ fixture: Fixture) async throws -> (ParleyClient, FakeConnection) {
        let mine = fixture.message(2, from: fixture.me, "mine")
        fixture.api.conversationList = [fixture.summary(lastSeq: 2, lastMessage: mine, myRead: 2)]
        fixture.api.pages[fixture.conversation] = [fixture.message(1, from: fixture.grace, "hello"), mine]
        let client = try fixture.makeClient()
        let connection = try await fixture.connect(client)
        _ = try await eventually("conversation") { client.conversations[fixture.conversation] }
        try await client.loadLatest(fixture.conversation)
        return (client, connection)
    }

    func item(_ client: ParleyClient, _ fixture: Fixture, _ text: String) -> TimelineItem? {
        client.timeline(fixture.conversation).first { $0.text == text }
    }

    @Test func anActionShowsAtOnceGoesWithItsClientIdAsRefAndItsAnswerRemovesIt() async throws {
        let fixture = Fixture()
        let (client, connection) = try await connectedClient(fixture)
        let hello = try #require(item(client, fixture, "hello"))
        try client.react(hello, emoji: "👍")
        #expect(client.timeline(fixture.conversation).first?.reactions.map(\.emoji) == ["👍"], "shown before the answer")
        let request = try await eventually("action frame") { connection.sentActions.first }
        #expect(request.ref == request.clientId.rawValue && request.seq == 1 && request.kind == .react && request.emoji == "👍")
        var answered = fixture.message(1, from: fixture.grace, "hello", clientId: hello.id)
        answered.reactions = [Reaction(emoji: "👍", count: 1, mine: true, userIds: [fixture.me.id])]
        connection.push(.acted(ref: request.ref, message: answered, duplicate: false))
        _ = try await eventually("answered") { client.outbox.entries.isEmpty ? true : nil }
        #expect(client.timeline(fixture.conversation).first?.reactions == answered.reactions)
    }

    @Test func ruleTwo_whatTheServerWouldRefuseIsRefusedAtOnce() async throws {
        let fixture = Fixture()
        let (client, _) = try await connectedClient(fixture)
        let hello = try #require(item(client, fixture, "hello"))
        #expect(throws: Validation.Failure.self) { try client.react(hello, emoji: "a") }
        #expect(throws: Validation.Failure.self) { try client.edit(hello, text: "not mine") }
        #expect(throws: Validation.Failure.self) { try client.deleteForEveryone(hello) }
        #expect(client.outbox.entries.isEmpty)
    }

    /// A caption may be edited away; a message without photos or files keeps some text.
    @Test func anEditMayRemoveACaptionOnly() async throws {
        let fixture = Fixture()
        var photo = fixture.message(1, from: fixture.me, "a caption")
        photo.attachments = [Attachment(id: .random(), name: "beach.jpg", mimeType: "image/jpeg", kind: .image, size: 10)]
        let words = fixture.message(2, from: fixture.me, "words")
        fixture.api.conversationList = [fixture.summary(lastSeq: 2, lastMessage: words, myRead: 2)]
        fixture.api.pages[fixture.conversation] = [photo, words]
        let client = try fixture.makeClient()
        let connection = try await fixture.connect(client)
        _ = try await eventually("conversation") { client.conversations[fixture.conversation] }
        try await client.loadLatest(fixture.conversation)
        #expect(throws: Validation.Failure.self) { try client.edit(try #require(item(client, fixture, "words")), text: "  ") }
        try client.edit(try #require(item(client, fixture, "a caption")), text: " \n ")
        let request = try await eventually("the edit") { connection.sentActions.first }
        #expect(request.kind == .edit && request.seq == 1 && request.text == "")
        #expect(connection.sentActions.count == 1, "nothing went out for the refused one")
    }

    @Test func editingAndDeletingMessagesStillInTheOutboxChangeOrCancelTheSend() async throws {
        let fixture = Fixture()
        fixture.api.conversationList = [fixture.summary()]
        let client = try fixture.makeClient()
        try client.send("helo", in: fixture.conversation)
        try client.send("oops", in: fixture.conversation)
        try client.edit(try #require(item(client, fixture, "helo")), text: "hello")
        try client.deleteForEveryone(try #require(item(client, fixture, "oops")))
        #expect(client.timeline(fixture.conversation).map(\.text) == ["hello"])
        let connection = try await fixture.connect(client)
        let sent = try await eventually("the send") { connection.sentMessages.first }
        connection.push(.sent(ref: nil, message: fixture.message(1, from: fixture.me, sent.text, clientId: sent.clientId), duplicate: false))
        _ = try await eventually("confirmed") { client.outbox.entries.isEmpty ? true : nil }
        #expect(connection.sentWrites.count == 1 && sent.text == "hello", "one send with the new text; nothing of the cancelled one")
    }

    @Test func reactionsAndRepliesToAPendingMessageWaitForItsSeq() async throws {
        let fixture = Fixture()
        let (client, connection) = try await connectedClient(fixture)
        try client.send("question", in: fixture.conversation)
        let pending = try #require(item(client, fixture, "question"))
        try client.react(pending, emoji: "❤️")
        try client.reply(to: pending, text: "and another thing")
        #expect(client.timeline(fixture.conversation).last?.replyTo?.preview == "question", "the pending reply shows its quote")
        let send = try await eventually("the send") { connection.sentMessages.first }
        #expect(connection.sentActions.isEmpty && connection.sentMessages.count == 1, "nothing names the message before its seq")
        connection.push(.sent(ref: nil, message: fixture.message(3, from: fixture.me, "question", clientId: send.clientId), duplicate: false))
        let react = try await eventually("the reaction") { connection.sentActions.first }
        #expect(react.seq == 3 && react.emoji == "❤️")
        connection.push(.acted(ref: react.ref, message: fixture.message(3, from: fixture.me, "question", clientId: send.clientId), duplicate: false))
        let reply = try await eventually("the reply") { connection.sentMessages.count == 2 ? connection.sentMessages[1] : nil }
        #expect(reply.replyToSeq == 3 && reply.text == "and another thing")
    }

    @Test func aRefusedActionIsDroppedAndSurfacedNotRetried() async throws {
        let fixture = Fixture()
        let (client, connection) = try await connectedClient(fixture)
        let events = client.events()
        try client.edit(try #require(item(client, fixture, "mine")), text: "mine, edited")
        #expect(client.timeline(fixture.conversation).last?.text == "mine, edited")
        let request = try await eventually("the edit") { connection.sentActions.first }
        connection.push(.error(ref: request.ref, clientId: request.clientId, code: .editWindowClosed, message: "Too late to edit that message."))
        _ = try await eventually("dropped") { client.outbox.entries.isEmpty ? true : nil }
        #expect(client.refusedAction?.reason == "Too late to edit that message.")
        #expect(client.timeline(fixture.conversation).last?.text == "mine", "the message shows as the server has it")
        for await event in events {
            if case .actionFailed(let entry, _) = event {
                #expect(entry.clientId == request.clientId)
                break
            }
        }
        connection.push(.synced(position: 0))
        try await Task.sleep(for: .milliseconds(50))
        #expect(connection.sentActions.count == 1, "never sent again")
    }

    /// Several refusals are all kept; a chat shows and dismisses only its own.
    @Test func everyRefusalIsKeptUntilItsChatDismissesIt() async throws {
        let fixture = Fixture()
        let (client, connection) = try await connectedClient(fixture)
        let chat = ChatViewModel(client: client, conversation: fixture.conversation, otherUser: fixture.grace)
        let elsewhere = ChatViewModel(client: client, conversation: ConversationID(rawValue: "g_elsewhere"), otherUser: nil)
        try client.edit(try #require(item(client, fixture, "mine")), text: "mine, edited")
        let edit = try await eventually("the edit") { connection.sentActions.first }
        connection.push(.error(ref: edit.ref, clientId: edit.clientId, code: .editWindowClosed, message: "Too late to edit that message."))
        _ = try await eventually("the first refusal") { client.refusedActions.count == 1 ? true : nil }
        try client.react(try #require(item(client, fixture, "hello")), emoji: "👍")
        let react = try await eventually("the reaction") { connection.sentActions.count == 2 ? connection.sentActions[1] : nil }
        connection.push(.error(ref: react.ref, clientId: react.clientId, code: .messageDeleted, message: "That message was deleted."))
        _ = try await eventually("the second refusal") { client.refusedActions.count == 2 ? true : nil }
        #expect(client.refusedActions.map(\.reason) == ["Too late to edit that message.", "That message was deleted."], "oldest first, none overwritten")
        #expect(client.refusedAction?.reason == "That message was deleted.")
        #expect(chat.actionFailure == "That message was deleted. (1 more of your changes here were refused too.)")
        #expect(elsewhere.actionFailure == nil, "another chat shows nothing of this one's refusals")
        elsewhere.dismissActionFailure()
        #expect(client.refusedActions.count == 2, "dismissing another chat keeps these")
        chat.dismissActionFailure()
        #expect(client.refusedActions.isEmpty && chat.actionFailure == nil)
    }

    @Test func aClientKilledWithQueuedActionsSendsThemOnceWithTheSameClientIds() async throws {
        let fixture = Fixture()
        let (first, connection) = try await connectedClient(fixture)
        first.stop()
        try first.react(try #require(item(first, fixture, "hello")), emoji: "😂")
        try first.deleteForEveryone(try #require(item(first, fixture, "mine")))
        let queued = first.outbox.entries.map(\.clientId)
        #expect(queued.count == 2 && connection.sentActions.isEmpty)

        let second = try fixture.makeClient()  // the same database: the app after a kill
        #expect(second.outbox.entries.map(\.clientId) == queued)
        #expect(second.timeline(fixture.conversation).last?.isDeleted == true, "the queued delete shows at once")
        let again = try await fixture.connect(second)
        for (index, clientId) in queued.enumerated() {
            let request = try await eventually("action \(index)") { again.sentActions.count > index ? again.sentActions[index] : nil }
            #expect(request.clientId == clientId)
            var answered = try #require(fixture.api.pages[fixture.conversation]?[index])
            if index == 1 {
                answered.text = ""
                answered.deletedAt = Timestamp(milliseconds: 2000)
            }
            again.push(.acted(ref: request.ref, message: answered, duplicate: false))
        }
        _ = try await eventually("answered") { second.outbox.entries.isEmpty ? true : nil }
        second.stop()
        let third = try fixture.makeClient()
        #expect(third.outbox.entries.isEmpty, "answered actions are not sent again")
        #expect(third.timeline(fixture.conversation).last?.isDeleted == true)
    }

    @Test func versionsAreReadFromTheServer() async throws {
        let fixture = Fixture()
        let (client, _) = try await connectedClient(fixture)
        let version = MessageVersion(text: "mnie", createdAt: Timestamp(milliseconds: 1), replacedAt: Timestamp(milliseconds: 2))
        fixture.api.versions[2] = [version]
        #expect(try await client.versions(of: try #require(item(client, fixture, "mine"))) == [version])
    }
}
