import Foundation
@testable import ParleySDK
import ParleyCore
import Testing

/// One test per rule of `ParleyClient+MessageUpdates.swift`: `messageUpdated`, `messageHidden`, `acted`.
@MainActor
@Suite struct MessageUpdateTests {
    /// Grace's "hello\nworld" (1), my reply to it (2), Grace's "last" (3), unread.
    func connectedClient(_ fixture: Fixture) async throws -> (ParleyClient, FakeConnection) {
        var reply = fixture.message(2, from: fixture.me, "reply")
        reply.replyTo = ReplyQuote(seq: 1, senderId: fixture.grace.id, text: "hello\nworld", deleted: false)
        let last = fixture.message(3, from: fixture.grace, "last")
        fixture.api.conversationList = [fixture.summary(lastSeq: 3, lastMessage: last, myRead: 2)]
        fixture.api.pages[fixture.conversation] = [fixture.message(1, from: fixture.grace, "hello\nworld"), reply, last]
        let client = try fixture.makeClient()
        let connection = try await fixture.connect(client)
        _ = try await eventually("conversation") { client.conversations[fixture.conversation] }
        try await client.loadLatest(fixture.conversation)
        return (client, connection)
    }

    func held(_ client: ParleyClient, _ fixture: Fixture, _ seq: Int64) -> Message? {
        client.messages[fixture.conversation]?[seq]
    }

    @Test func rule1_anUpdateReplacesAHeldMessageAndNeverStoresOneNotHeld() async throws {
        let fixture = Fixture()
        let (client, connection) = try await connectedClient(fixture)
        var edited = try #require(held(client, fixture, 1))
        edited.text = "hi\nworld"
        edited.editedAt = Timestamp(milliseconds: 5000)
        edited.reactions = [Reaction(emoji: "👍", count: 1, mine: false, userIds: [fixture.grace.id])]
        connection.push(.event(StreamEvent(position: 1, payload: .messageUpdated(edited))))
        _ = try await eventually("edited") { client.timeline(fixture.conversation).first?.isEdited == true ? true : nil }
        let first = try #require(client.timeline(fixture.conversation).first)
        #expect(first.text == "hi\nworld" && first.reactions.map(\.emoji) == ["👍"])
        var old = fixture.message(0, from: fixture.grace, "not held")
        old.editedAt = Timestamp(milliseconds: 5000)
        connection.push(.event(StreamEvent(position: 2, payload: .messageUpdated(old))))
        _ = try await eventually("position 2") { client.position == 2 ? true : nil }
        #expect(held(client, fixture, 0) == nil, "a message not held would leave a hole in the pages")
    }

    @Test func rule2_heldRepliesQuoteTheOriginalAsItIsNow() async throws {
        let fixture = Fixture()
        let (client, connection) = try await connectedClient(fixture)
        var edited = try #require(held(client, fixture, 1))
        edited.text = "hi there\nworld"
        edited.editedAt = Timestamp(milliseconds: 5000)
        connection.push(.event(StreamEvent(position: 1, payload: .messageUpdated(edited))))
        _ = try await eventually("quote follows the edit") { held(client, fixture, 2)?.replyTo?.preview == "hi there" ? true : nil }
        var deleted = edited
        deleted.text = ""
        deleted.deletedAt = Timestamp(milliseconds: 6000)
        connection.push(.event(StreamEvent(position: 2, payload: .messageUpdated(deleted))))
        _ = try await eventually("quote says deleted") { held(client, fixture, 2)?.replyTo?.deleted == true ? true : nil }
        #expect(held(client, fixture, 2)?.replyTo?.preview == "" && client.timeline(fixture.conversation)[1].replyTo?.deleted == true)
    }

    @Test func rules3and5_theLastMessagesPreviewFollowsWithoutMovingTheListAndADeleteIsNotUnread() async throws {
        let fixture = Fixture()
        let (client, connection) = try await connectedClient(fixture)
        let activity = try #require(client.conversations[fixture.conversation]?.lastActivityAt)
        #expect(client.unreadCount(fixture.conversation) == 1)
        var edited = try #require(held(client, fixture, 3))
        edited.text = "last, edited"
        edited.editedAt = Timestamp(milliseconds: 99_000)
        connection.push(.event(StreamEvent(position: 1, payload: .messageUpdated(edited))))
        _ = try await eventually("preview") { client.conversations[fixture.conversation]?.lastMessage?.text == "last, edited" ? true : nil }
        #expect(client.conversations[fixture.conversation]?.lastActivityAt == activity && client.unreadCount(fixture.conversation) == 1)
        edited.text = ""
        edited.deletedAt = Timestamp(milliseconds: 99_001)
        connection.push(.event(StreamEvent(position: 2, payload: .messageUpdated(edited))))
        _ = try await eventually("deleted preview") { client.conversations[fixture.conversation]?.lastMessage?.isDeleted == true ? true : nil }
        #expect(client.unreadCount(fixture.conversation) == 0, "a deleted message is not unread")
    }

    /// Rule 5 for messages this device never held: deleted or hidden while it was away, they are
    /// not in last seq − my read seq's reach, so the server's count is what counts (and then moves).
    @Test func rule5_messagesDeletedOrHiddenWhileAwayAreNotUnreadInADirectConversation() async throws {
        let fixture = Fixture()
        var summary = fixture.summary(lastSeq: 5, lastMessage: fixture.message(5, from: fixture.grace, "still here"), myRead: 1)
        summary.unreadCount = 1  // seqs 2–4 were deleted for everyone or hidden by me elsewhere
        fixture.api.conversationList = [summary]
        let client = try fixture.makeClient()
        let connection = try await fixture.connect(client)
        _ = try await eventually("conversation") { client.conversations[fixture.conversation] }
        #expect(client.unreadCount(fixture.conversation) == 1, "not lastSeq − readSeq = 4")
        connection.push(.event(StreamEvent(position: 1, payload: .message(fixture.message(6, from: fixture.grace, "one more")))))
        _ = try await eventually("one more") { client.unreadCount(fixture.conversation) == 2 ? true : nil }
        var gone = fixture.message(6, from: fixture.grace, "")
        gone.deletedAt = Timestamp(milliseconds: 99_000)
        // Seqs 2–4 are not held, so the count is read again: the server's, as it is now.
        var now = fixture.summary(lastSeq: 6, lastMessage: gone, myRead: 1)
        now.unreadCount = 1
        fixture.api.conversationList = [now]
        connection.push(.event(StreamEvent(position: 2, payload: .messageUpdated(gone))))
        _ = try await eventually("deleted again") { client.unreadCount(fixture.conversation) == 1 ? true : nil }
    }

    @Test func rules4and5_aHiddenMessageLeavesTheTimelineAndStaysOutEvenAfterARestart() async throws {
        let fixture = Fixture()
        let (client, connection) = try await connectedClient(fixture)
        let hidden = MessageRef(conversationId: fixture.conversation, seq: 3)
        connection.push(.event(StreamEvent(position: 1, payload: .messageHidden(hidden))))
        _ = try await eventually("hidden") { client.timeline(fixture.conversation).count == 2 ? true : nil }
        #expect(client.conversations[fixture.conversation]?.lastMessage?.seq == 2, "the preview falls back to the newest held")
        #expect(client.unreadCount(fixture.conversation) == 0, "a hidden message is not unread")
        let replayed = try #require(fixture.api.pages[fixture.conversation]?.last)
        connection.push(.event(StreamEvent(position: 2, payload: .message(replayed))))
        _ = try await eventually("position 2") { client.position == 2 ? true : nil }
        #expect(client.timeline(fixture.conversation).map(\.seq) == [1, 2], "a replay does not bring it back")
        client.stop()
        let restarted = try fixture.makeClient()
        #expect(restarted.timeline(fixture.conversation).map(\.seq) == [1, 2])
        try await restarted.loadLatest(fixture.conversation)
        #expect(restarted.timeline(fixture.conversation).map(\.seq) == [1, 2], "nor does a page")
    }

    @Test func rule6_theAnswerToMyHideRemovesTheMessageAndToMyEditAppliesIt() async throws {
        let fixture = Fixture()
        let (client, connection) = try await connectedClient(fixture)
        let timeline = client.timeline(fixture.conversation)
        try client.deleteForMe(timeline[0])
        try client.edit(timeline[1], text: "reply, edited")
        #expect(client.timeline(fixture.conversation).map(\.text) == ["reply, edited", "last"], "both show at once")
        let hide = try await eventually("hide") { connection.sentActions.first }
        connection.push(.acted(ref: hide.ref, message: try #require(held(client, fixture, 1)), duplicate: false))
        let edit = try await eventually("edit") { connection.sentActions.count == 2 ? connection.sentActions[1] : nil }
        #expect(held(client, fixture, 1) == nil, "the answer to a hide removes, it does not store")
        var edited = try #require(held(client, fixture, 2))
        edited.text = "reply, edited"
        edited.editedAt = Timestamp(milliseconds: 7000)
        connection.push(.acted(ref: edit.ref, message: edited, duplicate: false))
        _ = try await eventually("edited") { held(client, fixture, 2)?.editedAt != nil ? true : nil }
        #expect(client.outbox.entries.isEmpty && client.timeline(fixture.conversation).map(\.text) == ["reply, edited", "last"])
    }
}
