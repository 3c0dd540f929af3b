import ParleyCore

/// A validated message action to store (docs/protocol.md "Message actions").
public struct NewMessageAction: Sendable, Equatable {
    /// What the action does, with its validated argument.
    public enum Change: Sendable, Equatable {
        /// Set (`emoji`) or clear (`nil`) the actor's reaction.
        case react(String?)
        /// Replace the text (already normalized and checked).
        case edit(String)
        /// Delete for everyone.
        case delete
        /// Delete for the actor only.
        case hide

        /// The wire kind, for the idempotency record.
        public var kind: MessageActionKind {
            switch self {
            case .react: .react
            case .edit: .edit
            case .delete: .delete
            case .hide: .hide
            }
        }
    }

    public var actor: UserID
    public var clientId: ClientMessageID
    public var conversation: ConversationID
    public var seq: Int64
    public var change: Change
    /// How long after its send the sender may edit a message, in milliseconds.
    public var editWindowMilliseconds: Int64
    /// How long after its send the sender may delete a message for everyone, in milliseconds.
    public var deleteWindowMilliseconds: Int64

    public init(
        actor: UserID, clientId: ClientMessageID, conversation: ConversationID, seq: Int64, change: Change,
        editWindowMilliseconds: Int64 = MessageActionPlan.defaultWindowMilliseconds,
        deleteWindowMilliseconds: Int64 = MessageActionPlan.defaultWindowMilliseconds
    ) {
        self.actor = actor
        self.clientId = clientId
        self.conversation = conversation
        self.seq = seq
        self.change = change
        self.editWindowMilliseconds = editWindowMilliseconds
        self.deleteWindowMilliseconds = deleteWindowMilliseconds
    }
}

/// The result of a message action: the message as it is now, for the actor, and the events written.
public struct ActionOutcome: Sendable {
    public var message: Message
    /// True when (actor, client id) was used before: nothing was applied, `deliveries` is empty.
    public var duplicate: Bool
    public var deliveries: [Delivery]
    public init(message: Message, duplicate: Bool, deliveries: [Delivery]) {
        self.message = message
        self.duplicate = duplicate
        self.deliveries = deliveries
    }
}

/// What a backend read about the message acted on, for ``MessageActionPlan``.
public struct ActedMessage: Sendable, Equatable {
    public var sender: UserID
    public var createdAt: Timestamp
    public var text: String
    public var deleted: Bool
    public var isEntry: Bool
    /// It carries photos or files: its text is a caption, which may be empty.
    public var hasAttachments: Bool
    public init(sender: UserID, createdAt: Timestamp, text: String, deleted: Bool, isEntry: Bool, hasAttachments: Bool = false) {
        self.sender = sender
        self.createdAt = createdAt
        self.text = text
        self.deleted = deleted
        self.isEntry = isEntry
        self.hasAttachments = hasAttachments
    }
}

extension ReplyQuote {
    /// A quote read from a message row before its original was looked up: only the seq is real.
    /// Backends complete it (the original's sender, first line, deleted) before it leaves the store.
    public static func pending(_ seq: Int64) -> ReplyQuote {
        ReplyQuote(seq: seq, senderId: UserID(rawValue: ""), preview: "", deleted: false)
    }
}

extension Message {
    /// Whether a backend must still complete it for a viewer: a reply quote or reactions to read, or
    /// a group edit that may postdate the viewer's leaving. Most messages need nothing.
    public var needsRendering: Bool { replyTo != nil || reactions != nil || (editedAt != nil && conversationId.isGroup) }
}
