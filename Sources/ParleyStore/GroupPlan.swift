import ParleyCore

/// The decision of a group action, made the same way by every backend from what it read
/// (``GroupState``); the backend then writes exactly this. Rules:
/// 1. Only members act; a group nobody is in (closed) or one the actor is not in is "not found".
/// 2. Admins and the owner add, remove and rename; only the owner makes or unmakes admins;
///    nobody removes the owner, nor changes their role.
/// 3. Adds name existing people who are not members yet, each once, never the actor; the group,
///    counting pending invitations and the people named, may not pass `maxMembers`. A contact of the actor (both wrote in their direct conversation)
///    is added; anyone else is invited (an invitation pending already stays as it is).
/// 4. When the owner leaves, the longest-standing admin, else the longest-standing member,
///    becomes owner; when the last member leaves, the group closes.
/// 5. Nothing is written when a rule refuses: the plan is made before any write.
/// 6. A rename to the current title, or a role someone has already, changes nothing and writes no entry.
/// 7. An invitation lasts while its inviter may add people: it lapses when they are made a plain
///    member, removed or leave. An admin "removing" someone invited withdraws their invitation
///    (no entry: the members never saw it).
public struct GroupPlan: Sendable, Equatable {
    /// The entry to append, if any.
    public var entry: GroupEntry?
    /// People who become members (role `member`).
    public var joining: [UserID] = []
    /// People who get an invitation.
    public var inviting: [UserID] = []
    /// The member who is out after this (removed or left).
    public var departing: UserID?
    /// Role changes, the successor of a departing owner included.
    public var roles: [UserID: MemberRole] = [:]
    /// The new title.
    public var title: String?
    /// The group has no member left.
    public var closes = false
    /// Rule 7: the person whose pending invitation is withdrawn.
    public var withdrawing: UserID?
    /// Rule 7: the person whose invitations lapse (they may no longer add people).
    public var lapsing: UserID?

    public init(entry: GroupEntry?) { self.entry = entry }

    /// Decides `action` by `actor` on a group in `state`. `known` are the named users that exist;
    /// `contacts` those of them who are the actor's contacts.
    public static func decide(
        _ action: MembershipChange.Action, by actor: UserID, in state: GroupState?, known: Set<UserID>, contacts: Set<UserID>, maxMembers: Int
    ) throws -> GroupPlan {
        guard let state, !state.closed, let me = state.member(actor) else { throw StoreError.conversationNotFound }
        let isAdmin = me.role != .member
        switch action {
        case .add(let users, let share):
            guard isAdmin else { throw StoreError.forbidden("Only admins can add members.") }
            try checkNewMembers(users, actor: actor, known: known)
            if let present = users.first(where: { state.member($0) != nil }) {
                throw StoreError.invalidMembers("\(present.rawValue) is already a member.")
            }
            let joining = users.filter(contacts.contains)
            // Invitees count too, pending ones included: each may accept.
            guard state.members.count + state.pendingInvitations + users.count <= maxMembers else { throw StoreError.groupFull(limit: maxMembers) }
            var plan = GroupPlan(entry: joining.isEmpty ? nil : GroupEntry(type: .added, userIds: joining, shareHistory: share ? true : nil))
            plan.joining = joining
            plan.inviting = users.filter { !contacts.contains($0) }
            return plan
        case .remove(let user):
            guard isAdmin else { throw StoreError.forbidden("Only admins can remove members.") }
            guard user != actor else { throw StoreError.invalidMembers("Leave the group instead of removing yourself.") }
            guard let target = state.member(user) else {
                guard state.invitees.contains(user) else { throw StoreError.memberNotFound }
                var plan = GroupPlan(entry: nil)
                plan.withdrawing = user
                return plan
            }
            guard target.role != .owner else { throw StoreError.forbidden("Nobody can remove the group's owner.") }
            var plan = GroupPlan(entry: GroupEntry(type: .removed, userIds: [user]))
            plan.departing = user
            plan.lapsing = user
            return plan
        case .leave:
            let rest = state.members.filter { $0.userId != actor }
            var entry = GroupEntry(type: .left)
            var plan = GroupPlan(entry: nil)
            if me.role == .owner, let successor = successor(among: rest) {
                entry.userIds = [successor]
                entry.role = .owner
                plan.roles[successor] = .owner
            }
            plan.entry = entry
            plan.departing = actor
            plan.lapsing = actor
            plan.closes = rest.isEmpty
            return plan
        case .rename(let title):
            guard isAdmin else { throw StoreError.forbidden("Only admins can rename the group.") }
            guard title != state.title else { return GroupPlan(entry: nil) }  // nothing changes: no line "renamed to" the same
            var plan = GroupPlan(entry: GroupEntry(type: .renamed, title: title))
            plan.title = title
            return plan
        case .setRole(let user, let role):
            guard me.role == .owner else { throw StoreError.forbidden("Only the owner can make or dismiss admins.") }
            guard role != .owner else { throw StoreError.invalidRole }
            guard user != actor else { throw StoreError.forbidden("The owner's role cannot change.") }
            guard let member = state.member(user) else { throw StoreError.memberNotFound }
            guard member.role != role else { return GroupPlan(entry: nil) }  // already so: nothing to write
            var plan = GroupPlan(entry: GroupEntry(type: .role, userIds: [user], role: role))
            plan.roles[user] = role
            if role == .member { plan.lapsing = user }
            return plan
        case .accept:
            throw StoreError.invitationNotFound
        }
    }

    /// Rule 3's checks on the people named by a create or an add.
    public static func checkNewMembers(_ users: [UserID], actor: UserID, known: Set<UserID>) throws {
        guard !users.isEmpty else { throw StoreError.invalidMembers("Name at least one person.") }
        guard !users.contains(actor) else { throw StoreError.invalidMembers("You are in the group already.") }
        guard Set(users).count == users.count else { throw StoreError.invalidMembers("A person is named twice.") }
        // Unknown people are "no such user", as everywhere else in the API.
        guard users.allSatisfy(known.contains) else { throw StoreError.userNotFound }
    }

    /// Rule 4: the longest-standing admin, else the longest-standing member (ties by id).
    static func successor(among members: [GroupMemberState]) -> UserID? {
        let order: (GroupMemberState, GroupMemberState) -> Bool = { ($0.joinedAt, $0.userId.rawValue) < ($1.joinedAt, $1.userId.rawValue) }
        return (members.filter { $0.role == .admin }.min(by: order) ?? members.min(by: order))?.userId
    }
}
