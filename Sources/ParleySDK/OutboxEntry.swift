import ParleyCore

/// A message the user wrote, or an action on a message (react, edit, delete), that the server has
/// not confirmed yet.
public struct OutboxEntry: Codable, Hashable, Sendable, Identifiable {
    /// Whether the entry is on its way or was refused.
    public enum State: Codable, Hashable, Sendable {
        case sending
        /// Refused by the server (validation, not found…): kept, with the reason, until retried or deleted.
        case failed(reason: String)
    }

    /// The idempotency key, made when the message was written (or the action chosen).
    public var clientId: ClientMessageID
    /// The conversation it goes to.
    public var conversationId: ConversationID
    /// Set while the conversation may not exist yet: the first message creates it.
    public var recipientId: UserID?
    /// The message; for an edit, the new text; empty for the other actions.
    public var text: String
    /// When the user wrote it.
    public var createdAt: Timestamp
    /// Sending, or failed with the server's reason.
    public var state: State
    /// Transient failures so far (rate limits, server trouble): they space out the retries.
    public var attempts: Int
    /// Not before this time (after a transient failure).
    public var retryAt: Timestamp?
    /// For a send: the message it answers (a reply), confirmed or still pending.
    public var replyTo: MessageTarget? = nil
    /// Set when the entry is an action on a message rather than a message.
    public var action: PendingAction? = nil
    /// Whether it was put on the wire at least once: then the server may hold it even without an
    /// answer, so it can no longer be rewritten or cancelled in place (``MessageOutbox`` rules 9–10).
    public var wasSent = false
    /// For a send: the files it carries, each uploaded before the message goes (``MessageOutbox`` rule 13).
    public var attachments: [PendingAttachment]? = nil

    /// The client id (stable for SwiftUI lists).
    public var id: ClientMessageID { clientId }
    /// Whether this entry is a message (a send) rather than an action.
    public var isSend: Bool { action == nil }
}

/// Which message an outbox entry refers to.
public enum MessageTarget: Codable, Hashable, Sendable {
    /// A message the server confirmed, by its seq.
    case seq(Int64)
    /// One of my messages still in the outbox, by its client id: resolved to its seq once confirmed.
    case pending(ClientMessageID)

    /// The seq, once known.
    public var seq: Int64? {
        if case .seq(let seq) = self { seq } else { nil }
    }
}

/// A message action waiting in the outbox (docs/protocol.md "Message actions").
public struct PendingAction: Codable, Hashable, Sendable {
    /// What it does.
    public var kind: MessageActionKind
    /// The message it acts on.
    public var target: MessageTarget
    /// For `react`: the emoji, or `nil` to clear my reaction.
    public var emoji: String?

    /// Creates a value.
    public init(kind: MessageActionKind, target: MessageTarget, emoji: String? = nil) {
        self.kind = kind
        self.target = target
        self.emoji = emoji
    }
}

extension OutboxEntry {
    /// Reads entries written before actions existed as well (without `replyTo`, `action`, `wasSent`):
    /// those count as sent, since they may have been.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        clientId = try c.decode(ClientMessageID.self, forKey: .clientId)
        conversationId = try c.decode(ConversationID.self, forKey: .conversationId)
        recipientId = try c.decodeIfPresent(UserID.self, forKey: .recipientId)
        text = try c.decode(String.self, forKey: .text)
        createdAt = try c.decode(Timestamp.self, forKey: .createdAt)
        state = try c.decode(State.self, forKey: .state)
        attempts = try c.decode(Int.self, forKey: .attempts)
        retryAt = try c.decodeIfPresent(Timestamp.self, forKey: .retryAt)
        replyTo = try c.decodeIfPresent(MessageTarget.self, forKey: .replyTo)
        action = try c.decodeIfPresent(PendingAction.self, forKey: .action)
        wasSent = try c.decodeIfPresent(Bool.self, forKey: .wasSent) ?? true
        attachments = try c.decodeIfPresent([PendingAttachment].self, forKey: .attachments)
    }

    /// Whether every file it carries is on the server (then the message itself may go).
    public var isUploaded: Bool { (attachments ?? []).allSatisfy { $0.uploaded } }
}

/// A file a pending message carries: where it is on this device, and how far its upload got. The
/// upload's id is kept as soon as the server made it, so a client killed mid-upload asks the server
/// where it stands and goes on from there (docs/protocol.md "Files").
public struct PendingAttachment: Codable, Hashable, Sendable {
    /// The file on this device (read when uploading: it must stay until the message is sent).
    public var path: String
    /// The name the others see.
    public var name: String
    public var size: Int64
    /// Lowercase hex SHA-256 of the file, promised to the server (which checks it); worked out off
    /// the main actor before the upload starts.
    public var sha256: String?
    /// The server's upload, once created.
    public var uploadId: UploadID?
    /// Every byte arrived and the server read the file.
    public var uploaded: Bool
    /// What the app made to show before the file loads (thumbnail base64, BlurHash), and a video's size and length.
    public var thumbnail: String?
    public var placeholder: String?
    public var width: Int?
    public var height: Int?
    public var durationMs: Int64?
    /// Sent as it was: a photo keeps its metadata (where it was taken, the camera), which the server
    /// otherwise takes out. nil, as outboxes written before it say, is no.
    public var original: Bool?

    /// Creates a value (not uploaded yet).
    public init(
        path: String, name: String, size: Int64, sha256: String? = nil, thumbnail: String? = nil, placeholder: String? = nil, width: Int? = nil,
        height: Int? = nil, durationMs: Int64? = nil, original: Bool = false
    ) {
        self.original = original ? true : nil
        self.path = path
        self.name = name
        self.size = size
        self.sha256 = sha256
        self.uploadId = nil
        self.uploaded = false
        self.thumbnail = thumbnail
        self.placeholder = placeholder
        self.width = width
        self.height = height
        self.durationMs = durationMs
    }

    /// What the send says of it.
    var request: AttachmentRequest? {
        uploadId.map { AttachmentRequest(uploadId: $0, thumbnail: thumbnail, placeholder: placeholder, width: width, height: height, durationMs: durationMs) }
    }
}
