import Foundation
import HTTPTypes
import NIOCore
import ParleyCore
import ParleyServer
import ParleyStore
import Testing

/// Message actions over REST and WebSocket (docs/protocol.md "Message actions"); every response is
/// also held to openapi.yaml by ``TestAPI``.
@Suite struct MessageActionRouteTests {
    @Test func actionsReachTheOtherSideLiveAndAfterBeingOffline() async throws {
        try await TestServer.run { api in
            let (ada, grace, _) = try await api.threeFriends()
            let chat = ConversationID.direct(ada.id, grace.id)
            let original = try await api.send("meet at 5", from: ada, in: chat)
            let g = try await api.socket(grace)
            _ = try await g.synced()
            // Live: an edit over REST, a reaction over the WebSocket.
            let edited = try await api.act(ada, original.seq, in: chat, API.MessageActionBody(clientId: .random(), kind: .edit, text: "meet at 6"))
            #expect(edited.status == .ok)
            #expect(try await g.updated(seq: original.seq) { $0.text == "meet at 6" && $0.editedAt != nil }.seq == original.seq)
            g.send(.action(MessageActionRequest(ref: "r1", clientId: .random(), conversationId: chat, seq: original.seq, kind: .react, emoji: "👍")))
            let acted = try await g.acted(ref: "r1")
            #expect(acted.reactions == [Reaction(emoji: "👍", count: 1, mine: true, userIds: [grace.id])])
            // A reply over the WebSocket quotes the current text.
            g.send(.send(SendRequest(ref: "s1", clientId: .random(), conversationId: chat, text: "ok", replyToSeq: original.seq)))
            let reply = try await g.sentAcks(count: 1)[0].message
            #expect(reply.replyTo?.preview == "meet at 6" && reply.replyTo?.senderId == ada.id)
            // Offline: Ada edits again and deletes while Grace's socket is gone; Grace resumes.
            let position = try #require(await g.inbox.lastPosition)
            await g.close()
            let second = try await api.send("call me", from: ada, in: chat)
            _ = try await api.act(ada, second.seq, in: chat, API.MessageActionBody(clientId: .random(), kind: .edit, text: "call me now"))
            _ = try await api.act(ada, original.seq, in: chat, API.MessageActionBody(clientId: .random(), kind: .delete))
            let back = try await api.socket(grace, after: position)
            _ = try await back.synced()
            let tombstone = try await back.updated(seq: original.seq) { $0.isDeleted }
            #expect(tombstone.text.isEmpty && tombstone.reactions == nil)
            #expect(try await back.message(seq: second.seq).text == "call me now", "a replayed message is the message as it is now")
            let page = try await api.request(.get, "/v1/conversations/\(chat.rawValue)/messages", token: grace.token).decode(MessagePage.self)
            #expect(page.messages.first { $0.seq == reply.seq }?.replyTo?.deleted == true)
            let versions = try await api.request(.get, "/v1/conversations/\(chat.rawValue)/messages/\(second.seq)/versions", token: grace.token)
            #expect(try versions.decode(API.MessageVersionsResponse.self).versions.map(\.text) == ["call me"])
        }
    }

    @Test func badActionsGetClearErrorsAndChangeNothing() async throws {
        try await TestServer.run { api in
            let (ada, grace, alan) = try await api.threeFriends()
            let chat = ConversationID.direct(ada.id, grace.id)
            let message = try await api.send("hello", from: ada, in: chat)
            func expect(_ body: API.MessageActionBody, by account: Account = grace, seq: Int64? = nil, _ status: HTTPResponse.Status, _ code: ErrorCode)
                async throws
            {
                let response = try await api.act(account, seq ?? message.seq, in: chat, body)
                #expect(response.status == status && response.errorCode == code, "\(body.kind) \(body.emoji ?? "") \(body.text ?? "")")
            }
            for emoji in ["a", "1", "👍👍", "", "hello", "👍 "] {
                try await expect(API.MessageActionBody(clientId: .random(), kind: .react, emoji: emoji), .badRequest, .invalidEmoji)
            }
            try await expect(API.MessageActionBody(clientId: .random(), kind: .edit, text: "mine now"), .forbidden, .forbidden)
            try await expect(API.MessageActionBody(clientId: .random(), kind: .edit), by: ada, .badRequest, .invalidAction)
            try await expect(API.MessageActionBody(clientId: .random(), kind: .edit, text: "   "), by: ada, .badRequest, .textEmpty)
            try await expect(API.MessageActionBody(clientId: .random(), kind: .edit, text: "\u{200B}\u{3164}"), by: ada, .badRequest, .textEmpty)
            try await expect(API.MessageActionBody(clientId: .random(), kind: .delete, text: "x"), by: ada, .badRequest, .invalidAction)
            try await expect(API.MessageActionBody(clientId: .random(), kind: .delete), .forbidden, .forbidden)
            try await expect(API.MessageActionBody(clientId: .random(), kind: .react, emoji: "👍"), seq: 99, .notFound, .messageNotFound)
            try await expect(API.MessageActionBody(clientId: .random(), kind: .react, emoji: "👍"), by: alan, .notFound, .conversationNotFound)
            let badId = try await api.request(
                .post, "/v1/conversations/\(chat.rawValue)/messages/\(message.seq)/actions", token: grace.token,
                body: ByteBuffer(string: #"{"clientId":"nope","kind":"react","emoji":"👍"}"#))
            #expect(badId.status == .badRequest && badId.errorCode == .invalidClientId)
            for raw in [#"{"clientId":"\#(UUID())","kind":"shout"}"#, #"{"clientId":"\#(UUID())","kind":"react","emoji":null}"#, "[]"] {
                let response = try await api.request(
                    .post, "/v1/conversations/\(chat.rawValue)/messages/\(message.seq)/actions", token: grace.token, body: ByteBuffer(string: raw))
                #expect(response.status == .badRequest && response.errorCode == .invalidJSON, "\(raw)")
            }
            for path in ["0", "-1", "abc", "99999999999999999999"] {
                let response = try await api.act(grace, path, in: chat, API.MessageActionBody(clientId: .random(), kind: .hide))
                #expect(response.status == .notFound, "seq \(path)")
            }
            let page = try await api.request(.get, "/v1/conversations/\(chat.rawValue)/messages", token: ada.token).decode(MessagePage.self)
            #expect(page.messages.last.map { $0.text == "hello" && $0.reactions == nil && $0.editedAt == nil } == true)
        }
    }

    @Test func theWindowsAreTheServersSettings() async throws {
        try await TestServer.run(configure: {
            $0.editWindow = .zero; $0.deleteWindow = .zero
        }) { api in
            let (ada, grace, _) = try await api.threeFriends()
            let chat = ConversationID.direct(ada.id, grace.id)
            let message = try await api.send("too late to fix", from: ada, in: chat)
            let edit = try await api.act(ada, message.seq, in: chat, API.MessageActionBody(clientId: .random(), kind: .edit, text: "fixed"))
            #expect(edit.status == .forbidden && edit.errorCode == .editWindowClosed)
            let delete = try await api.act(ada, message.seq, in: chat, API.MessageActionBody(clientId: .random(), kind: .delete))
            #expect(delete.status == .forbidden && delete.errorCode == .deleteWindowClosed)
            let hide = try await api.act(ada, message.seq, in: chat, API.MessageActionBody(clientId: .random(), kind: .hide))
            #expect(hide.status == .ok, "delete for me has no window")
        }
    }

    @Test func aMemberRemovedMidConversationHearsOfNoActionAfter() async throws {
        try await TestServer.run { api in
            let (ada, grace, alan) = try await api.threeFriends()
            let created = try await api.createGroup(by: ada, title: "Trip", members: [grace, alan])
            let chat = try #require(created.conversation).id
            let l = try await api.socket(alan)
            _ = try await l.synced()
            let hello = try await api.send("hello both", from: grace, in: chat)
            _ = try await l.message(seq: hello.seq)
            let react = try await api.act(ada, hello.seq, in: chat, API.MessageActionBody(clientId: .random(), kind: .react, emoji: "🎉"))
            #expect(react.status == .ok)
            _ = try await l.updated(seq: hello.seq) { $0.reactions?.first?.emoji == "🎉" }
            let removed = try await api.action(
                .post, "/v1/conversations/\(chat)/members/\(alan.id)/remove", by: ada, API.GroupActionRequest(clientId: .random()))
            #expect(removed.status == .created)
            _ = try await api.act(grace, hello.seq, in: chat, API.MessageActionBody(clientId: .random(), kind: .edit, text: "hello Ada"))
            // Committed before answered: Alan's stream is final for what came before.
            _ = try await api.send("after", from: ada, in: chat)
            guard case .events(let events, _) = try await api.store.events(of: alan.id, after: 0, limit: 1_000) else { throw TestFailure("no stream") }
            #expect(!events.contains { if case .messageUpdated(let m) = $0.payload { m.text == "hello Ada" } else { false } })
            // The admin deletes a member's message at any time; Alan can no longer react.
            let delete = try await api.act(ada, hello.seq, in: chat, API.MessageActionBody(clientId: .random(), kind: .delete))
            #expect(try delete.decode(API.MessageActionResponse.self).message.isDeleted)
            let late = try await api.act(alan, hello.seq, in: chat, API.MessageActionBody(clientId: .random(), kind: .react, emoji: "👍"))
            #expect(late.status == .notFound && late.errorCode == .conversationNotFound, "as a send there is")
        }
    }
}

extension TestAPI {
    func act(_ account: Account, _ seq: Int64, in chat: ConversationID, _ body: API.MessageActionBody) async throws -> APIResponse {
        try await act(account, String(seq), in: chat, body)
    }

    func act(_ account: Account, _ seq: String, in chat: ConversationID, _ body: API.MessageActionBody) async throws -> APIResponse {
        try await request(.post, "/v1/conversations/\(chat.rawValue)/messages/\(seq)/actions", token: account.token, encoding: body)
    }
}

extension TestSocket {
    func updated(seq: Int64, where condition: @escaping @Sendable (Message) -> Bool) async throws -> Message {
        try await inbox.waitFor("messageUpdated seq \(seq)") { frames in
            frames.lazy.compactMap { frame -> Message? in
                if case .event(let event) = frame, case .messageUpdated(let m) = event.payload, m.seq == seq, condition(m) { m } else { nil }
            }.first
        }
    }

    func acted(ref: String) async throws -> Message {
        try await inbox.waitFor("acted \(ref)") { frames in
            frames.lazy.compactMap { frame -> Message? in if case .acted(ref, let message, _) = frame { message } else { nil } }.first
        }
    }
}
