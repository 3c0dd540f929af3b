import ParleyCore

/// A message the user wrote that the server has not confirmed yet.
public struct OutboxEntry: Codable, Hashable, Sendable, Identifiable {
    /// Whether the entry is on its way or was refused.
    public enum State: Codable, Hashable, Sendable {
        case sending
        /// Refused by the server (validation, not found…): kept, with the reason, until retried or deleted.
        case failed(reason: String)
    }

    /// The idempotency key, made when the message was written.
    public var clientId: ClientMessageID
    /// The conversation it goes to.
    public var conversationId: ConversationID
    /// Set while the conversation may not exist yet: the first message creates it.
    public var recipientId: UserID?
    /// The message.
    public var text: String
    /// When the user wrote it.
    public var createdAt: Timestamp
    /// Sending, or failed with the server's reason.
    public var state: State
    /// Transient failures so far (rate limits, server trouble): they space out the retries.
    public var attempts: Int
    /// Not before this time (after a transient failure).
    public var retryAt: Timestamp?

    /// The client id (stable for SwiftUI lists).
    public var id: ClientMessageID { clientId }
}
