extension API {
    /// `POST /v1/groups`: create a group, idempotent by `clientId`.
    public struct CreateGroupRequest: Codable, Sendable {
        /// The action's idempotency key.
        public var clientId: ClientMessageID
        /// The title (trimmed, 1–100 characters).
        public var title: String
        /// The other people to put in it (contacts are added, anyone else invited).
        public var memberIds: [UserID]
        /// Show those added the whole history (moot for a new group; kept for symmetry with adds).
        public var shareHistory: Bool?
        /// Creates the request body.
        public init(clientId: ClientMessageID, title: String, memberIds: [UserID], shareHistory: Bool? = nil) {
            self.clientId = clientId
            self.title = title
            self.memberIds = memberIds
            self.shareHistory = shareHistory
        }
    }

    /// `POST /v1/conversations/{id}/members`: add members (admins and the owner).
    public struct AddMembersRequest: Codable, Sendable {
        /// The action's idempotency key.
        public var clientId: ClientMessageID
        /// Whom to add (contacts) or invite (anyone else).
        public var userIds: [UserID]
        /// Let them see the history from seq 1 rather than from their joining.
        public var shareHistory: Bool?
        /// Creates the request body.
        public init(clientId: ClientMessageID, userIds: [UserID], shareHistory: Bool? = nil) {
            self.clientId = clientId
            self.userIds = userIds
            self.shareHistory = shareHistory
        }
    }

    /// A membership action that needs nothing but its idempotency key (remove, leave, accept).
    public struct GroupActionRequest: Codable, Sendable {
        /// The action's idempotency key.
        public var clientId: ClientMessageID
        /// Creates the request body.
        public init(clientId: ClientMessageID) { self.clientId = clientId }
    }

    /// `POST /v1/conversations/{id}/title`: rename (admins and the owner).
    public struct RenameGroupRequest: Codable, Sendable {
        /// The action's idempotency key.
        public var clientId: ClientMessageID
        /// The new title.
        public var title: String
        /// Creates the request body.
        public init(clientId: ClientMessageID, title: String) {
            self.clientId = clientId
            self.title = title
        }
    }

    /// `POST /v1/conversations/{id}/members/{userId}/role`: make or unmake an admin (the owner).
    public struct ChangeRoleRequest: Codable, Sendable {
        /// The action's idempotency key.
        public var clientId: ClientMessageID
        /// `admin` or `member`.
        public var role: MemberRole
        /// Creates the request body.
        public init(clientId: ClientMessageID, role: MemberRole) {
            self.clientId = clientId
            self.role = role
        }
    }

    /// The answer to a membership action: the entry it made (the original one for a retry).
    public struct GroupActionResponse: Codable, Sendable {
        /// The group as the caller sees it now (create and accept).
        public var conversation: ConversationSummary?
        /// The membership entry; absent for an add that only invited.
        public var entry: Message?
        /// Who was invited rather than added (create and add).
        public var invited: [UserID]?
        /// True when this client id was used before: nothing changed.
        public var duplicate: Bool
        /// Creates the response body.
        public init(conversation: ConversationSummary? = nil, entry: Message?, invited: [UserID]? = nil, duplicate: Bool) {
            self.conversation = conversation
            self.entry = entry
            self.invited = invited
            self.duplicate = duplicate
        }
    }

    /// `GET /v1/invitations`: my pending invitations, newest first.
    public struct InvitationList: Codable, Sendable {
        /// The invitations.
        public var invitations: [Invitation]
        /// Creates the response body.
        public init(invitations: [Invitation]) { self.invitations = invitations }
    }
}

extension API.CreateGroupRequest: DeclaredFields {
    public static let declaredFields: Set<String> = ["clientId", "title", "memberIds", "shareHistory"]
}
extension API.AddMembersRequest: DeclaredFields { public static let declaredFields: Set<String> = ["clientId", "userIds", "shareHistory"] }
extension API.GroupActionRequest: DeclaredFields { public static let declaredFields: Set<String> = ["clientId"] }
extension API.RenameGroupRequest: DeclaredFields { public static let declaredFields: Set<String> = ["clientId", "title"] }
extension API.ChangeRoleRequest: DeclaredFields { public static let declaredFields: Set<String> = ["clientId", "role"] }
