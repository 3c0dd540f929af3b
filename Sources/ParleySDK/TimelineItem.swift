import ParleyCore

/// Where one of my messages is: sending (clock) → sent (✓) → delivered (✓✓) → read (blue ✓✓), or failed (!).
public enum MessageStatus: Hashable, Sendable {
    case sending
    case sent
    case delivered
    case read
    case failed(reason: String)
}

/// One message of a chat as shown: confirmed ones in seq order, then my pending ones in the order written.
public struct TimelineItem: Hashable, Sendable, Identifiable {
    /// The client id: stable from the moment the message is written until it is confirmed and after.
    public var id: ClientMessageID
    /// The server's seq once confirmed; `nil` while pending.
    public var seq: Int64?
    /// Who wrote it.
    public var senderId: UserID
    /// The message.
    public var text: String
    /// When it was written (the server's time once confirmed).
    public var createdAt: Timestamp
    /// For my messages; `nil` for theirs.
    public var status: MessageStatus?

    /// A confirmed message as shown, without a status.
    public init(_ message: Message) {
        self.init(id: message.clientId, seq: message.seq, senderId: message.senderId, text: message.text, createdAt: message.createdAt, status: nil)
    }

    init(id: ClientMessageID, seq: Int64?, senderId: UserID, text: String, createdAt: Timestamp, status: MessageStatus?) {
        self.id = id
        self.seq = seq
        self.senderId = senderId
        self.text = text
        self.createdAt = createdAt
        self.status = status
    }
}

/// Something that happened, for interfaces that print rather than observe (the terminal client, tests).
public enum ClientEvent: Sendable, Equatable {
    case connection(ParleyClient.ConnectionState)
    case message(Message)
    case typing(ConversationID, UserID, Bool)
    case presence(UserID, ParleyClient.Presence)
    case receipt(ReceiptUpdate)
    case sendFailed(ClientMessageID, String)
    case conversationsChanged
}
