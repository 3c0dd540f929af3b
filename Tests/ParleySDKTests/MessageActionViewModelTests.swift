import Foundation
import ParleySDK
import ParleyCore
import ParleyViewModels
import Testing

/// One test per rule of `ChatViewModel+MessageActions.swift`, and the list's previews, on fakes.
@MainActor
@Suite struct MessageActionViewModelTests {
    /// Grace's "hello\nthere" (1) and my "mine" (2), in a chat that is open and connected.
    func openChat(_ fixture: Fixture, pages: [Message]? = nil) async throws -> (ChatViewModel, FakeConnection) {
        let messages = pages ?? [fixture.message(1, from: fixture.grace, "hello\nthere"), fixture.message(2, from: fixture.me, "mine")]
        fixture.api.conversationList = [fixture.summary(lastSeq: messages.last?.seq ?? 0, lastMessage: messages.last, myRead: messages.last?.seq ?? 0)]
        fixture.api.pages[fixture.conversation] = messages
        let client = try fixture.makeClient()
        let connection = try await fixture.connect(client)
        _ = try await eventually("conversation") { client.conversations[fixture.conversation] }
        let chat = ChatViewModel(client: client, conversation: fixture.conversation, otherUser: nil)
        await chat.load()
        return (chat, connection)
    }

    func item(_ chat: ChatViewModel, _ text: String) throws -> TimelineItem {
        try #require(chat.client.timeline(chat.conversation).first { $0.text == text })
    }

    @Test func rule1_aReplyQuotesTheOriginalInTheComposerAndGoesWithItsSeq() async throws {
        let fixture = Fixture()
        let (chat, connection) = try await openChat(fixture)
        chat.startReply(to: try item(chat, "hello\nthere"))
        #expect(chat.composerQuote == ChatViewModel.Quote(seq: 1, sender: "Grace Hopper", text: "hello", isDeleted: false))
        chat.cancelReply()
        #expect(chat.composerQuote == nil)
        chat.startReply(to: try item(chat, "hello\nthere"))
        chat.messageText = "hi!"
        chat.send()
        let request = try await eventually("the reply") { connection.sentMessages.first }
        #expect(request.replyToSeq == 1 && request.text == "hi!" && chat.replyingTo == nil && chat.messageText.isEmpty)
        let pending = try item(chat, "hi!")
        #expect(chat.display(of: pending).quote?.text == "hello", "the pending reply shows its quote too")
    }

    @Test func rule2_editingFillsTheComposerSavesAndUpEditsMyLastMessage() async throws {
        let fixture = Fixture()
        let (chat, connection) = try await openChat(fixture)
        #expect(!chat.startEditing(try item(chat, "hello\nthere")), "not mine")
        #expect(chat.editLastMessage() && chat.editing?.text == "mine" && chat.messageText == "mine")
        chat.cancelEditing()
        #expect(chat.editing == nil && chat.messageText.isEmpty)
        chat.editLastMessage()
        chat.messageText = "mine, fixed"
        chat.send()
        let request = try await eventually("the edit") { connection.sentActions.first }
        #expect(request.kind == .edit && request.seq == 2 && request.text == "mine, fixed")
        #expect(chat.editing == nil && connection.sentMessages.isEmpty, "an edit is not a new message")
        let shown = try item(chat, "mine, fixed")
        #expect(chat.display(of: shown).editedLabel == "edited")
    }

    @Test func rule3_aReactionChipToggles() async throws {
        let fixture = Fixture()
        let (chat, connection) = try await openChat(fixture)
        let hello = try item(chat, "hello\nthere")
        chat.toggleReaction("👍", on: hello)
        let chips = chat.display(of: try item(chat, "hello\nthere")).reactions
        #expect(chips == [ChatViewModel.ReactionChip(emoji: "👍", count: 1, isMine: true)])
        chat.toggleReaction("👍", on: try item(chat, "hello\nthere"))
        #expect(chat.display(of: try item(chat, "hello\nthere")).reactions.isEmpty)
        let first = try await eventually("react") { connection.sentActions.first }
        #expect(first.emoji == "👍")
        connection.push(.acted(ref: first.ref, message: fixture.api.pages[fixture.conversation]![0], duplicate: false))
        let second = try await eventually("clear") { connection.sentActions.count == 2 ? connection.sentActions[1] : nil }
        #expect(second.kind == .react && second.emoji == nil)
        chat.react(hello, with: "abc")
        #expect(chat.errorMessage == "A reaction is a single emoji.")
    }

    @Test func rule4_deleteForEveryoneIsOfferedForMineAndDeleteForMeForAny() async throws {
        let fixture = Fixture()
        let (chat, connection) = try await openChat(fixture)
        let hello = try item(chat, "hello\nthere"), mine = try item(chat, "mine")
        #expect(!chat.canDeleteForEveryone(hello) && chat.canDeleteForEveryone(mine))
        chat.deleteForEveryone(hello)
        #expect(chat.errorMessage != nil)
        chat.deleteForEveryone(mine)
        chat.deleteForMe(hello)
        let items = chat.client.timeline(chat.conversation)
        #expect(items.count == 1 && chat.display(of: items[0]).text == MessageText.deleted)
        let kinds = try await eventually("delete") { connection.sentActions.first }
        #expect(kinds.kind == .delete)
    }

    @Test func rule5_eachItemShowsAsItIsNow() async throws {
        let fixture = Fixture()
        var original = fixture.message(1, from: fixture.grace, "")
        original.deletedAt = Timestamp(milliseconds: 3000)
        var reply = fixture.message(2, from: fixture.me, "answer")
        reply.replyTo = ReplyQuote(seq: 1, senderId: fixture.grace.id, preview: "", deleted: true)
        reply.editedAt = Timestamp(milliseconds: 4000)
        reply.reactions = [Reaction(emoji: "❤️", count: 2, mine: false, userIds: [fixture.grace.id, fixture.me.id])]
        let (chat, _) = try await openChat(fixture, pages: [original, reply])
        let items = chat.client.timeline(chat.conversation)
        let tombstone = chat.display(of: items[0]), answer = chat.display(of: items[1])
        #expect(tombstone.text == "This message was deleted" && tombstone.isDeleted && tombstone.editedLabel == nil)
        #expect(answer.editedLabel == "edited" && answer.quote?.text == "Deleted message" && answer.quote?.isDeleted == true)
        #expect(answer.reactions == [ChatViewModel.ReactionChip(emoji: "❤️", count: 2, isMine: true)], "mine from who reacted")
    }

    @Test func rule6_jumpingToAnOriginalLoadsOlderPagesUntilItIsHeld() async throws {
        let fixture = Fixture()
        var pages = (1...120).map { fixture.message(Int64($0), from: fixture.grace, "m\($0)") }
        pages[119].replyTo = ReplyQuote(seq: 5, senderId: fixture.grace.id, text: "m5", deleted: false)
        let (chat, _) = try await openChat(fixture, pages: pages)
        let reply = try #require(chat.client.timeline(chat.conversation).last)
        #expect(chat.client.timeline(chat.conversation).first?.seq == 71)
        let original = await chat.jumpToOriginal(of: reply)
        #expect(original?.seq == 5 && original?.text == "m5")
    }

    @Test func theListPreviewSaysDeletedAndMarksEdited() async throws {
        let fixture = Fixture()
        var edited = fixture.message(1, from: fixture.grace, "new text")
        edited.editedAt = Timestamp(milliseconds: 2000)
        fixture.api.conversationList = [fixture.summary(lastSeq: 1, lastMessage: edited, myRead: 1)]
        let client = try fixture.makeClient()
        let list = ConversationListViewModel(client: client)
        let connection = try await fixture.connect(client)
        let row = try await eventually("a row") { list.rows.first }
        #expect(row.preview == "new text" && row.isLastMessageEdited && !row.isLastMessageDeleted)
        var deleted = edited
        deleted.text = ""
        deleted.deletedAt = Timestamp(milliseconds: 3000)
        connection.push(.event(StreamEvent(position: 1, payload: .messageUpdated(deleted))))
        _ = try await eventually("deleted") { list.rows.first?.preview == MessageText.deleted ? true : nil }
        #expect(list.rows.first?.isLastMessageDeleted == true && list.rows.first?.isLastMessageEdited == false)
    }
}
