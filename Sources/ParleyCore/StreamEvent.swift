/// Something a user can see change, at its position in that user's ordered stream (guarantee 5).
///
/// Positions are per user and go up from 1; they may skip (a group message takes one position for
/// all its members): a client that has processed position `p` resumes by asking for everything after `p`.
public struct StreamEvent: Hashable, Sendable {
    /// The event's place in the user's stream, above the one before it (resume with `after`).
    public var position: Int64
    /// What happened.
    public var payload: Payload

    /// The kinds of events a user's stream carries. Indirect: a group message's payload is one box
    /// that its members' events share, so copying it for each costs a reference, not a message.
    public indirect enum Payload: Hashable, Sendable {
        /// A new message in one of the user's conversations (their own sends included, for other devices).
        case message(Message)
        /// A member's delivered/read cursor moved.
        case receipt(ReceiptUpdate)
        /// A conversation appeared in the user's list.
        case conversation(ConversationInfo)
        /// Someone invited the user to a group.
        case invitation(Invitation)
        /// A group's receipt aggregate moved (sent to the senders it concerns).
        case receiptSummary(ReceiptSummary)
        /// A message changed (reaction, edit, delete for everyone): it as it is now.
        case messageUpdated(Message)
        /// The user deleted a message for themselves (sent to their own stream only).
        case messageHidden(MessageRef)
    }

    /// Creates an event.
    public init(position: Int64, payload: Payload) {
        self.position = position
        self.payload = payload
    }

    /// The conversation the event is about.
    public var conversationId: ConversationID {
        switch payload {
        case .message(let message): message.conversationId
        case .receipt(let receipt): receipt.conversationId
        case .conversation(let info): info.id
        case .invitation(let invitation): invitation.conversationId
        case .receiptSummary(let summary): summary.conversationId
        case .messageUpdated(let message): message.conversationId
        case .messageHidden(let ref): ref.conversationId
        }
    }
}
