/// A frame a client sends over the WebSocket. JSON objects discriminated by `"type"`.
///
/// Every frame may carry a `ref` string that the server echoes in the `ack` or `error` it answers with.
public enum ClientFrame: Equatable, Sendable {
    /// First frame on a connection: authenticate and say where the stream resumes.
    /// `after` is the last stream position the client processed; `nil` starts live from now.
    case hello(token: String, after: Int64?, ref: String? = nil)
    /// Send a message to an existing conversation or, to start one, to a user.
    case send(SendRequest)
    /// Move my delivered and/or read cursor in a conversation.
    case receipt(ref: String?, conversationId: ConversationID, deliveredSeq: Int64?, readSeq: Int64?)
    /// I am typing (or stopped) in a conversation; expires on the server after a few seconds.
    case typing(conversationId: ConversationID, isTyping: Bool, ref: String? = nil)
    case ping(ref: String?)
    /// React, edit, delete or hide a message (docs/protocol.md "Message actions").
    case action(MessageActionRequest)
}

/// The body of a send, identical over REST (`POST /v1/messages`) and WebSocket (`send`).
public struct SendRequest: Codable, Equatable, Sendable {
    /// Echoed in the answer (`sent` or `error`), to match it to this request.
    public var ref: String?
    /// The idempotency key: a UUID made once per message and reused for every retry.
    public var clientId: ClientMessageID
    /// The conversation to post to; or `nil` with `recipientId` set to reach a user directly.
    public var conversationId: ConversationID?
    /// The other user, to start (or find) the direct conversation; or give `conversationId`.
    public var recipientId: UserID?
    /// The message, 1–10,000 characters after trimming (``Validation/messageText(_:)``).
    public var text: String
    /// The seq of the message this one answers, in the same conversation and visible to the sender.
    public var replyToSeq: Int64?
    /// Complete uploads of the sender's to carry (at most ``Attachments/maxPerMessage``); with
    /// them the text may be empty (a caption).
    public var attachments: [AttachmentRequest]?

    /// Creates a send request; give exactly one of `conversationId` and `recipientId`.
    public init(
        ref: String? = nil, clientId: ClientMessageID, conversationId: ConversationID? = nil, recipientId: UserID? = nil, text: String,
        replyToSeq: Int64? = nil, attachments: [AttachmentRequest]? = nil
    ) {
        self.attachments = attachments
        self.replyToSeq = replyToSeq
        self.ref = ref
        self.clientId = clientId
        self.conversationId = conversationId
        self.recipientId = recipientId
        self.text = text
    }
}

extension ClientFrame: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case type, ref, token, after, clientId, conversationId, recipientId, text, deliveredSeq, readSeq, isTyping, replyToSeq, seq, kind, emoji
        case attachments
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let type = try c.decode(String.self, forKey: .type)
        switch type {
        case "hello":
            self = .hello(
                token: try c.decode(String.self, forKey: .token), after: try c.decodeIfPresent(Int64.self, forKey: .after),
                ref: try c.decodeIfPresent(String.self, forKey: .ref))
        case "send":
            self = .send(try SendRequest(from: decoder))
        case "receipt":
            self = .receipt(
                ref: try c.decodeIfPresent(String.self, forKey: .ref),
                conversationId: try c.decode(ConversationID.self, forKey: .conversationId),
                deliveredSeq: try c.decodeIfPresent(Int64.self, forKey: .deliveredSeq),
                readSeq: try c.decodeIfPresent(Int64.self, forKey: .readSeq))
        case "typing":
            self = .typing(
                conversationId: try c.decode(ConversationID.self, forKey: .conversationId),
                isTyping: try c.decodeIfPresent(Bool.self, forKey: .isTyping) ?? true,
                ref: try c.decodeIfPresent(String.self, forKey: .ref))
        case "ping":
            self = .ping(ref: try c.decodeIfPresent(String.self, forKey: .ref))
        case "action":
            self = .action(try MessageActionRequest(from: decoder))
        default:
            throw UnknownFrameType(type: type)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .hello(let token, let after, let ref):
            try c.encode("hello", forKey: .type)
            try c.encode(token, forKey: .token)
            try c.encodeIfPresent(after, forKey: .after)
            try c.encodeIfPresent(ref, forKey: .ref)
        case .send(let request):
            try c.encode("send", forKey: .type)
            try request.encode(to: encoder)
        case .receipt(let ref, let conversationId, let deliveredSeq, let readSeq):
            try c.encode("receipt", forKey: .type)
            try c.encodeIfPresent(ref, forKey: .ref)
            try c.encode(conversationId, forKey: .conversationId)
            try c.encodeIfPresent(deliveredSeq, forKey: .deliveredSeq)
            try c.encodeIfPresent(readSeq, forKey: .readSeq)
        case .typing(let conversationId, let isTyping, let ref):
            try c.encode("typing", forKey: .type)
            try c.encode(conversationId, forKey: .conversationId)
            try c.encode(isTyping, forKey: .isTyping)
            try c.encodeIfPresent(ref, forKey: .ref)
        case .ping(let ref):
            try c.encode("ping", forKey: .type)
            try c.encodeIfPresent(ref, forKey: .ref)
        case .action(let request):
            try c.encode("action", forKey: .type)
            try request.encode(to: encoder)
        }
    }
}

/// Thrown when decoding a frame whose `type` this version does not know.
public struct UnknownFrameType: Error, Equatable {
    /// The `type` that was not understood.
    public var type: String
    /// Creates the error.
    public init(type: String) { self.type = type }
}
