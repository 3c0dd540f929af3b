import Foundation
import ParleyCore
import Testing

@Suite struct FrameCodingTests {
    let message = Message(
        id: .random(), conversationId: .direct(.random(), .random()), seq: 7, senderId: .random(),
        clientId: .random(), text: "hi 👋", createdAt: Timestamp(milliseconds: 1_700_000_000_123))

    @Test func clientFramesRoundTrip() throws {
        let frames: [ClientFrame] = [
            .hello(token: "t", after: 42), .hello(token: "t", after: nil),
            .send(SendRequest(ref: "r1", clientId: .random(), recipientId: .random(), text: "x")),
            .receipt(ref: nil, conversationId: message.conversationId, deliveredSeq: 3, readSeq: nil),
            .typing(conversationId: message.conversationId, isTyping: false), .ping(ref: "p"),
            .send(SendRequest(clientId: .random(), conversationId: message.conversationId, text: "yes", replyToSeq: 7)),
            .action(MessageActionRequest(ref: "a", clientId: .random(), conversationId: message.conversationId, seq: 7, kind: .react, emoji: "👍")),
            .action(MessageActionRequest(clientId: .random(), conversationId: message.conversationId, seq: 7, kind: .edit, text: "fixed")),
        ]
        for frame in frames {
            let data = try JSONEncoder().encode(frame)
            #expect(try JSONDecoder().decode(ClientFrame.self, from: data) == frame)
        }
    }

    @Test func serverFramesRoundTrip() throws {
        let frames: [ServerFrame] = [
            .welcome(userId: .random(), head: 9),
            .event(StreamEvent(position: 3, payload: .message(message))),
            .event(
                StreamEvent(
                    position: 4, payload: .receipt(ReceiptUpdate(conversationId: message.conversationId, userId: .random(), deliveredSeq: 2, readSeq: 1)))),
            .synced(position: 4), .resync(position: 10),
            .sent(ref: "r", message: message, duplicate: true), .ack(ref: nil),
            .typing(conversationId: message.conversationId, userId: .random(), isTyping: true),
            .presence(userId: .random(), online: false, lastSeenAt: Timestamp(milliseconds: 5)),
            .profile(User(id: .random(), username: "ada", displayName: "Ada", createdAt: Timestamp(milliseconds: 8), photo: "/v1/photos/x")),
            .profile(User(id: .random(), username: "ada", displayName: "Ada", createdAt: Timestamp(milliseconds: 8))),
            .error(ref: "r", clientId: .random(), code: .textTooLong, message: "too long"), .pong(ref: nil),
            .acted(ref: "a", message: message, duplicate: false),
            .event(StreamEvent(position: 5, payload: .messageUpdated(message))),
            .event(StreamEvent(position: 6, payload: .messageHidden(MessageRef(conversationId: message.conversationId, seq: 7)))),
        ]
        for frame in frames {
            let data = try JSONEncoder().encode(frame)
            #expect(try JSONDecoder().decode(ServerFrame.self, from: data) == frame)
        }
    }

    @Test func eventFramesAreFlatWithTheirKindAsType() throws {
        let data = try JSONEncoder().encode(ServerFrame.event(StreamEvent(position: 12, payload: .message(message))))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["type"] as? String == "message")
        #expect(object["pos"] as? Int == 12)
        #expect((object["message"] as? [String: Any])?["createdAt"] as? Int == 1_700_000_000_123)
    }

    @Test func aProfileFrameCarriesTheUserWithoutAPhotoOnceItIsRemoved() throws {
        let ada = User(id: .random(), username: "ada", displayName: "Ada", createdAt: Timestamp(milliseconds: 8), photo: "/v1/photos/p")
        let set = try #require(try JSONSerialization.jsonObject(with: try JSONEncoder().encode(ServerFrame.profile(ada))) as? [String: Any])
        #expect(set["type"] as? String == "profile" && Set(set.keys) == ["type", "user"])
        let user = try #require(set["user"] as? [String: Any])
        #expect(user["id"] as? String == ada.id.rawValue && user["photo"] as? String == "/v1/photos/p" && user["displayName"] as? String == "Ada")
        var removed = ada
        removed.photo = nil
        let data = try JSONEncoder().encode(ServerFrame.profile(removed))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((object["user"] as? [String: Any])?.keys.contains("photo") == false, "absent, not null")
        #expect(try JSONDecoder().decode(ServerFrame.self, from: data) == .profile(removed))
    }

    @Test func unknownFrameTypesAreReportedByName() {
        #expect(throws: UnknownFrameType(type: "teleport")) {
            try JSONDecoder().decode(ClientFrame.self, from: Data(#"{"type":"teleport"}"#.utf8))
        }
    }
}
