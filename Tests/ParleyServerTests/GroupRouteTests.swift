import ParleyTestSupport
import Foundation
import HTTPTypes
import NIOCore
import ParleyCore
import ParleyServer
import ParleyStore
import Testing

/// Groups over REST and WebSocket with three people (docs/protocol.md "Groups"); every response is
/// also held to openapi.yaml by ``TestAPI``.
@Suite struct GroupRouteTests {
    @Test func threePeopleTalkAndARemovedMemberHearsNothingMore() async throws {
        try await TestServer.run { api in try await Self.removal(api) }
    }

    static func removal(_ api: TestAPI) async throws {
        do {
            let (ada, grace, alan) = try await api.threeFriends()
            let g = try await api.socket(grace), l = try await api.socket(alan)
            let created = try await api.createGroup(by: ada, title: "  Trip  ", members: [grace, alan])
            guard let chat = created.conversation else { throw TestFailure("no conversation in \(created)") }
            #expect(chat.title == "Trip")
            #expect(chat.kind == ConversationKind.group)
            #expect(created.invited == [UserID]())
            _ = try await g.message(seq: 1)
            _ = try await l.message(seq: 1)
            let hello = try await api.send("hi @grace and @alan", from: ada, in: chat.id)
            #expect(Set(hello.mentions ?? []) == [grace.id, alan.id])
            #expect(try await g.message(seq: hello.seq).senderId == ada.id)
            // Typing names the typist to every other member.
            g.send(.typing(conversationId: chat.id, isTyping: true))
            try await l.typing(grace.id, isTyping: true)
            // Alan is removed mid-conversation: he sees his removal, then nothing.
            let removed = try await api.action(
                .post, "/v1/conversations/\(chat.id)/members/\(alan.id)/remove", by: ada, API.GroupActionRequest(clientId: .random()))
            #expect(removed.status == .created)
            let removal = try await l.message(seq: hello.seq + 1)
            #expect(removal.entry?.type == .removed && removal.entry?.userIds == [alan.id])
            let after = try await api.send("alan cannot see this", from: grace, in: chat.id)
            _ = try await g.message(seq: after.seq)
            // His stream (what any of his sockets could ever be sent) does not hold it.
            guard case .events(let alanEvents, head: _) = try await api.store.events(of: alan.id, after: 0, limit: 1_000) else {
                throw TestFailure("alan's stream is gone")
            }
            #expect(!alanEvents.contains { if case .message(let m) = $0.payload { m.seq == after.seq && m.conversationId == chat.id } else { false } })
            #expect(await !l.inbox.messages.contains { $0.seq == after.seq && $0.conversationId == chat.id })
            let alanView = try await api.request(.get, "/v1/conversations/\(chat.id)", token: alan.token).decode(ConversationSummary.self)
            #expect(alanView.leftSeq == removal.seq && alanView.members.isEmpty)
            let history = try await api.request(.get, "/v1/conversations/\(chat.id)/messages", token: alan.token).decode(MessagePage.self)
            #expect(history.messages.map(\.seq) == Array(1...removal.seq))
            // Acting on a chat one was removed from: the same 404 as no such chat, its message saying why.
            let rename = try await api.action(.post, "/v1/conversations/\(chat.id)/title", by: alan, API.RenameGroupRequest(clientId: .random(), title: "Mine"))
            #expect(rename.status == .notFound && rename.errorCode == .conversationNotFound)
            let gone = "You are no longer a member of this group."
            #expect((try? rename.decode(ErrorBody.self))?.error.message == gone)
            let leaveAgain = try await api.action(.post, "/v1/conversations/\(chat.id)/leave", by: alan, API.GroupActionRequest(clientId: .random()))
            #expect(leaveAgain.status == .notFound && (try? leaveAgain.decode(ErrorBody.self))?.error.message == gone, "leaving twice")
            let receipt = try await api.request(.post, "/v1/conversations/\(chat.id)/receipts", token: alan.token, json: #"{"readSeq":1}"#)
            #expect(receipt.status == .notFound && receipt.errorCode == .conversationNotFound)
            #expect((try? receipt.decode(ErrorBody.self))?.error.message == gone)
            let send = try await api.request(
                .post, "/v1/messages", token: alan.token, encoding: SendRequest(clientId: .random(), conversationId: chat.id, text: "let me in"))
            #expect(send.status == .notFound && send.errorCode == .conversationNotFound)
            #expect((try? send.decode(ErrorBody.self))?.error.message == "You are no longer a member of this group.", "he saw his removal")
            for (kind, emoji, text) in [(MessageActionKind.react, "👍", nil), (.edit, nil, "edited after"), (.delete, nil, nil)]
                as [(MessageActionKind, String?, String?)]
            {
                let acted = try await api.action(
                    .post, "/v1/conversations/\(chat.id)/messages/\(hello.seq)/actions", by: alan,
                    API.MessageActionBody(clientId: .random(), kind: kind, emoji: emoji, text: text))
                #expect(acted.status == .notFound && acted.errorCode == .conversationNotFound, "\(kind): as a send is")
                #expect((try? acted.decode(ErrorBody.self))?.error.message == "You are no longer a member of this group.")
            }
            let eve = try await api.register("eve")
            let stranger = try await api.request(
                .post, "/v1/messages", token: eve.token, encoding: SendRequest(clientId: .random(), conversationId: chat.id, text: "hello?"))
            #expect(stranger.status == .notFound && (try? stranger.decode(ErrorBody.self))?.error.message == "No such conversation.")
            let strangersReceipt = try await api.request(.post, "/v1/conversations/\(chat.id)/receipts", token: eve.token, json: #"{"readSeq":1}"#)
            #expect((try? strangersReceipt.decode(ErrorBody.self))?.error.message == "No such conversation.", "a stranger learns nothing")
            l.send(.typing(conversationId: chat.id, isTyping: true))
            let typing = try await l.firstError()
            #expect(typing.code == .conversationNotFound && typing.message == gone)
        }
    }

    @Test func badInputGetsClearErrorsAndLeavesNothingHalfDone() async throws {
        try await TestServer.run(configure: { $0.maxGroupMembers = 3 }) { api in
            let (ada, grace, alan) = try await api.threeFriends()
            let extra = try await api.register("extra")
            _ = try await api.send("hi", from: ada, to: extra)
            _ = try await api.send("hi", from: extra, to: ada)
            func create(_ json: String) async throws -> APIResponse { try await api.request(.post, "/v1/groups", token: ada.token, json: json) }
            let id = { (account: Account) in "\"\(account.id)\"" }
            let blank = try await create(#"{"clientId":"\#(UUID())","title":" \n ","memberIds":[\#(id(grace))]}"#)
            #expect(blank.status == .badRequest && blank.errorCode == .invalidTitle)
            let stranger = try await create(#"{"clientId":"\#(UUID())","title":"T","memberIds":[\#(id(grace)),"\#(UUID())"]}"#)
            #expect(stranger.status == .notFound && stranger.errorCode == .userNotFound)
            let twice = try await create(#"{"clientId":"\#(UUID())","title":"T","memberIds":[\#(id(grace)),\#(id(grace))]}"#)
            #expect(twice.status == .badRequest && twice.errorCode == .invalidMembers)
            let myself = try await create(#"{"clientId":"\#(UUID())","title":"T","memberIds":[\#(id(ada))]}"#)
            #expect(myself.status == .badRequest && myself.errorCode == .invalidMembers)
            let tooMany = try await create(#"{"clientId":"\#(UUID())","title":"T","memberIds":[\#(id(grace)),\#(id(alan)),\#(id(extra))]}"#)
            #expect(tooMany.status == .conflict && tooMany.errorCode == .groupFull)
            let fourUnknown = (1...4).map { _ in "\"\(UUID())\"" }.joined(separator: ",")
            let overTheLimit = try await create(#"{"clientId":"\#(UUID())","title":"T","memberIds":[\#(fourUnknown)]}"#)
            #expect(overTheLimit.status == .conflict && overTheLimit.errorCode == .groupFull)
            #expect(String(buffer: overTheLimit.body).contains("at most 3 members"), "this server's limit, not the ceiling")
            let badClient = try await create(#"{"clientId":"nope","title":"T","memberIds":[\#(id(grace))]}"#)
            #expect(badClient.status == .badRequest && badClient.errorCode == .invalidClientId)
            #expect(try await api.conversations(of: grace).allSatisfy { $0.kind == .direct }, "no refused create left a chat behind")

            let chat = try #require(try await api.createGroup(by: ada, title: "T", members: [grace]).conversation).id
            let byMember = try await api.action(
                .post, "/v1/conversations/\(chat)/members", by: grace, API.AddMembersRequest(clientId: .random(), userIds: [alan.id]))
            #expect(byMember.status == .forbidden && byMember.errorCode == .forbidden)
            let ownerRemoved = try await api.action(
                .post, "/v1/conversations/\(chat)/members/\(ada.id)/remove", by: grace, API.GroupActionRequest(clientId: .random()))
            #expect(ownerRemoved.status == .forbidden)
            let toOwner = try await api.request(
                .post, "/v1/conversations/\(chat)/members/\(grace.id)/role", token: ada.token, json: #"{"clientId":"\#(UUID())","role":"owner"}"#)
            #expect(toOwner.status == .badRequest && toOwner.errorCode == .invalidRole)
            let notMember = try await api.action(
                .post, "/v1/conversations/\(chat)/members/\(alan.id)/remove", by: ada, API.GroupActionRequest(clientId: .random()))
            #expect(notMember.status == .notFound && notMember.errorCode == .memberNotFound)
            let already = try await api.action(
                .post, "/v1/conversations/\(chat)/members", by: ada, API.AddMembersRequest(clientId: .random(), userIds: [grace.id]))
            #expect(already.status == .badRequest && already.errorCode == .invalidMembers)
            let entryInfo = try await api.request(.get, "/v1/conversations/\(chat)/messages/1/info", token: ada.token)
            #expect(entryInfo.status == .notFound && entryInfo.errorCode == .messageNotFound, "an entry has no receipts")
            let adas = try await api.send("mine", from: ada, in: chat)
            let info = try await api.request(.get, "/v1/conversations/\(chat)/messages/\(adas.seq)/info", token: grace.token)
            #expect(info.status == .forbidden && info.errorCode == .forbidden, "only the sender asks")
            // A dot pair inside an API path is an unknown conversation, not a malformed request
            // (the web client's file server once answered it with a bare 400).
            let dots = try await api.request(.get, "/v1/conversations/%F2%A3%9A%80..T/messages/1/info", token: ada.token)
            #expect(dots.status == .notFound && dots.errorCode == .conversationNotFound)
            let noGroup = try await api.action(.post, "/v1/conversations/grp_\(UUID())/leave", by: ada, API.GroupActionRequest(clientId: .random()))
            #expect(noGroup.status == .notFound && noGroup.errorCode == .conversationNotFound)
            let summary = try await api.request(.get, "/v1/conversations/\(chat)", token: ada.token).decode(ConversationSummary.self)
            #expect(summary.lastSeq == 2 && summary.members.count == 2, "every refused action wrote nothing")
        }
    }

    @Test func strangersAreInvitedAndAcceptOrDeclineAndRetriesAreIdempotent() async throws {
        try await TestServer.run { api in
            let (ada, grace, _) = try await api.threeFriends()
            let eve = try await api.register("eve")
            let e = try await api.socket(eve)
            let clientId = ClientMessageID.random()
            let request = API.CreateGroupRequest(clientId: clientId, title: "Book club", memberIds: [grace.id, eve.id])
            let first = try await api.action(.post, "/v1/groups", by: ada, request)
            let retry = try await api.action(.post, "/v1/groups", by: ada, request)
            #expect(first.status == .created && retry.status == .ok)
            let created = try first.decode(API.GroupActionResponse.self), again = try retry.decode(API.GroupActionResponse.self)
            #expect(again.duplicate && again.conversation?.id == created.conversation?.id && again.invited == [eve.id])
            let chat = try #require(created.conversation?.id)
            let invitation = try await e.inbox.waitFor("invitation") { frames in
                frames.lazy.compactMap { if case .event(let event) = $0, case .invitation(let invitation) = event.payload { invitation } else { nil } }.first
            }
            #expect(invitation.title == "Book club" && invitation.inviter.id == ada.id && invitation.memberCount == 2)
            #expect(await e.inbox.messages.isEmpty, "nothing of the chat before accepting")
            let pending = try await api.request(.get, "/v1/invitations", token: eve.token).decode(API.InvitationList.self)
            #expect(pending.invitations.map(\.conversationId) == [chat])
            let accept = API.GroupActionRequest(clientId: .random())
            let joined = try await api.action(.post, "/v1/invitations/\(chat)/accept", by: eve, accept)
            let joinedAgain = try await api.action(.post, "/v1/invitations/\(chat)/accept", by: eve, accept)
            #expect(joined.status == .created && joinedAgain.status == .ok)
            #expect(try joined.decode(API.GroupActionResponse.self).conversation?.members.count == 3)
            _ = try await e.message(seq: 2)
            // Declined: gone for good, and the chat learns nothing.
            let other = try #require(try await api.createGroup(by: ada, title: "Other", members: [eve]).conversation?.id)
            #expect(try await api.request(.post, "/v1/invitations/\(other)/decline", token: eve.token).status == .noContent)
            #expect(try await api.request(.post, "/v1/invitations/\(other)/decline", token: eve.token).status == .notFound)
            let view = try await api.request(.get, "/v1/conversations/\(other)", token: ada.token).decode(ConversationSummary.self)
            #expect(view.lastSeq == 1 && view.members.map(\.userId) == [ada.id])
        }
    }

    @Test func receiptsReachTheSenderOnceEveryoneHasReadAndMessageInfoListsWho() async throws {
        try await TestServer.run { api in
            let (ada, grace, alan) = try await api.threeFriends()
            let chat = try #require(try await api.createGroup(by: ada, title: "Reads", members: [grace, alan]).conversation?.id)
            let a = try await api.socket(ada)
            let message = try await api.send("did you read this?", from: ada, in: chat)
            for reader in [grace, alan] {
                let moved = try await api.request(
                    .post, "/v1/conversations/\(chat)/receipts", token: reader.token, encoding: API.ReceiptRequest(readSeq: message.seq))
                #expect(moved.status == .ok)
                if reader.id == grace.id {
                    let info = try await api.request(.get, "/v1/conversations/\(chat)/messages/\(message.seq)/info", token: ada.token)
                        .decode(MessageInfo.self)
                    #expect(info.readBy == [grace.id] && info.pending == [alan.id])
                }
            }
            let summary = try await a.inbox.waitFor("receipt summary") { frames in
                frames.lazy.compactMap { if case .event(let event) = $0, case .receiptSummary(let summary) = event.payload { summary } else { nil } }.first
            }
            #expect(summary.everyoneReadSeq == message.seq && summary.conversationId == chat)
            #expect(await a.inbox.streamEvents.allSatisfy { if case .receipt = $0.payload { false } else { true } }, "no per-member receipts in groups")
            let list = try await api.conversations(of: grace)
            #expect(list.first { $0.id == chat }?.unreadCount == 0)
        }
    }

    @Test func createsAndAddsAreRateLimitedPerUser() async throws {
        try await TestServer.run(configure: {
            $0.groupActionsPerHour = 2; $0.stopRateLimitClock()
        }) { api in
            let (ada, grace, _) = try await api.threeFriends()
            for _ in 0..<2 { _ = try await api.createGroup(by: ada, title: "G", members: [grace]) }
            let third = try await api.action(.post, "/v1/groups", by: ada, API.CreateGroupRequest(clientId: .random(), title: "G", memberIds: [grace.id]))
            #expect(third.status == .tooManyRequests && third.errorCode == .rateLimited && third.headers[.retryAfter] != nil)
        }
    }
}

extension TestAPI {
    /// Ada, Grace and Alan, where Ada has exchanged messages with each of the others.
    func threeFriends() async throws -> (Account, Account, Account) {
        let ada = try await register("ada"), grace = try await register("grace"), alan = try await register("alan")
        for friend in [grace, alan] {
            _ = try await send("hi", from: ada, to: friend)
            _ = try await send("hi!", from: friend, to: ada)
        }
        return (ada, grace, alan)
    }

    func action<Body: Encodable>(_ method: HTTPRequest.Method, _ uri: String, by account: Account, _ body: Body) async throws -> APIResponse {
        try await request(method, uri, token: account.token, encoding: body)
    }

    func createGroup(by owner: Account, title: String, members: [Account]) async throws -> API.GroupActionResponse {
        let response = try await action(
            .post, "/v1/groups", by: owner, API.CreateGroupRequest(clientId: .random(), title: title, memberIds: members.map(\.id)))
        guard response.status == .created else { throw TestFailure("create group: \(response.status) \(String(buffer: response.body))") }
        return try response.decode(API.GroupActionResponse.self)
    }
}
