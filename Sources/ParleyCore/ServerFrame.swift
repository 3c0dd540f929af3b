/// A frame the server sends over the WebSocket. JSON objects discriminated by `"type"`.
public enum ServerFrame: Equatable, Sendable {
    /// Answer to `hello`: who you are and the newest position of your stream right now.
    case welcome(userId: UserID, head: Int64)
    /// A stored event of the user's stream (`"type"` is the event kind: message, receipt, conversation).
    case event(StreamEvent)
    /// The replay after `hello` is complete; what follows is live.
    case synced(position: Int64)
    /// The requested resume position can no longer be replayed: reload a snapshot over REST, then
    /// continue from `position`, after which the stream goes on live.
    case resync(position: Int64)
    /// A send is committed (guarantee 3); `duplicate` is true when the client id was seen before.
    /// `position` (JSON `pos`), when present, is the message's place in the sender's own stream:
    /// the connection that sent it gets this frame *instead of* that stream event, so a client
    /// advances its stream position with it exactly as with an event. Absent when the event was
    /// written to the connection on its own, or for a duplicate.
    case sent(ref: String?, message: Message, duplicate: Bool, position: Int64? = nil)
    case ack(ref: String?)
    case typing(conversationId: ConversationID, userId: UserID, isTyping: Bool)
    case presence(userId: UserID, online: Bool, lastSeenAt: Timestamp?)
    /// Ephemeral: a user who shares a conversation with you (or you, on another device) changed
    /// their profile: `user` as they are now, `photo` absent when they removed it.
    case profile(User)
    case error(ref: String?, clientId: ClientMessageID?, code: ErrorCode, message: String)
    case pong(ref: String?)
    /// A message action is committed; `message` is the message as it is now, for the actor.
    case acted(ref: String?, message: Message, duplicate: Bool)
}

extension ServerFrame: Codable {
    enum CodingKeys: String, CodingKey {
        case type, userId, head, pos, position, message, receipt, hidden, conversation, invitation, summary, ref, duplicate, conversationId,
            isTyping, online, lastSeenAt, clientId, code, error, user
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let type = try c.decode(String.self, forKey: .type)
        switch type {
        case "welcome":
            self = .welcome(userId: try c.decode(UserID.self, forKey: .userId), head: try c.decode(Int64.self, forKey: .head))
        case "message":
            self = .event(StreamEvent(position: try c.decode(Int64.self, forKey: .pos), payload: .message(try c.decode(Message.self, forKey: .message))))
        case "receipt":
            self = .event(StreamEvent(position: try c.decode(Int64.self, forKey: .pos), payload: .receipt(try c.decode(ReceiptUpdate.self, forKey: .receipt))))
        case "conversation":
            self = .event(
                StreamEvent(
                    position: try c.decode(Int64.self, forKey: .pos), payload: .conversation(try c.decode(ConversationInfo.self, forKey: .conversation))))
        case "invitation":
            self = .event(
                StreamEvent(position: try c.decode(Int64.self, forKey: .pos), payload: .invitation(try c.decode(Invitation.self, forKey: .invitation))))
        case "receiptSummary":
            self = .event(
                StreamEvent(
                    position: try c.decode(Int64.self, forKey: .pos), payload: .receiptSummary(try c.decode(ReceiptSummary.self, forKey: .summary))))
        case "messageUpdated":
            self = .event(StreamEvent(position: try c.decode(Int64.self, forKey: .pos), payload: .messageUpdated(try c.decode(Message.self, forKey: .message))))
        case "messageHidden":
            self = .event(
                StreamEvent(position: try c.decode(Int64.self, forKey: .pos), payload: .messageHidden(try c.decode(MessageRef.self, forKey: .hidden))))
        case "acted":
            self = .acted(
                ref: try c.decodeIfPresent(String.self, forKey: .ref), message: try c.decode(Message.self, forKey: .message),
                duplicate: try c.decodeIfPresent(Bool.self, forKey: .duplicate) ?? false)
        case "synced":
            self = .synced(position: try c.decode(Int64.self, forKey: .position))
        case "resync":
            self = .resync(position: try c.decode(Int64.self, forKey: .position))
        case "sent":
            self = .sent(
                ref: try c.decodeIfPresent(String.self, forKey: .ref), message: try c.decode(Message.self, forKey: .message),
                duplicate: try c.decodeIfPresent(Bool.self, forKey: .duplicate) ?? false,
                position: try c.decodeIfPresent(Int64.self, forKey: .pos))
        case "ack":
            self = .ack(ref: try c.decodeIfPresent(String.self, forKey: .ref))
        case "typing":
            self = .typing(
                conversationId: try c.decode(ConversationID.self, forKey: .conversationId),
                userId: try c.decode(UserID.self, forKey: .userId), isTyping: try c.decode(Bool.self, forKey: .isTyping))
        case "presence":
            self = .presence(
                userId: try c.decode(UserID.self, forKey: .userId), online: try c.decode(Bool.self, forKey: .online),
                lastSeenAt: try c.decodeIfPresent(Timestamp.self, forKey: .lastSeenAt))
        case "profile":
            self = .profile(try c.decode(User.self, forKey: .user))
        case "error":
            let detail = try c.decode(ErrorBody.Detail.self, forKey: .error)
            self = .error(
                ref: try c.decodeIfPresent(String.self, forKey: .ref), clientId: try c.decodeIfPresent(ClientMessageID.self, forKey: .clientId),
                code: detail.code, message: detail.message)
        case "pong":
            self = .pong(ref: try c.decodeIfPresent(String.self, forKey: .ref))
        default:
            throw UnknownFrameType(type: type)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .welcome(let userId, let head):
            try c.encode("welcome", forKey: .type)
            try c.encode(userId, forKey: .userId)
            try c.encode(head, forKey: .head)
        case .event(let event):
            try c.encode(event.position, forKey: .pos)
            switch event.payload {
            case .message(let message):
                try c.encode("message", forKey: .type)
                try c.encode(message, forKey: .message)
            case .receipt(let receipt):
                try c.encode("receipt", forKey: .type)
                try c.encode(receipt, forKey: .receipt)
            case .conversation(let info):
                try c.encode("conversation", forKey: .type)
                try c.encode(info, forKey: .conversation)
            case .invitation(let invitation):
                try c.encode("invitation", forKey: .type)
                try c.encode(invitation, forKey: .invitation)
            case .receiptSummary(let summary):
                try c.encode("receiptSummary", forKey: .type)
                try c.encode(summary, forKey: .summary)
            case .messageUpdated(let message):
                try c.encode("messageUpdated", forKey: .type)
                try c.encode(message, forKey: .message)
            case .messageHidden(let ref):
                try c.encode("messageHidden", forKey: .type)
                try c.encode(ref, forKey: .hidden)
            }
        case .synced(let position):
            try c.encode("synced", forKey: .type)
            try c.encode(position, forKey: .position)
        case .resync(let position):
            try c.encode("resync", forKey: .type)
            try c.encode(position, forKey: .position)
        case .sent(let ref, let message, let duplicate, let position):
            try c.encode("sent", forKey: .type)
            try c.encodeIfPresent(ref, forKey: .ref)
            try c.encode(message, forKey: .message)
            try c.encode(duplicate, forKey: .duplicate)
            try c.encodeIfPresent(position, forKey: .pos)
        case .ack(let ref):
            try c.encode("ack", forKey: .type)
            try c.encodeIfPresent(ref, forKey: .ref)
        case .typing(let conversationId, let userId, let isTyping):
            try c.encode("typing", forKey: .type)
            try c.encode(conversationId, forKey: .conversationId)
            try c.encode(userId, forKey: .userId)
            try c.encode(isTyping, forKey: .isTyping)
        case .presence(let userId, let online, let lastSeenAt):
            try c.encode("presence", forKey: .type)
            try c.encode(userId, forKey: .userId)
            try c.encode(online, forKey: .online)
            try c.encodeIfPresent(lastSeenAt, forKey: .lastSeenAt)
        case .profile(let user):
            try c.encode("profile", forKey: .type)
            try c.encode(user, forKey: .user)
        case .error(let ref, let clientId, let code, let message):
            try c.encode("error", forKey: .type)
            try c.encodeIfPresent(ref, forKey: .ref)
            try c.encodeIfPresent(clientId, forKey: .clientId)
            try c.encode(ErrorBody.Detail(code: code, message: message), forKey: .error)
        case .pong(let ref):
            try c.encode("pong", forKey: .type)
            try c.encodeIfPresent(ref, forKey: .ref)
        case .acted(let ref, let message, let duplicate):
            try c.encode("acted", forKey: .type)
            try c.encodeIfPresent(ref, forKey: .ref)
            try c.encode(message, forKey: .message)
            try c.encode(duplicate, forKey: .duplicate)
        }
    }
}
