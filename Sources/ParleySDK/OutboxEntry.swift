import ParleyCore

/// A message the user wrote that the server has not confirmed yet.
public struct OutboxEntry: Codable, Hashable, Sendable, Identifiable {
    public enum State: Codable, Hashable, Sendable {
        case sending
        /// Refused by the server (validation, not found…): kept, with the reason, until retried or deleted.
        case failed(reason: String)
    }

    public var clientId: ClientMessageID
    public var conversationId: ConversationID
    /// Set while the conversation may not exist yet: the first message creates it.
    public var recipientId: UserID?
    public var text: String
    public var createdAt: Timestamp
    public var state: State
    /// Transient failures so far (rate limits, server trouble): they space out the retries.
    public var attempts: Int
    /// Not before this time (after a transient failure).
    public var retryAt: Timestamp?

    public var id: ClientMessageID { clientId }
}
