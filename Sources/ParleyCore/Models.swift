/// A registered person, as anyone who may start a chat with them sees them.
public struct User: Hashable, Codable, Sendable {
    /// The user's permanent id.
    public var id: UserID
    /// Unique, lowercase handle used to find people.
    public var username: String
    /// The name shown to others.
    public var displayName: String
    /// When it was created.
    public var createdAt: Timestamp
    /// Their profile photo: a path (`/v1/photos/{id}`, ``API/photoPath(_:)``) that loads without a
    /// token and changes whenever the photo does; absent when they have none.
    public var photo: String?

    /// Creates a user value.
    public init(id: UserID, username: String, displayName: String, createdAt: Timestamp, photo: String? = nil) {
        self.id = id
        self.username = username
        self.displayName = displayName
        self.createdAt = createdAt
        self.photo = photo
    }
}

/// A stored message. `seq` is the conversation's gapless server order (1, 2, 3 …).
public struct Message: Hashable, Codable, Sendable {
    /// The server's id of the message.
    public var id: MessageID
    /// The conversation it belongs to.
    public var conversationId: ConversationID
    /// Its place in the conversation: 1, 2, 3… without gaps (guarantee 1).
    public var seq: Int64
    /// Who wrote it.
    public var senderId: UserID
    /// The sender's idempotency key (guarantee 2).
    public var clientId: ClientMessageID
    /// The text, as written (line endings unified, trimmed: ``Validation/messageText(_:)``).
    public var text: String
    /// Server time at which the message was committed.
    public var createdAt: Timestamp
    /// Set when this is a membership entry of a group ("Ada added Grace"), whose `text` is empty.
    public var entry: GroupEntry?
    /// Members of the group mentioned by `@username` in the text, resolved by the server.
    public var mentions: [UserID]?
    /// The message this one answers, as it is now.
    public var replyTo: ReplyQuote?
    /// When the text was last edited.
    public var editedAt: Timestamp?
    /// When it was deleted for everyone: a tombstone whose `text` is empty.
    public var deletedAt: Timestamp?
    /// Reactions, by emoji (absent when there are none).
    public var reactions: [Reaction]?
    /// Photos and files (absent when there are none; gone once the message is deleted).
    public var attachments: [Attachment]?

    /// Creates a value.
    public init(
        id: MessageID, conversationId: ConversationID, seq: Int64, senderId: UserID,
        clientId: ClientMessageID, text: String, createdAt: Timestamp, entry: GroupEntry? = nil, mentions: [UserID]? = nil,
        replyTo: ReplyQuote? = nil, editedAt: Timestamp? = nil, deletedAt: Timestamp? = nil, reactions: [Reaction]? = nil,
        attachments: [Attachment]? = nil
    ) {
        self.attachments = attachments
        self.replyTo = replyTo
        self.editedAt = editedAt
        self.deletedAt = deletedAt
        self.reactions = reactions
        self.id = id
        self.conversationId = conversationId
        self.seq = seq
        self.senderId = senderId
        self.clientId = clientId
        self.text = text
        self.createdAt = createdAt
        self.entry = entry
        self.mentions = mentions
    }

    /// Whether it is a membership entry rather than something someone wrote.
    public var isEntry: Bool { entry != nil }

    /// Whether it was deleted for everyone.
    public var isDeleted: Bool { deletedAt != nil }
}

/// One member of a conversation with their receipt cursors (guarantee 4: they only move forward).
public struct ConversationMember: Hashable, Codable, Sendable {
    /// The user.
    public var userId: UserID
    /// Their username.
    public var username: String
    /// The name shown to others.
    public var displayName: String
    /// Highest seq this member's devices have stored.
    public var deliveredSeq: Int64
    /// Highest seq this member has seen.
    public var readSeq: Int64
    /// Whether the member has a live connection now (filled in by the server, not stored).
    public var online: Bool?
    /// When the member was last connected; `nil` while online or if never seen.
    public var lastSeenAt: Timestamp?
    /// The member's role in a group (absent in a direct conversation).
    public var role: MemberRole?
    /// Their profile photo's path, as ``User/photo``.
    public var photo: String?

    /// Creates a value.
    public init(
        userId: UserID, username: String, displayName: String, deliveredSeq: Int64, readSeq: Int64,
        online: Bool? = nil, lastSeenAt: Timestamp? = nil, role: MemberRole? = nil, photo: String? = nil
    ) {
        self.role = role
        self.photo = photo
        self.userId = userId
        self.username = username
        self.displayName = displayName
        self.deliveredSeq = deliveredSeq
        self.readSeq = readSeq
        self.online = online
        self.lastSeenAt = lastSeenAt
    }
}

/// The kind of a conversation.
public enum ConversationKind: String, Codable, Sendable {
    /// Exactly two people; the id is derived from theirs.
    case direct
    /// A titled conversation of 1 to N members with roles.
    case group
}

/// A conversation as one member sees it in their list.
public struct ConversationSummary: Hashable, Codable, Sendable {
    /// The conversation's id.
    public var id: ConversationID
    /// Direct (two people) for now.
    public var kind: ConversationKind
    /// When it was created.
    public var createdAt: Timestamp
    /// seq of the newest message (0 when there is none yet).
    public var lastSeq: Int64
    /// The newest message, for list previews.
    public var lastMessage: Message?
    /// Time of the last message, or creation when there is none: the list's sort key.
    public var lastActivityAt: Timestamp
    /// `lastSeq − my readSeq`, computed by the server.
    public var unreadCount: Int64
    /// Everyone in it, with their cursors and (when shared) presence.
    public var members: [ConversationMember]
    /// Whether the members see each other's presence (online, last seen): only once each has sent
    /// a message here, so a stranger who writes first learns nothing until they get a reply.
    public var presenceShared: Bool?
    /// A group's title.
    public var title: String?
    /// Messages after my readSeq that mention me.
    public var mentionCount: Int64?
    /// In a group: everyone has received up to here (the lowest deliveredSeq among the members).
    public var everyoneDeliveredSeq: Int64?
    /// In a group: everyone has read up to here (the lowest readSeq among the members).
    public var everyoneReadSeq: Int64?
    /// Set once I am no longer a member: the seq of the entry that ended my membership.
    public var leftSeq: Int64?

    /// Creates a value.
    public init(
        id: ConversationID, kind: ConversationKind, createdAt: Timestamp, lastSeq: Int64,
        lastMessage: Message?, lastActivityAt: Timestamp, unreadCount: Int64, members: [ConversationMember],
        presenceShared: Bool? = nil, title: String? = nil, mentionCount: Int64? = nil,
        everyoneDeliveredSeq: Int64? = nil, everyoneReadSeq: Int64? = nil, leftSeq: Int64? = nil
    ) {
        self.title = title
        self.mentionCount = mentionCount
        self.everyoneDeliveredSeq = everyoneDeliveredSeq
        self.everyoneReadSeq = everyoneReadSeq
        self.leftSeq = leftSeq
        self.id = id
        self.kind = kind
        self.createdAt = createdAt
        self.lastSeq = lastSeq
        self.lastMessage = lastMessage
        self.lastActivityAt = lastActivityAt
        self.unreadCount = unreadCount
        self.members = members
        self.presenceShared = presenceShared
    }

    /// The member who is not `me` (for a direct conversation).
    public func otherMember(than me: UserID) -> ConversationMember? {
        members.first { $0.userId != me }
    }
}

/// A receipt cursor move of one member, as pushed to every member.
public struct ReceiptUpdate: Hashable, Codable, Sendable {
    /// The conversation it belongs to.
    public var conversationId: ConversationID
    /// The user.
    public var userId: UserID
    /// Everything up to this seq reached the member's device.
    public var deliveredSeq: Int64
    /// Everything up to this seq was seen by the member.
    public var readSeq: Int64

    /// Creates a value.
    public init(conversationId: ConversationID, userId: UserID, deliveredSeq: Int64, readSeq: Int64) {
        self.conversationId = conversationId
        self.userId = userId
        self.deliveredSeq = deliveredSeq
        self.readSeq = readSeq
    }
}

/// Static facts of a conversation, pushed when it appears in a user's list.
public struct ConversationInfo: Hashable, Codable, Sendable {
    /// The conversation's id.
    public var id: ConversationID
    /// Direct (two people) for now.
    public var kind: ConversationKind
    /// When it was created.
    public var createdAt: Timestamp
    /// Its members.
    public var members: [User]
    /// A group's title.
    public var title: String?

    /// Creates a value.
    public init(id: ConversationID, kind: ConversationKind, createdAt: Timestamp, members: [User], title: String? = nil) {
        self.title = title
        self.id = id
        self.kind = kind
        self.createdAt = createdAt
        self.members = members
    }
}
