import Foundation
import ParleySDK
import ParleyCore

/// What a group chat adds: sender names, its members with their roles, what I may do to them, and
/// the chat's end for me once I am out.
///
/// Rules (docs/protocol.md "Groups"):
/// 1. Admins and the owner add and remove members and rename; only the owner makes or dismisses
///    admins; nobody removes the owner. The actions a screen offers follow ``canManageMembers``,
///    ``canChangeRoles`` and ``canRemove(_:)``; the server checks the same.
/// 2. Once I am out (`leftSeq` set) nothing can be sent and no action is offered: the history up to
///    my departure stays readable.
extension ChatViewModel {
    /// One member as a group's member list shows it.
    public struct MemberRow: Identifiable, Equatable, Sendable {
        /// The member.
        public var id: UserID
        /// Their display name ("You" for me).
        public var name: String
        /// Their username.
        public var username: String
        /// Their role.
        public var role: MemberRole
        /// "Owner", "Admin", or `nil` for a member.
        public var roleLabel: String? { GroupText.roleLabel(role) }
        /// Whether this is me.
        public var isMe: Bool
        /// Their profile photo, to show over the initials (loads without a token); `nil` when they
        /// have none. It follows their changes live.
        public var photoURL: URL?
    }

    /// Whether this is a group.
    public var isGroup: Bool { client.conversations[conversation]?.kind == .group || conversation.isGroup }

    /// Why nothing can be sent, once I am no longer a member of the group; `nil` while I can write.
    public var cannotSendReason: String? {
        client.conversations[conversation]?.leftSeq == nil ? nil : ParleyClient.notAMember
    }

    /// A person's display name in this chat ("You" for me; ``GroupText/someone`` while unknown),
    /// with their username when another member's name reads alike
    /// (``ParleyClient/distinguishableName(of:in:marks:)``; `marks` worked out once for many names).
    func name(of user: UserID, marks: LookAlikeMarks? = nil) -> String {
        user == client.me.id ? "You" : (client.distinguishableName(of: user, in: conversation, marks: marks) ?? GroupText.someone)
    }

    /// The members: the owner, then admins, then everyone else, by name (empty once I am out).
    public var members: [MemberRow] {
        let rank: [MemberRole: Int] = [.owner: 0, .admin: 1, .member: 2]
        return (client.conversations[conversation]?.members ?? []).map { member in
            MemberRow(
                id: member.userId, name: member.userId == client.me.id ? "You" : member.displayName, username: member.username,
                role: member.role ?? .member, isMe: member.userId == client.me.id, photoURL: client.photoURL(member.photo))
        }.sorted { (rank[$0.role] ?? 2, $0.isMe ? 1 : 0, $0.name) < (rank[$1.role] ?? 2, $1.isMe ? 1 : 0, $1.name) }
    }

    /// Reads the group again, for a member list that is surely current (it also follows the stream).
    public func refreshMembers() async {
        guard isGroup else { return }
        _ = await run { try await self.client.refresh(self.conversation) }
    }

    /// "Ada, Grace, You" under the title of a group (or why I am out).
    public var membersText: String {
        guard cannotSendReason == nil else { return "You're no longer a member" }
        let marks = client.nameMarks(in: conversation)  // look-alike names with their usernames, as the chat shows them
        let names = members.filter { !$0.isMe }.map { name(of: $0.id, marks: marks) } + (members.contains { $0.isMe } ? ["You"] : [])
        return names.joined(separator: ", ")
    }

    /// My role here (`nil` in a direct conversation or once I am out).
    public var myRole: MemberRole? { client.myRole(in: conversation) }
    /// Rule 1: add, remove, rename.
    public var canManageMembers: Bool { myRole == .owner || myRole == .admin }
    /// Rule 1: make and dismiss admins.
    public var canChangeRoles: Bool { myRole == .owner }
    /// Rule 1: whether I may remove this member.
    public func canRemove(_ member: MemberRow) -> Bool { canManageMembers && !member.isMe && member.role != .owner }
    /// Whether I may leave (a member I still am).
    public var canLeave: Bool { isGroup && cannotSendReason == nil }

    /// Adds people: contacts join, anyone else is invited. Returns those invited (empty when all
    /// joined), or `nil` when it failed (``errorMessage`` says why).
    @discardableResult
    public func addMembers(_ users: [User]) async -> [User]? {
        guard canManageMembers else {
            _ = refuse("Only admins can add members.")
            return nil
        }
        var invited: [UserID] = []
        guard await run({ invited = try await self.client.addMembers(users.map(\.id), to: self.conversation) }) else { return nil }
        return users.filter { invited.contains($0.id) }
    }

    /// Removes a member.
    @discardableResult
    public func remove(_ member: MemberRow) async -> Bool {
        guard canRemove(member) else { return refuse("Only admins can remove members, and nobody removes the owner.") }
        return await run { try await self.client.removeMember(member.id, from: self.conversation) }
    }

    /// Makes a member an admin (the owner only).
    @discardableResult
    public func makeAdmin(_ member: MemberRow) async -> Bool {
        guard canChangeRoles, member.role == .member else { return refuse("Only the owner can make admins.") }
        return await run { try await self.client.setRole(.admin, for: member.id, in: self.conversation) }
    }

    /// Dismisses an admin (the owner only).
    @discardableResult
    public func dismissAdmin(_ member: MemberRow) async -> Bool {
        guard canChangeRoles, member.role == .admin else { return refuse("Only the owner can dismiss admins.") }
        return await run { try await self.client.setRole(.member, for: member.id, in: self.conversation) }
    }

    /// Renames the group.
    @discardableResult
    public func rename(to title: String) async -> Bool {
        guard canManageMembers else { return refuse("Only admins can rename the group.") }
        return await run { try await self.client.rename(self.conversation, to: title) }
    }

    /// Leaves the group (the chat stays, read-only).
    @discardableResult
    public func leave() async -> Bool {
        guard canLeave else { return refuse(ParleyClient.notAMember) }
        return await run { try await self.client.leave(self.conversation) }
    }

    /// Who has received and read one of my messages here.
    public func info(for item: TimelineItem) async -> MessageInfo? {
        guard isGroup, let seq = item.seq, item.senderId == client.me.id else { return nil }
        return try? await client.messageInfo(conversation: conversation, seq: seq)
    }

    private func refuse(_ reason: String) -> Bool {
        errorMessage = reason
        return false
    }

    func run(_ action: () async throws -> Void) async -> Bool {
        do {
            try await action()
            errorMessage = nil
            return true
        } catch let failure as Validation.Failure {
            errorMessage = failure.message
        } catch {
            errorMessage = (error as? ParleyClientError)?.message ?? "Something went wrong."
        }
        return false
    }
}
