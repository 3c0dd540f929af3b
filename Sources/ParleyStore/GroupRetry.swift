import ParleyCore

/// A create or add as ``GroupStore`` records it under (actor, client id): its group and whom it invited.
public struct RecordedGroupAction: Sendable, Equatable {
    public var conversation: ConversationID
    public var invited: [UserID]
    public init(conversation: ConversationID, invited: [UserID]) {
        self.conversation = conversation
        self.invited = invited
    }
}

/// The retry rule of every group action, the same on every backend. (actor, client id) is unique
/// among everything the actor wrote: messages, entries and recorded creates and adds.
/// 1. A create or add seen before answers the original group, entry and invitees (an add that only
///    invited has no entry), with `duplicate`.
/// 2. Any other action seen before answers its entry, with `duplicate`: the entry of that kind of
///    action, about the same member and role (a rename's title, like a message's text, is not
///    compared).
/// 3. The id used for something else (a message, another group, another kind of action, the same
///    kind about someone else) is a conflict.
/// 4. Neither recorded nor written: the action is new (`nil`).
public enum GroupRetry {
    /// For a create: `recorded` and `written` are what the store holds under the id.
    public static func create(recorded: RecordedGroupAction?, written: Message?) throws -> GroupOutcome? {
        guard let recorded else {
            if written != nil { throw StoreError.clientIdConflict }
            return nil
        }
        guard let written, written.entry?.type == .created else { throw StoreError.clientIdConflict }
        return GroupOutcome(conversationId: recorded.conversation, entry: written, invited: recorded.invited, duplicate: true, deliveries: [])
    }

    /// For a change of an existing group.
    public static func change(_ change: MembershipChange, recorded: RecordedGroupAction?, written: Message?) throws -> GroupOutcome? {
        if let recorded {
            guard recorded.conversation == change.conversation, case .add = change.action, written?.entry?.type != .created else {
                throw StoreError.clientIdConflict
            }
            return GroupOutcome(conversationId: change.conversation, entry: written, invited: recorded.invited, duplicate: true, deliveries: [])
        }
        guard let written else { return nil }
        guard written.conversationId == change.conversation, let entry = written.entry, change.action.wrote(entry) else {
            throw StoreError.clientIdConflict
        }
        return GroupOutcome(conversationId: change.conversation, entry: written, invited: [], duplicate: true, deliveries: [])
    }
}

extension MembershipChange.Action {
    /// Whether `entry` is what this action writes (rule 2). An add is recorded, so an entry alone is
    /// never one.
    func wrote(_ entry: GroupEntry) -> Bool {
        switch self {
        case .add: false
        case .remove(let user): entry.type == .removed && entry.userIds == [user]
        case .leave: entry.type == .left
        case .rename: entry.type == .renamed
        case .setRole(let user, let role): entry.type == .role && entry.userIds == [user] && entry.role == role
        case .accept: entry.type == .joined
        }
    }
}

extension GroupPlan {
    /// What a create makes of the people it names (rule 3): contacts join, anyone else is invited;
    /// the creator and everyone named must fit in `maxMembers`.
    public static func create(_ group: NewGroup, known: Set<UserID>, contacts: Set<UserID>) throws -> (joining: [UserID], inviting: [UserID]) {
        try checkNewMembers(group.memberIds, actor: group.creator, known: known)
        guard group.memberIds.count + 1 <= group.maxMembers else { throw StoreError.groupFull(limit: group.maxMembers) }
        return (group.memberIds.filter(contacts.contains), group.memberIds.filter { !contacts.contains($0) })
    }
}
