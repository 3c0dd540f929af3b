/// Something a user can see change, at its position in that user's ordered stream (guarantee 5).
///
/// Positions are per user, start at 1 and have no gaps: a client that has processed position `p`
/// resumes by asking for everything after `p`.
public struct StreamEvent: Hashable, Sendable {
    public var position: Int64
    public var payload: Payload

    public enum Payload: Hashable, Sendable {
        /// A new message in one of the user's conversations (their own sends included, for other devices).
        case message(Message)
        /// A member's delivered/read cursor moved.
        case receipt(ReceiptUpdate)
        /// A conversation appeared in the user's list.
        case conversation(ConversationInfo)
    }

    public init(position: Int64, payload: Payload) {
        self.position = position
        self.payload = payload
    }

    public var conversationId: ConversationID {
        switch payload {
        case .message(let message): message.conversationId
        case .receipt(let receipt): receipt.conversationId
        case .conversation(let info): info.id
        }
    }
}
