import Foundation
import HTTPTypes
import ParleyCore
import Testing

@Suite struct ConversationRouteTests {
    @Test func createExplicitlyIsIdempotentAndRefusesSelfAndStrangers() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let created = try await api.request(.post, "/v1/conversations", token: alice.token, encoding: API.CreateConversationRequest(userId: bob.id))
            #expect(created.status == .created)
            let again = try await api.request(.post, "/v1/conversations", token: bob.token, encoding: API.CreateConversationRequest(userId: alice.id))
            #expect(again.status == .ok)
            #expect(try created.decode(ConversationSummary.self).id == again.decode(ConversationSummary.self).id)
            let toSelf = try await api.request(.post, "/v1/conversations", token: alice.token, encoding: API.CreateConversationRequest(userId: alice.id))
            #expect(toSelf.status == .forbidden && toSelf.errorCode == .invalidRecipient)
            let toNobody = try await api.request(.post, "/v1/conversations", token: alice.token, encoding: API.CreateConversationRequest(userId: .random()))
            #expect(toNobody.status == .notFound && toNobody.errorCode == .userNotFound)
        }
    }

    @Test func listShowsOtherMemberLastMessageUnreadAndPages() async throws {
        try await TestServer.run { api in
            let me = try await api.register("myself")
            let empty = try await api.request(.get, "/v1/conversations", token: me.token).decode(API.ConversationList.self)
            #expect(empty.conversations.isEmpty && empty.nextCursor == nil)
            var friends: [Account] = []
            for i in 0..<3 {
                let friend = try await api.register("friend\(i)", displayName: "Friend \(i)")
                friends.append(friend)
                _ = try await api.send("hello from \(i)", from: friend, to: me)
            }
            _ = try await api.send("reply", from: me, to: friends[0])
            let list = try await api.request(.get, "/v1/conversations?limit=2", token: me.token).decode(API.ConversationList.self)
            #expect(list.conversations.count == 2)
            let top = try #require(list.conversations.first)
            #expect(top.otherMember(than: me.id)?.displayName == "Friend 0")
            #expect(top.lastMessage?.text == "reply" && top.lastMessage?.senderId == me.id)
            #expect(top.unreadCount == 0 && list.conversations[1].unreadCount == 1)
            #expect(top.members.allSatisfy { $0.online == false })
            let cursor = try #require(list.nextCursor)
            let rest = try await api.request(.get, "/v1/conversations?limit=2&before=\(cursor)", token: me.token).decode(API.ConversationList.self)
            #expect(rest.conversations.map { $0.otherMember(than: me.id)?.username } == ["friend1"] && rest.nextCursor == nil)
            for bad in ["?before=nonsense", "?before=12~dm%20x", "?before=x~dm_x", "?limit=0", "?limit=101"] {
                let response = try await api.request(.get, "/v1/conversations\(bad)", token: me.token)
                #expect(response.status == .badRequest && response.errorCode == .invalidQuery, "\(bad)")
            }
        }
    }

    @Test func nonMembersGetNotFoundForEveryConversationRoute() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob"), eve = try await api.register("eve")
            let id = try await api.send("private", from: alice, to: bob).conversationId
            let attempts: [(HTTPRequest.Method, String, String?)] = [
                (.get, "/v1/conversations/\(id)", nil),
                (.get, "/v1/conversations/\(id)/messages", nil),
                (.post, "/v1/conversations/\(id)/receipts", #"{"readSeq":1}"#),
                (.post, "/v1/messages", #"{"clientId":"\#(UUID())","conversationId":"\#(id)","text":"let me in"}"#),
                (.get, "/v1/conversations/not-a-conversation", nil),
            ]
            for (method, uri, body) in attempts {
                let response = try await api.request(method, uri, token: eve.token, json: body)
                #expect(response.status == .notFound && response.errorCode == .conversationNotFound, "\(method) \(uri)")
            }
            // A missing conversation between real users looks exactly like someone else's.
            let unknown = try await api.request(.get, "/v1/conversations/\(ConversationID.direct(eve.id, alice.id))", token: eve.token)
            #expect(unknown.status == .notFound && unknown.errorCode == .conversationNotFound)
            let history = try await api.request(.get, "/v1/conversations/\(id)/messages", token: bob.token).decode(API.MessagePage.self)
            #expect(history.messages.map(\.text) == ["private"])
        }
    }

    @Test func historyPagesAndValidatesItsQuery() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let id = try await api.send("m1", from: alice, to: bob).conversationId
            for i in 2...60 { _ = try await api.send("m\(i)", from: i.isMultiple(of: 2) ? bob : alice, in: id) }
            let latest = try await api.request(.get, "/v1/conversations/\(id)/messages", token: bob.token).decode(API.MessagePage.self)
            #expect(latest.messages.map(\.seq) == Array(11...60) && latest.hasMore)
            let older = try await api.request(.get, "/v1/conversations/\(id)/messages?before=11", token: bob.token).decode(API.MessagePage.self)
            #expect(older.messages.map(\.seq) == Array(1...10) && !older.hasMore)
            let after = try await api.request(.get, "/v1/conversations/\(id)/messages?after=55&limit=3", token: bob.token).decode(API.MessagePage.self)
            #expect(after.messages.map(\.seq) == [56, 57, 58] && after.hasMore)
            for bad in ["?limit=0", "?limit=201", "?before=-1", "?after=abc"] {
                let response = try await api.request(.get, "/v1/conversations/\(id)/messages\(bad)", token: bob.token)
                #expect(response.status == .badRequest && response.errorCode == .invalidQuery, "\(bad)")
            }
        }
    }

    @Test func receiptsMoveForwardOnlyAndAreValidated() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let id = try await api.send("one", from: alice, to: bob).conversationId
            _ = try await api.send("two", from: alice, in: id)
            let delivered = try await api.request(.post, "/v1/conversations/\(id)/receipts", token: bob.token, json: #"{"deliveredSeq":2}"#)
            #expect(try delivered.decode(ReceiptUpdate.self) == ReceiptUpdate(conversationId: id, userId: bob.id, deliveredSeq: 2, readSeq: 0))
            let read = try await api.request(.post, "/v1/conversations/\(id)/receipts", token: bob.token, json: #"{"readSeq":1}"#)
            #expect(try read.decode(ReceiptUpdate.self).readSeq == 1)
            let summary = try await api.request(.get, "/v1/conversations/\(id)", token: bob.token).decode(ConversationSummary.self)
            #expect(summary.unreadCount == 1)
            let beyond = try await api.request(.post, "/v1/conversations/\(id)/receipts", token: bob.token, json: #"{"readSeq":3}"#)
            #expect(beyond.status == .conflict && beyond.errorCode == .cursorBeyondEnd, "the seq may exist later: a conflict, not a malformed request")
            for (body, code) in [(#"{"deliveredSeq":-1}"#, ErrorCode.invalidCursor), ("{}", .invalidCursor), (#"{"readSeq":"x"}"#, .invalidJSON)] {
                let response = try await api.request(.post, "/v1/conversations/\(id)/receipts", token: bob.token, json: body)
                #expect(response.status == .badRequest && response.errorCode == code, "\(body)")
            }
        }
    }
}
