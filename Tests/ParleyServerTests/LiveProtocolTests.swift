import Foundation
import NIOWebSocket
import ParleyCore
import Testing
import HTTPTypes
import ParleyServer
import WSCore

/// Bad input over the WebSocket gets an error frame and the connection goes on; bad auth closes it.
@Suite struct LiveProtocolTests {
    @Test func malformedFramesGetErrorFramesAndTheConnectionSurvives() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let a = try await api.socket(alice)
            let cases: [(String, ErrorCode)] = [
                ("{not json", .invalidJSON),
                (#"{"type":"teleport","ref":"t1"}"#, .unknownFrameType),
                (#"{"type":"send","ref":"s1"}"#, .invalidFrame),
                (#"{"type":"hello","token":"x","ref":"h1"}"#, .alreadyAuthenticated),
                (#"{"type":"typing","ref":"y1","conversationId":"\#(ConversationID.direct(alice.id, .random()))"}"#, .conversationNotFound),
                (#"{"type":"send","ref":"n1","clientId":"\#(UUID())","conversationId":null,"recipientId":"\#(bob.id)","text":"x"}"#, .invalidFrame),
                (#"{"type":"send","ref":"s2","clientId":"\#(UUID())","recipientId":"\#(bob.id)","text":"   "}"#, .textEmpty),
                (#"{"type":"send","ref":"s3","clientId":"nope","recipientId":"\#(bob.id)","text":"x"}"#, .invalidClientId),
                (#"{"type":"receipt","ref":"r1","conversationId":"\#(ConversationID.direct(alice.id, bob.id))","readSeq":1}"#, .conversationNotFound),
                ("[]", .invalidFrame),
                // Numbers that fit no field are valid JSON of the wrong type, as a string there would be.
                (#"{"type":"receipt","ref":"f1","conversationId":"\#(ConversationID.direct(alice.id, bob.id))","readSeq":2.5}"#, .invalidFrame),
                (
                    #"{"type":"action","ref":"f2","clientId":"\#(UUID())","conversationId":"\#(ConversationID.direct(alice.id, bob.id))","seq":9223372036854775808,"kind":"hide"}"#,
                    .invalidFrame
                ),
            ]
            for (raw, _) in cases {
                a.sendRaw(raw)
                a.send(.ping(ref: raw))
                _ = try await a.inbox.waitFor("pong after \(raw)") { $0.contains(.pong(ref: raw)) ? true : nil }
            }
            let codes = await a.inbox.frames.compactMap(\.errorCode)
            #expect(codes == cases.map(\.1))
            let refs = await a.inbox.frames.compactMap { if case .error(let ref, _, _, _) = $0 { ref } else { nil } }
            #expect(refs == ["t1", "s1", "h1", "y1", "n1", "s2", "s3", "r1", "f1", "f2"], "every error answering a frame with a ref echoes it")
            let messages = await a.inbox.frames.compactMap { if case .error(_, _, _, let message) = $0 { message } else { nil } }
            #expect(!messages.contains { $0.contains("teleport") }, "an error never echoes the client's input")
            a.sendBinary(Array(#"{"type":"ping","ref":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8))
            _ = try await a.inbox.waitFor("invalid utf8") { $0.contains { $0.errorCode == .invalidUTF8 } ? true : nil }
            a.sendBinary(Array(#"{"type":"ping","ref":"binary ok"}"#.utf8))
            _ = try await a.inbox.waitFor("binary pong") { $0.contains(.pong(ref: "binary ok")) ? true : nil }
        }
    }

    @Test func sendErrorsCarryTheClientIdAndNonMembersCannotPost() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob"), eve = try await api.register("eve")
            let id = try await api.send("hi", from: alice, to: bob).conversationId
            let e = try await api.socket(eve)
            let clientId = ClientMessageID.random()
            e.send(.send(SendRequest(ref: "intrude", clientId: clientId, conversationId: id, text: "let me in")))
            let error = try await e.inbox.waitFor("send error") { frames in
                frames.lazy.compactMap { if case .error(let ref, let client, let code, _) = $0 { (ref, client, code) } else { nil } }.first
            }
            #expect(error.0 == "intrude" && error.1 == clientId && error.2 == .conversationNotFound)
            let page = try await api.request(.get, "/v1/conversations/\(id)/messages", token: alice.token).decode(API.MessagePage.self)
            #expect(page.messages.count == 1)
        }
    }

    @Test func nonMembersReceiveNoEventsOfOthersConversations() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob"), eve = try await api.register("eve")
            let e = try await api.socket(eve, after: 0)
            _ = try await e.synced()
            let id = try await api.send("for bob only", from: alice, to: bob).conversationId
            _ = try await api.request(.post, "/v1/conversations/\(id)/receipts", token: bob.token, json: #"{"readSeq":1}"#)
            e.send(.ping(ref: "sync"))
            _ = try await e.inbox.waitFor("pong") { $0.contains(.pong(ref: "sync")) ? true : nil }
            #expect(await e.inbox.streamEvents.isEmpty)
        }
    }

    @Test func badHelloIsAnsweredAndClosed() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice")
            let cases: [(ClientFrame, ErrorCode)] = [
                (.hello(token: "not-a-token", after: nil), .unauthorized),
                (.hello(token: String(repeating: "A", count: 43), after: nil), .unauthorized),
                (.ping(ref: nil), .notAuthenticated),
            ]
            for (hello, code) in cases {
                let socket = try await TestSocket.connect(port: api.port, hello: hello)
                #expect(try await socket.firstError().code == code)
                let close = try await socket.closed()
                #expect(close?.closeCode == .policyViolation)
            }
            _ = try await api.request(.post, "/v1/auth/logout", token: alice.token)
            let revoked = try await TestSocket.connect(port: api.port, hello: .hello(token: alice.token, after: nil))
            #expect(try await revoked.firstError().code == .unauthorized)
        }
    }

    @Test func invalidUTF8TextAndOversizedFramesCloseTheConnection() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice")
            let garbled = try await api.socket(alice)
            garbled.sendTextBytes(Array(#"{"type":"ping","ref":""#.utf8) + [0xFF] + Array(#""}"#.utf8))
            #expect(try await garbled.closed()?.closeCode == .dataInconsistentWithMessage)
            let huge = try await api.socket(alice)
            huge.sendRaw(#"{"type":"ping","ref":""# + String(repeating: "x", count: 300_000) + #""}"#)
            #expect(try await huge.closed()?.closeCode == .messageTooLarge)
        }
    }

    /// Regression: a session failing while its writer was still starting used to leave the socket
    /// "closing" without a close frame, so both sides waited out the close timeout.
    @Test func manySessionsFailingAtOnceAllCloseWithTheirCode() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice")
            let codes = try await withThrowingTaskGroup(of: WebSocketErrorCode?.self) { group in
                for _ in 0..<25 {
                    group.addTask {
                        let socket = try await api.socket(alice)
                        socket.sendTextBytes([0x22, 0xFF, 0x22])
                        return try await socket.closed()?.closeCode
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(codes.count == 25 && codes.allSatisfy { $0 == .dataInconsistentWithMessage })
        }
    }

    @Test func aConnectionThatNeverSaysHelloIsClosed() async throws {
        try await TestServer.run(configure: { $0.helloTimeoutSeconds = 0.3 }) { api in
            let silent = try await TestSocket.connect(port: api.port, hello: nil)
            let close = try await silent.closed()
            #expect(close?.closeCode == .policyViolation)
        }
    }
}
