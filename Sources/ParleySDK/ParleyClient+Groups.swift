import Foundation
import ParleyCore

/// A group just created: the group as I see it, and who was invited rather than added.
public struct CreatedGroup: Sendable, Equatable {
    /// The group (I am its owner).
    public var conversation: ConversationSummary
    /// People who are not my contacts: they got an invitation and join when they accept.
    public var invited: [UserID]
}

/// Group actions (docs/protocol.md "Groups").
///
/// Rules:
/// 1. Every action carries a `clientId` from the ``GroupActionLedger``: tried again after a network
///    failure, by the client itself (twice, 0.5 s and 1 s later) or by the user (the same action
///    again, even after a restart), it reuses that id, so the server applies it once.
/// 2. Actions need the server: offline they fail at once with the transport's error ("Cannot
///    reach the server."), as WhatsApp says "couldn't create group, check your connection", instead
///    of waiting in a queue; nothing is shown as done that is not. Only messages wait in the outbox.
/// 3. What an action answers (the group, its entry) is applied at once, as the stream would apply
///    it; the stream's copy later changes nothing (stored once by seq).
extension ParleyClient {
    /// Creates a group with me as owner. My contacts (people I have exchanged messages with) are
    /// added; anyone else is invited (``CreatedGroup/invited``).
    /// - Throws: `Validation.Failure` for a bad title; ``ParleyClientError`` otherwise
    ///   (`invalid_members`, `user_not_found`, `group_full`, `rate_limited`, or no answer).
    @discardableResult
    public func createGroup(title: String, members: [UserID]) async throws -> CreatedGroup {
        let title = try Validation.groupTitle(title).get()
        let others = Array(Set(members).subtracting([me.id])).sorted { $0.rawValue < $1.rawValue }
        let key = GroupActionLedger.key("create", [title], set: others.map(\.rawValue))
        let answer = try await perform(key) { clientId, token in
            try await self.api.createGroup(API.CreateGroupRequest(clientId: clientId, title: title, memberIds: others), token: token)
        }
        guard let conversation = answer.conversation else {
            throw ParleyClientError(status: 200, code: nil, message: "The server did not return the group.")
        }
        return CreatedGroup(conversation: self.conversations[conversation.id] ?? conversation, invited: answer.invited ?? [])
    }

    /// Adds people to a group (admins and the owner): contacts join, anyone else is invited.
    /// Returns who was invited. `shareHistory` lets them read the group from its start.
    @discardableResult
    public func addMembers(_ users: [UserID], to id: ConversationID, shareHistory: Bool = false) async throws -> [UserID] {
        let users = Array(Set(users)).sorted { $0.rawValue < $1.rawValue }
        let key = GroupActionLedger.key("add", [id.rawValue, String(shareHistory)], set: users.map(\.rawValue))
        let answer = try await perform(key) { clientId, token in
            try await self.api.addMembers(to: id, API.AddMembersRequest(clientId: clientId, userIds: users, shareHistory: shareHistory), token: token)
        }
        return answer.invited ?? []
    }

    /// Removes a member (admins and the owner; nobody removes the owner).
    public func removeMember(_ user: UserID, from id: ConversationID) async throws {
        try await perform(GroupActionLedger.key("remove", [id.rawValue, user.rawValue])) { clientId, token in
            try await self.api.removeMember(user, from: id, clientId: clientId, token: token)
        }
    }

    /// Makes a member an admin (`.admin`) or dismisses them as admin (`.member`); the owner only.
    public func setRole(_ role: MemberRole, for user: UserID, in id: ConversationID) async throws {
        try await perform(GroupActionLedger.key("role", [id.rawValue, user.rawValue, role.rawValue])) { clientId, token in
            try await self.api.setRole(of: user, in: id, API.ChangeRoleRequest(clientId: clientId, role: role), token: token)
        }
    }

    /// Leaves a group: it stays in the list with what I could see, and nothing newer arrives.
    public func leave(_ id: ConversationID) async throws {
        try await perform(GroupActionLedger.key("leave", [id.rawValue])) { clientId, token in
            try await self.api.leave(id, clientId: clientId, token: token)
        }
    }

    /// Renames a group (admins and the owner).
    public func rename(_ id: ConversationID, to title: String) async throws {
        let title = try Validation.groupTitle(title).get()
        try await perform(GroupActionLedger.key("rename", [id.rawValue, title])) { clientId, token in
            try await self.api.rename(id, API.RenameGroupRequest(clientId: clientId, title: title), token: token)
        }
    }

    /// Joins the group of an invitation; returns it as I see it now.
    @discardableResult
    public func accept(_ invitation: ConversationID) async throws -> ConversationSummary? {
        let answer: API.GroupActionResponse
        do {
            answer = try await perform(GroupActionLedger.key("accept", [invitation.rawValue])) { clientId, token in
                try await self.api.acceptInvitation(invitation, clientId: clientId, token: token)
            }
        } catch let error as ParleyClientError where error.code == .invitationNotFound {
            // Withdrawn, lapsed, its group closed, or answered on another device: it goes from the
            // list (no event says so), and the error still tells the user why nothing opened.
            removeInvitation(invitation)
            throw error
        }
        removeInvitation(invitation)
        return conversations[invitation] ?? answer.conversation
    }

    /// Declines an invitation (the group learns nothing). One already gone counts as declined.
    public func decline(_ invitation: ConversationID) async throws {
        do {
            try await api.declineInvitation(invitation, token: session.token)
        } catch let error as ParleyClientError where error.code == .invitationNotFound {
            // Accepted or declined on another device, or withdrawn: nothing left to decline.
        }
        removeInvitation(invitation)
    }

    /// Who has received and read one of my messages in a group (members of that moment still in it).
    public func messageInfo(conversation: ConversationID, seq: Int64) async throws -> MessageInfo {
        try await api.messageInfo(conversation, seq: seq, token: session.token)
    }

    /// Rules 1 and 3 for one action.
    @discardableResult
    func perform(
        _ key: String, _ request: @escaping (ClientMessageID, String) async throws -> API.GroupActionResponse
    ) async throws -> API.GroupActionResponse {
        let clientId = groupActions.clientId(for: key)
        try? store.save(groupActions: groupActions)
        var attempt = 0
        while true {
            do {
                let answer = try await request(clientId, session.token)
                forgetAction(key)
                if let conversation = answer.conversation { adopt(conversation) }
                if let entry = answer.entry { await apply(.message(entry)) }
                return answer
            } catch let error as ParleyClientError where error.isUncertain {
                guard attempt < Self.actionRetries.count else { throw error }  // the key stays for the next try
                try await Task.sleep(for: Self.actionRetries[attempt])
                attempt += 1
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                forgetAction(key)
                throw error
            }
        }
    }

    private func forgetAction(_ key: String) {
        groupActions.answered(key)
        try? store.save(groupActions: groupActions)
    }

    /// Why a group I am no longer a member of takes no messages.
    public static let notAMember = "You can't send messages to this group because you're no longer a member."

    static let actionRetries: [Duration] = [.milliseconds(500), .seconds(1)]
}
