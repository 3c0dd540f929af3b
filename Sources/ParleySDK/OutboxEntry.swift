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
    }
}
