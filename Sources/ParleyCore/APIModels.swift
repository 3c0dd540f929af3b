/// Request and response bodies of the REST API (see `openapi.yaml`).
public enum API {
    public struct RegisterRequest: Codable, Sendable {
        public var username: String
        public var displayName: String
        public var password: String
        public init(username: String, displayName: String, password: String) {
            self.username = username
            self.displayName = displayName
            self.password = password
        }
    }

    public struct LoginRequest: Codable, Sendable {
        public var username: String
        public var password: String
        public init(username: String, password: String) {
            self.username = username
            self.password = password
        }
    }

    /// `POST /v1/auth/password`: the current password proves it is the owner; every other session ends.
    public struct ChangePasswordRequest: Codable, Sendable {
        public var currentPassword: String
        public var newPassword: String
        public init(currentPassword: String, newPassword: String) {
            self.currentPassword = currentPassword
            self.newPassword = newPassword
        }
    }

    /// A new session: the bearer token is shown once and stored only as a hash on the server.
    public struct SessionResponse: Codable, Sendable {
        public var user: User
        public var token: String
        public var expiresAt: Timestamp
        public init(user: User, token: String, expiresAt: Timestamp) {
            self.user = user
            self.token = token
            self.expiresAt = expiresAt
        }
    }

    public struct UserList: Codable, Sendable {
        public var users: [User]
        public init(users: [User]) { self.users = users }
    }

    public struct CreateConversationRequest: Codable, Sendable {
        public var userId: UserID
        public init(userId: UserID) { self.userId = userId }
    }

    public struct ConversationList: Codable, Sendable {
        public var conversations: [ConversationSummary]
        /// Pass as `before` to get the next (older) page; absent on the last page.
        public var nextCursor: String?
        public init(conversations: [ConversationSummary], nextCursor: String?) {
            self.conversations = conversations
            self.nextCursor = nextCursor
        }
    }

    public typealias MessagePage = ParleyCore.MessagePage

    public struct SendResponse: Codable, Sendable {
        public var message: Message
        public var duplicate: Bool
        public init(message: Message, duplicate: Bool) {
            self.message = message
            self.duplicate = duplicate
        }
    }

    public struct ReceiptRequest: Codable, Sendable {
        public var deliveredSeq: Int64?
        public var readSeq: Int64?
        public init(deliveredSeq: Int64? = nil, readSeq: Int64? = nil) {
            self.deliveredSeq = deliveredSeq
            self.readSeq = readSeq
        }
    }
}

/// A page of a conversation's history, ascending by seq.
public struct MessagePage: Codable, Sendable, Equatable {
    public var messages: [Message]
    /// Whether more messages exist beyond this page in the direction asked.
    public var hasMore: Bool
    public init(messages: [Message], hasMore: Bool) {
        self.messages = messages
        self.hasMore = hasMore
    }
}
