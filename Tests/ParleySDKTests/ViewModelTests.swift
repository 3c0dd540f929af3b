import Foundation
import ParleySDK
import ParleyCore
import ParleyViewModels
import Testing

@MainActor
@Suite struct ConversationListViewModelTests {
    let formatter = SmartDateFormatter(locale: Locale(identifier: "en_US"), timeZone: TimeZone(identifier: "UTC")!)

    @Test func loadingThenEmpty() async throws {
        let fixture = Fixture()
        let client = try fixture.makeClient()
        let list = ConversationListViewModel(client: client, formatter: formatter)
        #expect(list.state == .loading)
        _ = try await fixture.connect(client)
        _ = try await eventually("empty") { list.state == .empty ? true : nil }
        #expect(ConversationListViewModel.emptyText == "No conversations yet")
    }

    @Test func rowsShowNamePreviewUnreadOnlineAndSmartTime() async throws {
        let fixture = Fixture()
        let noon = Date(timeIntervalSince1970: 1_767_268_800)  // 2026-01-01 12:00 UTC
        let last = fixture.message(3, from: fixture.me, "see you\nsoon", at: Int64(noon.timeIntervalSince1970 * 1000) - 3_600_000)
        fixture.api.conversationList = [fixture.summary(lastSeq: 3, lastMessage: last, myRead: 1, activity: last.createdAt.milliseconds, online: true)]
        let client = try fixture.makeClient()
        let list = ConversationListViewModel(client: client, formatter: formatter, now: { noon })
        _ = try await fixture.connect(client)
        let row = try await eventually("a row") { list.rows.first }
        #expect(row.title == "Grace Hopper" && row.initials == "GH")
        #expect(row.preview == "You: see you", "my message gets 'You: ', first line only")
        #expect(row.unreadCount == 2 && row.isOnline)
        #expect(row.timestamp == formatter.time(last.createdAt.date))
        #expect(list.state == .loaded)
    }

    @Test func theListUpdatesLiveAndSortsByActivity() async throws {
        let fixture = Fixture()
        let alan = User(id: .random(), username: "alan", displayName: "Alan Turing", createdAt: Timestamp(milliseconds: 0))
        let other = ConversationSummary(
            id: .direct(fixture.me.id, alan.id), kind: .direct, createdAt: Timestamp(milliseconds: 0), lastSeq: 0, lastMessage: nil,
            lastActivityAt: Timestamp(milliseconds: 5000), unreadCount: 0,
            members: [
                ConversationMember(userId: fixture.me.id, username: "ada", displayName: "Ada", deliveredSeq: 0, readSeq: 0),
                ConversationMember(userId: alan.id, username: "alan", displayName: "Alan Turing", deliveredSeq: 0, readSeq: 0),
            ])
        fixture.api.conversationList = [fixture.summary(activity: 1000), other]
        let client = try fixture.makeClient()
        let list = ConversationListViewModel(client: client, formatter: formatter)
        let connection = try await fixture.connect(client)
        _ = try await eventually("two rows") { list.rows.count == 2 ? true : nil }
        #expect(list.rows.map(\.title) == ["Alan Turing", "Grace Hopper"])
        connection.push(.event(StreamEvent(position: 1, payload: .message(fixture.message(1, from: fixture.grace, "ping", at: 9000)))))
        _ = try await eventually("grace on top") { list.rows.first?.title == "Grace Hopper" ? true : nil }
        #expect(list.rows[0].preview == "ping" && list.rows[0].unreadCount == 1)
    }

    @Test func anErrorOffersRetry() async throws {
        let fixture = Fixture()
        fixture.api.failConversations = ParleyClientError(status: 0, code: nil, message: "Cannot reach the server.")
        let client = try fixture.makeClient()
        let list = ConversationListViewModel(client: client, formatter: formatter)
        _ = try await fixture.connect(client)
        _ = try await eventually("error") { list.state == .error("Cannot reach the server.") ? true : nil }
        fixture.api.failConversations = nil
        await list.retry()
        #expect(list.state == .empty)
    }

    @Test func searchAndStartAChat() async throws {
        let fixture = Fixture()
        fixture.api.users = [fixture.grace]
        let client = try fixture.makeClient()
        let list = ConversationListViewModel(client: client, formatter: formatter)
        list.searchQuery = "gra"
        await list.search()
        #expect(list.searchResults == [fixture.grace])
        let chat = list.startChat(with: fixture.grace)
        #expect(chat.conversation == fixture.conversation && chat.title == "Grace Hopper")
    }
}

@MainActor
@Suite struct ChatViewModelTests {
    let formatter = SmartDateFormatter(locale: Locale(identifier: "en_US"), timeZone: TimeZone(identifier: "UTC")!)

    @Test func composerRules() throws {
        let fixture = Fixture()
        let chat = ChatViewModel(client: try fixture.makeClient(), conversation: fixture.conversation, otherUser: fixture.grace)
        #expect(!chat.canSend)
        chat.messageText = "  \n "
        #expect(!chat.canSend, "whitespace only never sends")
        chat.messageText = "\u{200B}\u{3164}\u{2800}"
        #expect(!chat.canSend, "nor invisible characters only: an empty bubble")
        chat.messageText = String(repeating: "🙂", count: 9_000)
        #expect(chat.canSend && !chat.showsCharacterCounter && chat.remainingCharacters == 1_000)
        chat.messageText = String(repeating: "🙂", count: 9_001)
        #expect(chat.showsCharacterCounter)
        chat.messageText = String(repeating: "🙂", count: 10_000)
        #expect(chat.canSend && chat.remainingCharacters == 0)
        chat.messageText = String(repeating: "🙂", count: 10_001)
        #expect(!chat.canSend && chat.remainingCharacters == -1)
    }

    @Test func aNewChatSaysHelloAndItsFirstMessageCreatesTheConversation() async throws {
        let fixture = Fixture()
        let client = try fixture.makeClient()
        let connection = try await fixture.connect(client)
        let chat = ChatViewModel(client: client, conversation: fixture.conversation, otherUser: fixture.grace, formatter: formatter)
        #expect(chat.showsEmptyState && ChatViewModel.emptyText == "Say hello!")
        chat.messageText = "  hello Grace  "
        chat.send()
        #expect(chat.messageText.isEmpty)
        guard case .message(let item, true, _, _)? = chat.items.last else { Issue.record("no pending message"); return }
        #expect(item.text == "hello Grace" && item.status == .sending)
        let request = try await eventually("sent frame") { connection.sentMessages.first }
        #expect(request.recipientId == fixture.grace.id && request.conversationId == nil && request.clientId == item.id)
    }

    /// Protocol: a `sent` with `pos` is the sender's own event at that position, so it moves the
    /// saved resume position; one without `pos` does not.
    @Test func aSentAckWithAPositionMovesTheResumePosition() async throws {
        let fixture = Fixture()
        fixture.api.conversationList = [fixture.summary()]
        let client = try fixture.makeClient()
        let connection = try await fixture.connect(client, head: 4)
        let saved = try LocalStore(path: fixture.directory.appendingPathComponent("store.sqlite").path)
        _ = try await eventually("head saved") { try? saved.position() == 4 ? true : nil }
        let chat = ChatViewModel(client: client, conversation: fixture.conversation, otherUser: nil, formatter: formatter)
        chat.messageText = "one"
        chat.send()
        let request = try await eventually("send") { connection.sentMessages.first }
        connection.push(.sent(ref: nil, message: fixture.message(1, from: fixture.me, "one", clientId: request.clientId), duplicate: false, position: 5))
        _ = try await eventually("position 5") { try? saved.position() == 5 ? true : nil }
        connection.push(.sent(ref: nil, message: fixture.message(1, from: fixture.me, "one", clientId: request.clientId), duplicate: true))
        connection.push(.event(StreamEvent(position: 6, payload: .message(fixture.message(2, from: fixture.grace, "two")))))
        _ = try await eventually("position 6") { try? saved.position() == 6 ? true : nil }
        #expect(chat.items.filter { if case .message = $0 { true } else { false } }.count == 2)
    }

    @Test func statusesMoveFromSendingToReadAndFailuresCanBeRetried() async throws {
        let fixture = Fixture()
        fixture.api.conversationList = [fixture.summary()]
        let client = try fixture.makeClient()
        let connection = try await fixture.connect(client)
        _ = try await eventually("conversation") { client.conversations[fixture.conversation] }
        let chat = ChatViewModel(client: client, conversation: fixture.conversation, otherUser: nil, formatter: formatter)
        func status() -> MessageStatus? { chat.items.compactMap { if case .message(let item, true, _, _) = $0 { item.status } else { nil } }.last ?? nil }
        chat.messageText = "one"
        chat.send()
        #expect(status() == .sending)
        let request = try await eventually("send") { connection.sentMessages.first }
        connection.push(.sent(ref: nil, message: fixture.message(1, from: fixture.me, "one", clientId: request.clientId), duplicate: false))
        _ = try await eventually("sent") { status() == .sent ? true : nil }
        connection.push(
            .event(
                StreamEvent(
                    position: 1, payload: .receipt(ReceiptUpdate(conversationId: fixture.conversation, userId: fixture.grace.id, deliveredSeq: 1, readSeq: 0))))
        )
        _ = try await eventually("delivered") { status() == .delivered ? true : nil }
        connection.push(
            .event(
                StreamEvent(
                    position: 2, payload: .receipt(ReceiptUpdate(conversationId: fixture.conversation, userId: fixture.grace.id, deliveredSeq: 1, readSeq: 1))))
        )
        _ = try await eventually("read") { status() == .read ? true : nil }
        #expect(chat.items.filter { if case .message = $0 { true } else { false } }.count == 1, "the ack and the stream echo collapse")

        chat.messageText = "two"
        chat.send()
        let second = try await eventually("second send") { connection.sentMessages.count == 2 ? connection.sentMessages[1] : nil }
        connection.push(.error(ref: nil, clientId: second.clientId, code: .textInvalidCharacters, message: "No control characters."))
        _ = try await eventually("failed") { status() == .failed(reason: "No control characters.") ? true : nil }
        let list = ConversationListViewModel(client: client)
        #expect(list.rows.map(\.notSentCount) == [1], "the list shows a chat with a message not sent")
        guard case .message(let failed, _, _, _)? = chat.items.last else { return }
        chat.retry(failed)
        _ = try await eventually("resent") { connection.sentMessages.count == 3 ? true : nil }
        #expect(list.rows.map(\.notSentCount) == [0], "sending again, it is no longer counted")
        #expect(connection.sentMessages[2].clientId == second.clientId, "a retry keeps the client id")
    }

    @Test func separatorsTypingPresenceAndReadMarking() async throws {
        let fixture = Fixture()
        let now = Date(timeIntervalSince1970: 1_767_268_800)  // 2026-01-01 12:00 UTC
        let nowMs = Int64(now.timeIntervalSince1970 * 1000)
        fixture.api.conversationList = [fixture.summary(lastSeq: 3, activity: nowMs)]
        fixture.api.pages[fixture.conversation] = [
            fixture.message(1, from: fixture.grace, "old", at: nowMs - 3 * 86_400_000),
            fixture.message(2, from: fixture.grace, "yesterday", at: nowMs - 86_400_000),
            fixture.message(3, from: fixture.grace, "today", at: nowMs - 60_000),
        ]
        let client = try fixture.makeClient()
        let connection = try await fixture.connect(client)
        _ = try await eventually("conversation") { client.conversations[fixture.conversation] }
        let chat = ChatViewModel(client: client, conversation: fixture.conversation, otherUser: nil, formatter: formatter, now: { now })
        await chat.load()
        let separators = chat.items.compactMap { if case .separator(let label) = $0 { label } else { nil } }
        #expect(separators == ["Monday", "Yesterday", "Today"])

        connection.push(.typing(conversationId: fixture.conversation, userId: fixture.grace.id, isTyping: true))
        connection.push(.presence(userId: fixture.grace.id, online: true, lastSeenAt: nil))
        _ = try await eventually("online") { chat.presenceText == "online" ? true : nil }
        #expect(ChatViewModel(client: client, conversation: fixture.conversation, otherUser: nil).otherUserTyping)
        connection.push(.presence(userId: fixture.grace.id, online: false, lastSeenAt: Timestamp(milliseconds: nowMs - 86_400_000)))
        _ = try await eventually("last seen") { chat.presenceText == "last seen Yesterday" ? true : nil }

        chat.markVisible(upTo: 3)
        let receipt = try await eventually("read receipt") {
            connection.sent.lazy.compactMap { if case .receipt(_, _, _, let read?) = $0 { read } else { nil } }.first
        }
        #expect(receipt == 3 && client.unreadCount(fixture.conversation) == 0)
    }

    @Test func typingNotificationsAreThrottled() async throws {
        let fixture = Fixture()
        fixture.api.conversationList = [fixture.summary()]
        let client = try fixture.makeClient()
        let connection = try await fixture.connect(client)
        _ = try await eventually("conversation") { client.conversations[fixture.conversation] }
        var clock = Date(timeIntervalSince1970: 1000)
        let chat = ChatViewModel(client: client, conversation: fixture.conversation, otherUser: nil, now: { clock })
        for text in ["h", "he", "hel", "hell"] { chat.messageText = text }
        clock += 3.5
        chat.messageText = "hello"
        chat.messageText = ""
        let typing = connection.sent.compactMap { if case .typing(_, let on, _) = $0 { on } else { nil } }
        #expect(typing == [true, true, false])
    }

    @Test func olderPagesLoadOnRequest() async throws {
        let fixture = Fixture()
        fixture.api.conversationList = [fixture.summary(lastSeq: 120)]
        fixture.api.pages[fixture.conversation] = (1...120).map { fixture.message(Int64($0), from: fixture.grace, "m\($0)") }
        let client = try fixture.makeClient()
        _ = try await fixture.connect(client)
        _ = try await eventually("conversation") { client.conversations[fixture.conversation] }
        let chat = ChatViewModel(client: client, conversation: fixture.conversation, otherUser: nil)
        await chat.load()
        #expect(client.timeline(fixture.conversation).count == 50 && chat.hasOlder)
        await chat.loadOlder()
        await chat.loadOlder()
        #expect(client.timeline(fixture.conversation).map(\.seq) == (1...120).map { Int64($0) } && !chat.hasOlder)
    }
}

@MainActor
@Suite struct SenderCursorTests {
    /// The server moves a sender's cursors to their own message without a receipt event, so a reply
    /// means the other person has read everything before it.
    @Test func aReplyMarksMyEarlierMessagesRead() async throws {
        let fixture = Fixture()
        fixture.api.conversationList = [fixture.summary(lastSeq: 1, lastMessage: fixture.message(1, from: fixture.me, "question"), myRead: 1)]
        fixture.api.pages[fixture.conversation] = [fixture.message(1, from: fixture.me, "question")]
        let client = try fixture.makeClient()
        let connection = try await fixture.connect(client)
        _ = try await eventually("conversation") { client.conversations[fixture.conversation] }
        try await client.loadLatest(fixture.conversation)
        #expect(client.timeline(fixture.conversation).first?.status == .sent)
        connection.push(.event(StreamEvent(position: 1, payload: .message(fixture.message(2, from: fixture.grace, "answer")))))
        _ = try await eventually("read") { client.timeline(fixture.conversation).first?.status == .read ? true : nil }
    }
}
