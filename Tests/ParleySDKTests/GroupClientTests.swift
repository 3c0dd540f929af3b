import Foundation
import ParleyCore
import ParleySDK
import ParleyViewModels
import Testing

/// The SDK's group rules against fakes: entries, unread counts, the receipt aggregate, removal, typing.
@MainActor
@Suite struct GroupClientTests {
    @Test func anEntryChangesTheSummaryAtOnceThenTheGroupIsReadAgain() async throws {
        let f = GroupFixture()
        let (client, connection) = try await f.connectedClient(f.summary(lastSeq: 1, myRead: 1))
        let edsger = User(id: .random(), username: "edsger", displayName: "Edsger", createdAt: Timestamp(milliseconds: 0))
        f.api.conversationList = [
            f.summary(title: "Trip 2", lastSeq: 2, myRead: 1, members: [f.member(f.grace, .admin), f.member(f.alan, .member), f.member(edsger, .member)])
        ]
        connection.push(f.event(1, f.message(2, from: f.grace, entry: GroupEntry(type: .renamed, title: "Trip 2"))))
        _ = try await eventually("the entry") { client.conversations[f.group]?.lastSeq == 2 ? true : nil }
        #expect(client.conversations[f.group]?.title == "Trip 2", "the title changes with the entry, before the read")
        _ = try await eventually("the group read again") { client.conversations[f.group]?.members.count == 4 ? true : nil }
        #expect(client.conversations[f.group]?.members.first { $0.userId == f.grace.id }?.role == .admin)
        #expect(client.unreadCount(f.group) == 0, "an entry is never unread")
    }

    @Test func unreadCountsSkipEntriesAndMineAndAreCountedAgainWhenRead() async throws {
        let f = GroupFixture()
        let (client, connection) = try await f.connectedClient()
        connection.push(f.event(1, f.message(1, from: f.grace, "hi")))
        connection.push(f.event(2, f.message(2, from: f.grace, entry: GroupEntry(type: .added, userIds: [UserID.random()]))))
        _ = try await eventually("two") { client.conversations[f.group]?.lastSeq == 2 ? true : nil }
        #expect(client.unreadCount(f.group) == 1)
        connection.push(f.event(3, f.message(3, from: f.me, "from my phone")))
        _ = try await eventually("mine") { client.conversations[f.group]?.lastSeq == 3 ? true : nil }
        #expect(client.unreadCount(f.group) == 0, "sending reads everything before it")
        connection.push(f.event(4, f.message(4, from: f.grace, "@ada look", mentions: [f.me.id])))
        connection.push(f.event(5, f.message(5, from: f.alan, "and this")))
        _ = try await eventually("five") { client.conversations[f.group]?.lastSeq == 5 ? true : nil }
        #expect(client.unreadCount(f.group) == 2 && client.mentionCount(f.group) == 1)
        let row = try #require(ConversationListViewModel(client: client).rows.first)
        #expect(row.unreadCount == 2 && row.mentionCount == 1 && row.isGroup && row.title == "Trip")
        #expect(row.preview == "Alan Turing: and this")
        client.markRead(f.group, upTo: 4)
        #expect(client.unreadCount(f.group) == 1 && client.mentionCount(f.group) == 0)
    }

    @Test func theReceiptAggregateOnlyMovesForwardAndDrivesMyStatuses() async throws {
        let f = GroupFixture()
        f.api.pages[f.group] = [f.message(1, from: f.me, "one"), f.message(2, from: f.me, "two")]
        let (client, connection) = try await f.connectedClient(f.summary(lastSeq: 2, myRead: 2))
        try await client.loadLatest(f.group)
        #expect(client.timeline(f.group).map(\.status) == [.sent, .sent])
        connection.push(
            .event(StreamEvent(position: 1, payload: .receiptSummary(ReceiptSummary(conversationId: f.group, everyoneDeliveredSeq: 2, everyoneReadSeq: 1)))))
        _ = try await eventually("statuses") { client.timeline(f.group).map(\.status) == [.read, .delivered] ? true : nil }
        connection.push(
            .event(StreamEvent(position: 2, payload: .receiptSummary(ReceiptSummary(conversationId: f.group, everyoneDeliveredSeq: 1, everyoneReadSeq: 0)))))
        connection.push(.event(StreamEvent(position: 3, payload: .message(f.message(3, from: f.grace, "ok")))))
        _ = try await eventually("after") { client.conversations[f.group]?.lastSeq == 3 ? true : nil }
        #expect(client.conversations[f.group]?.everyoneDeliveredSeq == 2 && client.conversations[f.group]?.everyoneReadSeq == 1)
        #expect(client.timeline(f.group).prefix(2).map(\.status) == [.read, .delivered], "one member's cursor never shows as everyone's")
    }

    @Test func aRemovedMemberKeepsTheHistoryButCannotSendAndSeesWhy() async throws {
        let f = GroupFixture()
        let (client, connection) = try await f.connectedClient(f.summary(lastSeq: 1, myRead: 1, myRole: .member, members: [f.member(f.grace, .owner)]))
        let chat = ChatViewModel(client: client, conversation: f.group, otherUser: nil)
        #expect(chat.canSend == false && chat.cannotSendReason == nil, "nothing typed yet")
        f.api.conversationList = [f.summary(lastSeq: 2, myRead: 1, leftSeq: 2)]
        connection.push(.typing(conversationId: f.group, userId: f.grace.id, isTyping: true))
        connection.push(f.event(1, f.message(2, from: f.grace, entry: GroupEntry(type: .removed, userIds: [f.me.id]))))
        _ = try await eventually("left") { client.conversations[f.group]?.leftSeq == 2 ? true : nil }
        chat.messageText = "wait"
        #expect(!chat.canSend && chat.cannotSendReason == ParleyClient.notAMember)
        chat.send()
        #expect(chat.errorMessage == ParleyClient.notAMember && client.outbox.entries.isEmpty)
        #expect(throws: Validation.Failure.self) { try client.send("still here?", in: f.group) }
        #expect(chat.typingText.isEmpty && chat.members.isEmpty && !chat.canLeave && chat.membersText == "You're no longer a member")
        guard case .entry(_, let lines, _)? = chat.items.last else { Issue.record("no entry line"); return }
        #expect(lines == ["Grace Hopper removed you"])
    }

    @Test func typingInAGroupNamesWhoIsTyping() async throws {
        let f = GroupFixture()
        let edsger = f.person("edsger", "Edsger")
        let (_, connection, chat) = try await f.chat(withThird: edsger)
        connection.push(.typing(conversationId: f.group, userId: f.grace.id, isTyping: true))
        _ = try await eventually("one") { chat.typingText == "Grace Hopper is typing…" ? true : nil }
        connection.push(.typing(conversationId: f.group, userId: f.alan.id, isTyping: true))
        _ = try await eventually("two") { chat.typingText == "Grace Hopper and Alan Turing are typing…" ? true : nil }
        connection.push(.typing(conversationId: f.group, userId: edsger.id, isTyping: true))
        _ = try await eventually("three") { chat.typingText == "3 people are typing…" ? true : nil }
        connection.push(f.event(1, f.message(1, from: f.grace, "done")))
        connection.push(.typing(conversationId: f.group, userId: edsger.id, isTyping: false))
        _ = try await eventually("grace sent, edsger stopped") { chat.typingText == "Alan Turing is typing…" ? true : nil }
    }

    /// A newcomer named like a member (a Cyrillic А) cannot pass for her: both show their usernames
    /// wherever the chat names them; names that differ stay bare.
    @Test func membersWhoseNamesReadAlikeAreToldApartByUsername() async throws {
        let f = GroupFixture()
        let impostor = f.person("grace_h", "Grace Ноpper")
        let (client, connection, chat) = try await f.chat(withThird: impostor)
        connection.push(f.event(1, f.message(1, from: f.grace, "The code is 4711")))
        connection.push(f.event(2, f.message(2, from: impostor, "Please send me the code")))
        connection.push(f.event(3, f.message(3, from: f.alan, "?")))
        let senders = {
            chat.items.compactMap { item -> String? in if case .message(_, _, _, let sender) = item { sender } else { nil } }
        }
        _ = try await eventually("three messages") { senders().count == 3 ? true : nil }
        #expect(senders() == ["Grace Hopper (@grace)", "Grace Ноpper (@grace_h)", "Alan Turing"])
        #expect(chat.membersText == "Alan Turing, Grace Hopper (@grace), Grace Ноpper (@grace_h), You", "the header too")
        #expect(client.distinguishableName(of: f.me.id, in: f.group) == f.me.displayName, "I am You: never a look-alike")
        // The impostor leaves: their messages stay told apart from Grace, now the only member of that name.
        f.api.conversationList = [f.summary(lastSeq: 4, members: [f.member(f.grace, .member), f.member(f.alan, .member)])]
        connection.push(f.event(4, f.message(4, from: impostor, entry: GroupEntry(type: .left))))
        _ = try await eventually("the group read again") { client.conversations[f.group]?.members.count == 3 ? true : nil }
        _ = try await eventually("the senders") {
            senders() == ["Grace Hopper", "Grace Ноpper (former member)", "Alan Turing"] ? true : nil
        }
    }

    /// Two chats named "Grace Hopper" in the list (one with a Cyrillic о): each titled with its
    /// username, in the list and in the chat; a third person keeps a bare name.
    @Test func directChatsWithLookAlikeNamesAreTitledWithUsernames() async throws {
        let f = Fixture()
        let impostor = User(id: .random(), username: "grace_h", displayName: "Grace Hоpper", createdAt: Timestamp(milliseconds: 0))
        let alan = User(id: .random(), username: "alan", displayName: "Alan Turing", createdAt: Timestamp(milliseconds: 0))
        let direct = { (other: User, at: Int64) in
            ConversationSummary(
                id: .direct(f.me.id, other.id), kind: .direct, createdAt: Timestamp(milliseconds: 0), lastSeq: 0, lastMessage: nil,
                lastActivityAt: Timestamp(milliseconds: at), unreadCount: 0,
                members: [f.me, other].map {
                    ConversationMember(userId: $0.id, username: $0.username, displayName: $0.displayName, deliveredSeq: 0, readSeq: 0)
                })
        }
        f.api.conversationList = [f.summary(activity: 3000), direct(impostor, 2000), direct(alan, 1000)]
        let client = try f.makeClient()
        _ = try await f.connect(client)
        let list = ConversationListViewModel(client: client)
        _ = try await eventually("three chats") { list.rows.count == 3 ? true : nil }
        #expect(list.rows.map(\.title) == ["Grace Hopper (@grace)", "Grace Hоpper (@grace_h)", "Alan Turing"])
        let chat = ChatViewModel(client: client, conversation: .direct(f.me.id, impostor.id), otherUser: nil)
        #expect(chat.title == "Grace Hоpper (@grace_h)")
    }

    @Test func theLocalStoreKeepsGroupsAndReadsWhatOlderVersionsWrote() async throws {
        let f = GroupFixture()
        let path = f.base.directory.appendingPathComponent("store.sqlite").path
        let created = f.message(1, from: f.grace, entry: GroupEntry(type: .created, userIds: [f.me.id], title: "Trip"))
        let summary = f.summary(lastSeq: 2, unread: 1, mentions: 1, leftSeq: 2, delivered: 1, read: 1, lastMessage: created)
        do {
            let store = try LocalStore(path: path)
            try store.save(conversations: [summary])
            try store.save(messages: [created, f.message(2, from: f.alan, "@ada", mentions: [f.me.id])])
            try store.save(invitations: [f.invitation()])
        }
        let reopened = try LocalStore(path: path)
        #expect(try reopened.conversations() == [summary])
        #expect(try reopened.messages(in: f.group).map(\.entry) == [created.entry, nil])
        #expect(try reopened.messages(in: f.group).last?.mentions == [f.me.id])
        #expect(try reopened.invitations().map(\.title) == ["Party"])
        // A row as the version before groups wrote it: no kind "group", no title, role or entry.
        let old =
            #"{"createdAt":0,"id":"dm_a_b","kind":"direct","lastActivityAt":5,"lastSeq":1,"members":[{"deliveredSeq":1,"displayName":"Ada","readSeq":1,"userId":"a","username":"ada"}],"unreadCount":0}"#
        let decoded = try JSONDecoder().decode(ConversationSummary.self, from: Data(old.utf8))
        #expect(decoded.title == nil && decoded.leftSeq == nil && decoded.members.first?.role == nil && decoded.kind == .direct)
        #expect(String(decoding: try WireFormat.encoder().encode(decoded), as: UTF8.self) == old, "and writes it back the same")
    }
}
