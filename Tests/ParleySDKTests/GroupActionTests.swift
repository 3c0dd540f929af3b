import Foundation
import ParleyCore
import ParleySDK
import ParleyViewModels
import Testing

/// Group actions against fakes: idempotency keys, invitations, and what the chat offers to whom.
@MainActor
@Suite struct GroupActionTests {
    static let noAnswer = ParleyClientError(status: 0, code: nil, message: "Cannot reach the server.")

    func created(_ f: GroupFixture) -> (String, ClientMessageID) -> API.GroupActionResponse {
        { name, clientId in
            let entry = Message(
                id: .random(), conversationId: f.group, seq: 1, senderId: f.me.id, clientId: clientId, text: "", createdAt: Timestamp(milliseconds: 1001),
                entry: GroupEntry(type: .created, userIds: [f.grace.id], title: "Trip"))
            return API.GroupActionResponse(conversation: f.summary(lastSeq: 1, myRead: 1), entry: entry, invited: [f.alan.id], duplicate: name != "create")
        }
    }

    @Test func aCreateTriedAgainAfterNoAnswerReusesItsClientId() async throws {
        let f = GroupFixture()
        f.api.answer = created(f)
        let client = try f.base.makeClient()
        f.api.failures = [Self.noAnswer]
        let group = try await client.createGroup(title: "  Trip ", members: [f.grace.id, f.alan.id, f.me.id])
        #expect(f.api.actions.count == 2 && f.api.actions[0].clientId == f.api.actions[1].clientId, "retried by itself, same id")
        #expect(group.conversation.id == f.group && group.invited == [f.alan.id])
        #expect(client.conversations[f.group]?.title == "Trip" && client.timeline(f.group).first?.entry?.type == .created)

        // No answer three times: it fails clearly, and the user's next try is the same action.
        f.api.failures = [Self.noAnswer, Self.noAnswer, Self.noAnswer]
        await #expect(throws: ParleyClientError.self) { try await client.createGroup(title: "Again", members: [f.grace.id]) }
        let kept = f.api.actions[2].clientId
        #expect(f.api.actions.count == 5 && f.api.actions.suffix(3).allSatisfy { $0.clientId == kept })
        // Even after a restart.
        let restarted = try f.base.makeClient()
        try await restarted.createGroup(title: "Again", members: [f.grace.id])
        #expect(f.api.actions.last?.clientId == kept)
        // Answered: the same thing done again is a new action.
        try await restarted.createGroup(title: "Again", members: [f.grace.id])
        #expect(f.api.actions.last?.clientId != kept)
    }

    @Test func aRefusalIsNotRetriedAndForgetsTheKey() async throws {
        let f = GroupFixture()
        let (client, _) = try await f.connectedClient()
        f.api.failures = [ParleyClientError(status: 403, code: .forbidden, message: "Only admins can rename.")]
        await #expect(throws: ParleyClientError.self) { try await client.rename(f.group, to: "X") }
        #expect(f.api.actions.count == 1)
        try await client.rename(f.group, to: "X")
        #expect(f.api.actions.count == 2 && f.api.actions[0].clientId != f.api.actions[1].clientId)
        await #expect(throws: Validation.Failure.self) { try await client.rename(f.group, to: "   ") }
        #expect(f.api.actions.count == 2, "a bad title never leaves the device")
    }

    @Test func invitationsArriveOnTheStreamAndAreAcceptedOrDeclined() async throws {
        let f = GroupFixture()
        let waiting = f.invitation(title: "Book club", at: 1000)
        f.api.pendingInvitations = [waiting]
        let client = try f.base.makeClient()
        let list = ConversationListViewModel(client: client)
        let connection = try await f.base.connect(client)
        _ = try await eventually("read at connection") { client.invitations.count == 1 ? true : nil }
        #expect(list.state == .loaded, "an invitation is something to show")
        let party = f.invitation(to: f.group, title: "Trip", from: f.alan, at: 9000)
        connection.push(.event(StreamEvent(position: 1, payload: .invitation(party))))
        _ = try await eventually("two") { client.invitations.count == 2 ? true : nil }
        #expect(list.invitations.map(\.title) == ["Trip", "Book club"], "newest first")
        #expect(list.invitations[0].detail == "Alan Turing (@alan) invited you · 3 members")

        f.api.answer = { _, clientId in
            let joined = Message(
                id: .random(), conversationId: f.group, seq: 4, senderId: f.me.id, clientId: clientId, text: "", createdAt: Timestamp(milliseconds: 9500),
                entry: GroupEntry(type: .joined))
            return API.GroupActionResponse(conversation: f.summary(lastSeq: 4, myRead: 4, myRole: .member), entry: joined, duplicate: false)
        }
        let chat = try #require(await list.accept(list.invitations[0]))
        #expect(chat.title == "Trip" && client.invitations.map(\.title) == ["Book club"])
        guard case .entry(_, let lines, _)? = chat.items.last else { Issue.record("no joined line"); return }
        #expect(lines == ["You joined"])
        await list.decline(list.invitations[0])
        #expect(client.invitations.isEmpty && list.actionError == nil)
        // An invitation gone meanwhile (withdrawn, lapsed, its group closed): Accept says so and it leaves the list.
        let gone = f.invitation(to: ConversationID(rawValue: "grp_" + UUID().uuidString.lowercased()), title: "Closed club", from: f.alan, at: 9900)
        connection.push(.event(StreamEvent(position: 2, payload: .invitation(gone))))
        _ = try await eventually("back") { client.invitations.count == 1 ? true : nil }
        f.api.failures = [ParleyClientError(status: 404, code: .invitationNotFound, message: "No such invitation.")]
        #expect(await list.accept(list.invitations[0]) == nil)
        #expect(list.actionError == "No such invitation." && client.invitations.isEmpty)
    }

    @Test func aGroupChatShowsSendersEntriesMembersAndOffersActionsByRole() async throws {
        let f = GroupFixture()
        let edsger = User(id: .random(), username: "edsger", displayName: "Edsger Dijkstra", createdAt: Timestamp(milliseconds: 0))
        f.api.users = [edsger]
        let hello = f.message(5, from: f.me, "hello")
        f.api.pages[f.group] = [
            f.message(1, from: f.grace, entry: GroupEntry(type: .created, userIds: [f.me.id, f.alan.id, edsger.id], title: "Trip")),
            f.message(2, from: f.grace, "hi all"),
            f.message(3, from: edsger, "bye all"),
            f.message(4, from: edsger, entry: GroupEntry(type: .left)),
            hello,
        ]
        let (client, _) = try await f.connectedClient(
            f.summary(lastSeq: 5, myRead: 5, myRole: .admin, members: [f.member(f.grace, .owner), f.member(f.alan, .member)], lastMessage: hello))
        let chat = ChatViewModel(client: client, conversation: f.group, otherUser: nil)
        await chat.load()
        let shown: [String] = chat.items.compactMap {
            switch $0 {
            case .separator: nil
            case .entry(_, let lines, _): lines.joined(separator: " / ")
            case .message(let item, let mine, _, let sender): "\(mine ? "me" : sender ?? "?"): \(item.text)"
            }
        }
        #expect(
            shown == [
                "Grace Hopper created the group “Trip” / Grace Hopper added you, Alan Turing and Edsger Dijkstra", "Grace Hopper: hi all",
                "Edsger Dijkstra: bye all", "Edsger Dijkstra left", "me: hello",
            ], "a departed member's name is fetched by id")
        #expect(chat.title == "Trip" && chat.presenceText.isEmpty && chat.membersText == "Grace Hopper, Alan Turing, You")
        #expect(chat.members.map(\.name) == ["Grace Hopper", "You", "Alan Turing"])
        #expect(chat.members.map(\.roleLabel) == ["Owner", "Admin", nil])
        let (owner, alan) = (chat.members[0], chat.members[2])
        #expect(chat.canManageMembers && !chat.canChangeRoles && chat.canLeave)
        #expect(!chat.canRemove(owner) && chat.canRemove(alan) && !chat.canRemove(chat.members[1]))
        let madeAdmin = await chat.makeAdmin(alan)
        #expect(!madeAdmin && chat.errorMessage == "Only the owner can make admins.")
        let removed = await chat.remove(alan)
        #expect(removed && f.api.actions.map(\.name) == ["remove"])
        #expect(ConversationListViewModel(client: client).rows.first?.preview == "You: hello")
    }

    @Test func aMemberIsOfferedNoAdminActions() async throws {
        let f = GroupFixture()
        let (client, _) = try await f.connectedClient(f.summary(myRole: .member, members: [f.member(f.grace, .owner), f.member(f.alan, .admin)]))
        let chat = ChatViewModel(client: client, conversation: f.group, otherUser: nil)
        #expect(!chat.canManageMembers && !chat.canChangeRoles && chat.members.allSatisfy { !chat.canRemove($0) })
        let renamed = await chat.rename(to: "Mine now")
        let added = await chat.addMembers([f.grace])
        let dismissed = await chat.dismissAdmin(chat.members[1])
        #expect(!renamed && added == nil && !dismissed)
        #expect(f.api.actions.isEmpty, "nothing reached the server")
        let left = await chat.leave()
        #expect(left && f.api.actions.map(\.name) == ["leave"])
    }
}
