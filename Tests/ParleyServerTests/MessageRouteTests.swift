import ParleyTestSupport
import Foundation
import HTTPTypes
import ParleyCore
import Testing
import ParleyServer

@Suite struct MessageRouteTests {
    @Test func sendCreatesTheConversationAtomicallyAndTrims() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let message = try await api.send("  hi Bob 👋 \n", from: alice, to: bob)
            #expect(message.text == "hi Bob 👋" && message.seq == 1 && message.senderId == alice.id)
            #expect(message.conversationId == .direct(alice.id, bob.id))
            let list = try await api.request(.get, "/v1/conversations", token: bob.token).decode(API.ConversationList.self)
            #expect(list.conversations.map(\.id) == [message.conversationId] && list.conversations[0].unreadCount == 1)
        }
    }

    @Test func retriedSendReturnsTheOriginalMessage() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let clientId = ClientMessageID.random()
            let body = SendRequest(clientId: clientId, recipientId: bob.id, text: "only once")
            let first = try await api.request(.post, "/v1/messages", token: alice.token, encoding: body)
            let retry = try await api.request(.post, "/v1/messages", token: alice.token, encoding: body)
            #expect(first.status == .created && retry.status == .ok)
            let original = try first.decode(API.SendResponse.self), repeated = try retry.decode(API.SendResponse.self)
            #expect(!original.duplicate && repeated.duplicate && repeated.message == original.message)
            let history = try await api.request(.get, "/v1/conversations/\(original.message.conversationId)/messages", token: bob.token)
            #expect(try history.decode(API.MessagePage.self).messages.count == 1)
        }
    }

    @Test func eachValidationFailureHasItsOwnCode() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let atLimit = String(repeating: "🙂", count: Validation.maxMessageCharacters)
            #expect(try await api.send(atLimit, from: alice, to: bob).text.count == Validation.maxMessageCharacters)
            let cases: [(SendRequest, ErrorCode, HTTPResponse.Status)] = [
                (SendRequest(clientId: .random(), recipientId: bob.id, text: ""), .textEmpty, .badRequest),
                (SendRequest(clientId: .random(), recipientId: bob.id, text: " \n\t "), .textEmpty, .badRequest),
                (SendRequest(clientId: .random(), recipientId: bob.id, text: atLimit + "x"), .textTooLong, .badRequest),
                (SendRequest(clientId: .random(), recipientId: bob.id, text: "nul\u{0}"), .textInvalidCharacters, .badRequest),
                (SendRequest(clientId: ClientMessageID(rawValue: "nope"), recipientId: bob.id, text: "x"), .invalidClientId, .badRequest),
                (SendRequest(clientId: .random(), text: "x"), .invalidJSON, .badRequest),
                (SendRequest(clientId: .random(), conversationId: .direct(alice.id, bob.id), recipientId: bob.id, text: "x"), .invalidJSON, .badRequest),
                (SendRequest(clientId: .random(), recipientId: alice.id, text: "x"), .invalidRecipient, .forbidden),
                (SendRequest(clientId: .random(), recipientId: .random(), text: "x"), .userNotFound, .notFound),
                (SendRequest(clientId: .random(), recipientId: UserID(rawValue: "junk"), text: "x"), .userNotFound, .notFound),
            ]
            for (request, code, status) in cases {
                let response = try await api.request(.post, "/v1/messages", token: alice.token, encoding: request)
                #expect(response.status == status && response.errorCode == code, "\(request.text.prefix(20)) → \(code)")
            }
            let conversations = try await api.request(.get, "/v1/conversations", token: alice.token).decode(API.ConversationList.self)
            #expect(conversations.conversations.count == 1 && conversations.conversations[0].lastSeq == 1, "failed sends store nothing")
        }
    }

    /// openapi.yaml marks no request field nullable, so an explicit `null` is refused, not read as absent.
    @Test func explicitNullIsRefusedNotReadAsAbsent() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let id = try await api.send("hi", from: alice, to: bob).conversationId
            let cases: [(String, String)] = [
                ("/v1/conversations/\(id)/receipts", #"{"readSeq":null}"#),
                ("/v1/conversations/\(id)/receipts", #"{"deliveredSeq":1,"readSeq":null}"#),
                ("/v1/messages", #"{"clientId":"\#(UUID())","conversationId":"\#(id)","recipientId":null,"text":"x"}"#),
                ("/v1/messages", #"{"clientId":"\#(UUID())","conversationId":null,"recipientId":"\#(bob.id)","text":"x"}"#),
                // Inside an attachment too (checked before the upload is looked up).
                ("/v1/messages", #"{"clientId":"\#(UUID())","conversationId":"\#(id)","text":"x","attachments":[{"uploadId":"\#(UUID())","width":null}]}"#),
                ("/v1/push/subscriptions", #"{"endpoint":"https://push.example/1","keys":{"p256dh":"a","auth":null}}"#),
            ]
            for (uri, body) in cases {
                let response = try await api.request(.post, uri, token: bob.token, json: body)
                #expect(response.status == .badRequest && response.errorCode == .invalidJSON, "\(body)")
                if body.contains("width") { #expect((try? response.decode(ErrorBody.self))?.error.message.contains("attachments[0].width") == true) }
            }
            // A field is named as the client wrote it, never in the decoder's words ("attachments.Index 0").
            let shapes = [
                (#"[{"uploadId":7}]"#, "wrong type for 'attachments[0].uploadId'"),
                (#"[{"uploadId":"\#(UUID())"},{}]"#, "missing 'attachments[1].uploadId'"),
            ]
            for (attachments, named) in shapes {
                let response = try await api.request(
                    .post, "/v1/messages", token: bob.token,
                    json: #"{"clientId":"\#(UUID())","conversationId":"\#(id)","text":"x","attachments":\#(attachments)}"#)
                let message = (try? response.decode(ErrorBody.self))?.error.message ?? ""
                #expect(response.errorCode == .invalidJSON && message.contains(named) && !message.contains("Index"), "\(message)")
            }
            let text = try await api.request(
                .post, "/v1/messages", token: bob.token, json: #"{"clientId":"\#(UUID())","conversationId":"\#(id)","text":"null"}"#)
            #expect(text.status == .created, "the word null inside a string is text")
            let unknown = try await api.request(
                .post, "/v1/messages", token: bob.token, json: #"{"clientId":"\#(UUID())","conversationId":"\#(id)","text":"x","extra":null}"#)
            #expect(unknown.status == .created, "an unknown field is ignored, null or not")
            let page = try await api.request(.get, "/v1/conversations/\(id)/messages", token: alice.token).decode(API.MessagePage.self)
            #expect(page.messages.map(\.text) == ["hi", "null", "x"], "refused requests stored nothing")
        }
    }

    @Test func sendsAreRateLimitedPerUser() async throws {
        try await TestServer.run(configure: {
            $0.sendBurst = 3; $0.sendsPerSecond = 0.01; $0.stopRateLimitClock()
        }) { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            for i in 0..<3 { _ = try await api.send("m\(i)", from: alice, to: bob) }
            let limited = try await api.request(
                .post, "/v1/messages", token: alice.token, encoding: SendRequest(clientId: .random(), recipientId: bob.id, text: "too many"))
            #expect(limited.status == .tooManyRequests && limited.errorCode == .rateLimited)
            #expect(Int(limited.headers[.retryAfter] ?? "") ?? 0 >= 1)
            _ = try await api.send("bob is not limited by alice", from: bob, to: alice)
        }
    }
}
