import Foundation
import ParleySDK
import ParleyCore

/// Groups in the list: the invitations section (accept or decline) and creating a group.
extension ConversationListViewModel {
    /// An invitation as the list's invitations section shows it.
    public struct InvitationRow: Identifiable, Equatable, Sendable {
        /// The group.
        public var id: ConversationID
        /// The group's title.
        public var title: String
        /// Initials for the avatar.
        public var initials: String
        /// "Ada Lovelace invited you · 3 members".
        public var detail: String
        /// When I was invited, as a smart timestamp.
        public var timestamp: String
    }

    /// Pending invitations, newest first.
    public var invitations: [InvitationRow] {
        let now = now()
        return client.invitations.map { invitation in
            let members = invitation.memberCount == 1 ? "1 member" : "\(invitation.memberCount) members"
            return InvitationRow(
                id: invitation.conversationId, title: invitation.title, initials: invitation.title.initials,
                // An invitation may come from a stranger with anyone's name: the username says who.
                detail: "\(invitation.inviter.displayName) (@\(invitation.inviter.username)) invited you · \(members)",
                timestamp: formatter.listTimestamp(invitation.createdAt.date, now: now))
        }
    }

    /// Joins the group; its chat, or `nil` with ``actionError`` set.
    public func accept(_ invitation: InvitationRow) async -> ChatViewModel? {
        do {
            try await client.accept(invitation.id)
            actionError = nil
            return ChatViewModel(client: client, conversation: invitation.id, otherUser: nil, formatter: formatter, now: now)
        } catch {
            actionError = Self.message(error)
            return nil
        }
    }

    /// Declines the invitation (the group is not told).
    public func decline(_ invitation: InvitationRow) async {
        do {
            try await client.decline(invitation.id)
            actionError = nil
        } catch {
            actionError = Self.message(error)
        }
    }

    /// Creates a group with `members` (contacts join, anyone else is invited); its chat, or `nil`
    /// with ``actionError`` set. Offline it fails at once: nothing is created until the server says so.
    public func createGroup(title: String, members: [User]) async -> ChatViewModel? {
        do {
            let created = try await client.createGroup(title: title, members: members.map(\.id))
            actionError = nil
            return ChatViewModel(client: client, conversation: created.conversation.id, otherUser: nil, formatter: formatter, now: now)
        } catch {
            actionError = Self.message(error)
            return nil
        }
    }

    static func message(_ error: any Error) -> String {
        if let failure = error as? Validation.Failure { return failure.message }
        return (error as? ParleyClientError)?.message ?? "Something went wrong."
    }
}
