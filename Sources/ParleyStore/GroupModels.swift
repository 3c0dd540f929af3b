import ParleyCore

/// A group to create, validated (title trimmed, members distinct and not the creator).
public struct NewGroup: Sendable {
    public var creator: UserID
    public var clientId: ClientMessageID
    public var title: String
    public var memberIds: [UserID]
    public var maxMembers: Int
    /// Whether the people invited (not yet contacts) see the group's history from its start once
    /// they accept, as with ``MembershipChange/Action/add(_:shareHistory:)``.
    public var shareHistory: Bool
    public init(creator: UserID, clientId: ClientMessageID, title: String, memberIds: [UserID], maxMembers: Int, shareHistory: Bool = false) {
        self.creator = creator
        self.clientId = clientId
        self.title = title
        self.memberIds = memberIds
        self.maxMembers = maxMembers
        self.shareHistory = shareHistory
    }
}

/// A change to an existing group, idempotent by (actor, clientId).
public struct MembershipChange: Sendable {
    /// What is asked.
    public enum Action: Sendable, Equatable {
        case add([UserID], shareHistory: Bool)
        case remove(UserID)
        case leave
        case rename(String)
        case setRole(UserID, MemberRole)
        /// The actor accepts their invitation.
        case accept
    }
    public var actor: UserID
    public var clientId: ClientMessageID
    public var conversation: ConversationID
    public var action: Action
    public var maxMembers: Int
    public init(actor: UserID, clientId: ClientMessageID, conversation: ConversationID, action: Action, maxMembers: Int) {
        self.actor = actor
        self.clientId = clientId
        self.conversation = conversation
        self.action = action
        self.maxMembers = maxMembers
    }
}

/// What a group action wrote.
public struct GroupOutcome: Sendable {
    /// The conversation (a create's new group, or the one acted on).
    public var conversationId: ConversationID
    /// The entry it made, or the original one for a retry; nil for an add that only invited.
    public var entry: Message?
    /// Who was invited instead of added.
    public var invited: [UserID]
    /// True when (actor, clientId) was used before: nothing was written.
    public var duplicate: Bool
    /// The stream events committed with it.
    public var deliveries: [Delivery]
    /// Members who are out of the group after it (removed, left): their typing ends.
    public var departed: [UserID]
    public init(
        conversationId: ConversationID, entry: Message?, invited: [UserID], duplicate: Bool, deliveries: [Delivery], departed: [UserID] = []
    ) {
        self.conversationId = conversationId
        self.entry = entry
        self.invited = invited
        self.duplicate = duplicate
        self.deliveries = deliveries
        self.departed = departed
    }
}

/// A current member of a group, as the rules need them.
public struct GroupMemberState: Sendable, Equatable {
    public var userId: UserID
    public var role: MemberRole
    /// Where they (last) joined: the seq of the entry that began their current span. The
    /// longest-standing member succeeds an owner who leaves (the conversation's order, not clocks).
    public var joinedAt: Int64
    public init(userId: UserID, role: MemberRole, joinedAt: Int64) {
        self.userId = userId
        self.role = role
        self.joinedAt = joinedAt
    }
}

/// What a backend reads before deciding a group action (``GroupPlan``).
public struct GroupState: Sendable {
    public var title: String
    public var closed: Bool
    public var members: [GroupMemberState]
    /// Who has an invitation still pending (an admin may withdraw one).
    public var invitees: Set<UserID>
    /// Pending invitations count against the group's size (an invitee may accept).
    public var pendingInvitations: Int { invitees.count }
    public init(title: String, closed: Bool, members: [GroupMemberState], invitees: Set<UserID> = []) {
        self.title = title
        self.closed = closed
        self.members = members
        self.invitees = invitees
    }

    public func member(_ user: UserID) -> GroupMemberState? { members.first { $0.userId == user } }
}

extension MessageInfo {
    /// Sorts members (id, deliveredSeq, readSeq) by their cursors against `seq`.
    public init(seq: Int64, states: [(UserID, Int64, Int64)]) {
        self.init(
            seq: seq, readBy: states.filter { $0.2 >= seq }.map(\.0), deliveredTo: states.filter { $0.2 < seq && $0.1 >= seq }.map(\.0),
            pending: states.filter { $0.1 < seq }.map(\.0))
    }
}

extension ConversationInfo {
    /// The info as `user` may see it when replayed: someone no longer in a group does not learn
    /// who is in it now, nor what it is called now.
    public func seen(by user: UserID) -> ConversationInfo {
        guard kind == .group, !members.contains(where: { $0.id == user }) else { return self }
        var info = self
        info.members = []
        info.title = nil
        return info
    }
}

extension Invitation {
    /// The most pending invitations a list answers (the newest): an invitee cannot make a list
    /// unbounded, but anyone may invite them.
    public static let listLimit = 200
}
