/// A member's role in a group.
public enum MemberRole: String, Codable, Sendable, CaseIterable {
    /// Exactly one while the group has members: everything admins may do, and making admins.
    case owner
    /// Adds and removes members, renames.
    case admin
    /// Writes.
    case member
}

/// What a membership entry records (``Message/entry``).
public enum GroupEntryType: String, Codable, Sendable {
    case created, added, joined, removed, left, role, renamed
}

/// A membership change, kept in the conversation's order as a message with its own seq.
public struct GroupEntry: Hashable, Codable, Sendable {
    /// What happened; the message's sender did it.
    public var type: GroupEntryType
    /// Whom it concerns: the members added (with `created`, `added`), removed, whose role changed,
    /// or who became owner when the owner left.
    public var userIds: [UserID]?
    /// The new role (`role`), or `owner` for the successor named by `left`.
    public var role: MemberRole?
    /// The title (`created`, `renamed`).
    public var title: String?
    /// An add that showed the newcomers the whole earlier history.
    public var shareHistory: Bool?

    /// Creates a value.
    public init(type: GroupEntryType, userIds: [UserID]? = nil, role: MemberRole? = nil, title: String? = nil, shareHistory: Bool? = nil) {
        self.type = type
        self.userIds = userIds
        self.role = role
        self.title = title
        self.shareHistory = shareHistory
    }
}

/// An invitation to a group, as the invitee sees it: nothing of the group but its title, size and
/// who asked, until they accept.
public struct Invitation: Hashable, Codable, Sendable {
    /// The group.
    public var conversationId: ConversationID
    /// Its title now.
    public var title: String
    /// Who invited me.
    public var inviter: User
    /// How many members it has now.
    public var memberCount: Int
    /// When I was invited.
    public var createdAt: Timestamp

    /// Creates a value.
    public init(conversationId: ConversationID, title: String, inviter: User, memberCount: Int, createdAt: Timestamp) {
        self.conversationId = conversationId
        self.title = title
        self.inviter = inviter
        self.memberCount = memberCount
        self.createdAt = createdAt
    }
}

/// A group's receipt aggregate: every current member has received up to `everyoneDeliveredSeq`
/// and read up to `everyoneReadSeq`. Sent to the senders whose messages changed status.
public struct ReceiptSummary: Hashable, Codable, Sendable {
    /// The group.
    public var conversationId: ConversationID
    /// The lowest deliveredSeq among the members.
    public var everyoneDeliveredSeq: Int64
    /// The lowest readSeq among the members.
    public var everyoneReadSeq: Int64

    /// Creates a value.
    public init(conversationId: ConversationID, everyoneDeliveredSeq: Int64, everyoneReadSeq: Int64) {
        self.conversationId = conversationId
        self.everyoneDeliveredSeq = everyoneDeliveredSeq
        self.everyoneReadSeq = everyoneReadSeq
    }
}

/// Who has one of my messages in a group (`GET …/messages/{seq}/info`), among the members when
/// it was sent who are still in the group.
public struct MessageInfo: Hashable, Codable, Sendable {
    /// The message.
    public var seq: Int64
    /// Members who have read it.
    public var readBy: [UserID]
    /// Members whose devices have it, unread.
    public var deliveredTo: [UserID]
    /// Members who have neither.
    public var pending: [UserID]

    /// Creates a value.
    public init(seq: Int64, readBy: [UserID], deliveredTo: [UserID], pending: [UserID]) {
        self.seq = seq
        self.readBy = readBy
        self.deliveredTo = deliveredTo
        self.pending = pending
    }
}
