import Foundation
import ParleyCore

/// The group routes (docs/protocol.md "Groups").
extension HTTPParleyAPI {
    /// Creates a group; a repeated `clientId` answers the original group (`duplicate: true`).
    public func createGroup(_ request: API.CreateGroupRequest, token: String) async throws -> API.GroupActionResponse {
        try await call(.POST, "/v1/groups", token: token, body: request)
    }

    /// Adds contacts to a group and invites anyone else (admins and the owner).
    public func addMembers(to id: ConversationID, _ request: API.AddMembersRequest, token: String) async throws -> API.GroupActionResponse {
        try await call(.POST, "/v1/conversations/\(id)/members", token: token, body: request)
    }

    /// Removes a member (admins and the owner; nobody removes the owner).
    public func removeMember(_ user: UserID, from id: ConversationID, clientId: ClientMessageID, token: String) async throws -> API.GroupActionResponse {
        try await call(.POST, "/v1/conversations/\(id)/members/\(user)/remove", token: token, body: API.GroupActionRequest(clientId: clientId))
    }

    /// Makes a member an admin or dismisses them as admin (the owner).
    public func setRole(of user: UserID, in id: ConversationID, _ request: API.ChangeRoleRequest, token: String) async throws -> API.GroupActionResponse {
        try await call(.POST, "/v1/conversations/\(id)/members/\(user)/role", token: token, body: request)
    }

    /// Leaves a group.
    public func leave(_ id: ConversationID, clientId: ClientMessageID, token: String) async throws -> API.GroupActionResponse {
        try await call(.POST, "/v1/conversations/\(id)/leave", token: token, body: API.GroupActionRequest(clientId: clientId))
    }

    /// Renames a group (admins and the owner).
    public func rename(_ id: ConversationID, _ request: API.RenameGroupRequest, token: String) async throws -> API.GroupActionResponse {
        try await call(.POST, "/v1/conversations/\(id)/title", token: token, body: request)
    }

    /// My pending invitations, newest first.
    public func invitations(token: String) async throws -> [Invitation] {
        let list: API.InvitationList = try await call(.GET, "/v1/invitations", token: token)
        return list.invitations
    }

    /// Accepts an invitation: I join the group.
    public func acceptInvitation(_ id: ConversationID, clientId: ClientMessageID, token: String) async throws -> API.GroupActionResponse {
        try await call(.POST, "/v1/invitations/\(id)/accept", token: token, body: API.GroupActionRequest(clientId: clientId))
    }

    /// Declines an invitation (the group learns nothing).
    public func declineInvitation(_ id: ConversationID, token: String) async throws {
        _ = try await raw(.POST, "/v1/invitations/\(id)/decline", token: token)
    }

    /// Who has received and read one of my messages in a group.
    public func messageInfo(_ id: ConversationID, seq: Int64, token: String) async throws -> MessageInfo {
        try await call(.GET, "/v1/conversations/\(id)/messages/\(seq)/info", token: token)
    }
}
