import ParleyCore

/// An account to create; the password is already hashed.
public struct NewUser: Sendable {
    public var username: String
    public var displayName: String
    public var passwordHash: String
    public init(username: String, displayName: String, passwordHash: String) {
        self.username = username
        self.displayName = displayName
        self.passwordHash = passwordHash
    }
}

/// What login needs to check a password.
public struct Credentials: Sendable {
    public var user: User
    public var passwordHash: String
    public init(user: User, passwordHash: String) {
        self.user = user
        self.passwordHash = passwordHash
    }
}

/// A live session: whose it is and until when it is valid.
public struct SessionInfo: Sendable, Equatable {
    public var user: UserID
    public var expiresAt: Timestamp
    public init(user: UserID, expiresAt: Timestamp) {
        self.user = user
        self.expiresAt = expiresAt
    }
}

/// Where a message goes: an existing conversation, or a user (creating the direct conversation if needed).
public enum SendTarget: Hashable, Sendable {
    case conversation(ConversationID)
    case user(UserID)
}

/// A validated message to store.
public struct NewMessage: Sendable {
    public var sender: UserID
    public var clientId: ClientMessageID
    public var target: SendTarget
    public var text: String
    /// The usernames the text mentions (``Validation/mentionedUsernames(in:)``); in a group, the
    /// store resolves those of current members into ``Message/mentions``.
    public var mentionNames: [String]
    /// The seq of the message this one answers (same conversation, visible to the sender).
    public var replyToSeq: Int64?
    /// Uploads to carry, checked by the server already (thumbnails as `data:` URLs); the store
    /// claims them in the send's transaction (``UploadStore``).
    public var attachments: [AttachmentRequest]
    public init(
        sender: UserID, clientId: ClientMessageID, target: SendTarget, text: String, mentionNames: [String] = [], replyToSeq: Int64? = nil,
        attachments: [AttachmentRequest] = []
    ) {
        self.attachments = attachments
        self.replyToSeq = replyToSeq
        self.sender = sender
        self.clientId = clientId
        self.target = target
        self.text = text
        self.mentionNames = mentionNames
    }
}

/// An event committed to one user's stream, to be pushed to that user's live connections.
public struct Delivery: Hashable, Sendable {
    public var recipient: UserID
    public var event: StreamEvent
    /// The position before this event in the recipient's stream: a connection that has written
    /// it may write this event; one behind it fetches what lies between from the store first.
    /// Positions go up but may skip (a group message takes one position for all its members), so
    /// the gap is named here rather than inferred from `position - 1`.
    public var previous: Int64
    public init(recipient: UserID, event: StreamEvent, previous: Int64? = nil) {
        self.recipient = recipient
        self.event = event
        self.previous = previous ?? event.position - 1
    }
}

/// The result of a send: the stored message (the original one for a retry) and the events it committed.
public struct SendOutcome: Sendable {
    public var message: Message
    /// True when (sender, client id) was stored before: nothing new was written and `deliveries` is empty.
    public var duplicate: Bool
    public var deliveries: [Delivery]
    /// True when this message is the first one its sender wrote in a conversation where the other
    /// member had already written: from now on the members see each other's presence.
    public var contactsFormed: Bool
    public init(message: Message, duplicate: Bool, deliveries: [Delivery], contactsFormed: Bool = false) {
        self.message = message
        self.duplicate = duplicate
        self.deliveries = deliveries
        self.contactsFormed = contactsFormed
    }
}

/// The result of creating (or finding) a direct conversation.
public struct ConversationOutcome: Sendable {
    public var conversation: ConversationSummary
    public var created: Bool
    public var deliveries: [Delivery]
    public init(conversation: ConversationSummary, created: Bool, deliveries: [Delivery]) {
        self.conversation = conversation
        self.created = created
        self.deliveries = deliveries
    }
}

/// The result of a receipt request: the member's cursors after it, and events when they moved.
public struct ReceiptOutcome: Sendable {
    public var receipt: ReceiptUpdate
    public var deliveries: [Delivery]
    public init(receipt: ReceiptUpdate, deliveries: [Delivery]) {
        self.receipt = receipt
        self.deliveries = deliveries
    }
}

/// A page request over a conversation's history, by seq. With neither bound: the latest `limit`.
/// `before` and `after` are exclusive; with `after`, the page is the oldest `limit` after it.
public struct HistoryQuery: Sendable, Equatable {
    public var limit: Int
    public var before: Int64?
    public var after: Int64?
    public init(limit: Int, before: Int64? = nil, after: Int64? = nil) {
        self.limit = limit
        self.before = before
        self.after = after
    }
}

/// Position in the conversation list, which is sorted by (last activity, id) descending.
public struct ConversationCursor: Sendable, Equatable {
    public var lastActivityAt: Timestamp
    public var id: ConversationID
    public init(lastActivityAt: Timestamp, id: ConversationID) {
        self.lastActivityAt = lastActivityAt
        self.id = id
    }
}

/// The answer to a resume request.
public enum Replay: Sendable, Equatable {
    /// Events after the requested position, oldest first (at most the limit asked; ask again for more).
    case events([StreamEvent], head: Int64)
    /// The position was pruned (or never existed): the client must resync; `head` is where to go on from.
    case tooOld(head: Int64)
}

/// What a new live connection needs from the store (``ParleyStore/liveStart(of:)``).
public struct LiveStart: Sendable, Equatable {
    /// The user's newest stream position.
    public var head: Int64
    /// The people who may see the user's presence (``ConversationStore/contacts(of:)``).
    public var contacts: [UserID]

    public init(head: Int64, contacts: [UserID]) {
        self.head = head
        self.contacts = contacts
    }
}
