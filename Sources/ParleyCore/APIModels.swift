/// Request and response bodies of the REST API (see `openapi.yaml`).
public enum API {
    /// `POST /v1/auth/register`: creates an account and signs it in.
    public struct RegisterRequest: Codable, Sendable {
        /// 3–32 characters of `a–z`, `0–9`, `_` and `.` (``Validation/username(_:)``).
        public var username: String
        /// The name others see, 1–64 characters.
        public var displayName: String
        /// 8–128 characters, no control characters.
        public var password: String
        /// Creates the request body.
        public init(username: String, displayName: String, password: String) {
            self.username = username
            self.displayName = displayName
            self.password = password
        }
    }

    /// `POST /v1/auth/login`: a new session for an existing account.
    public struct LoginRequest: Codable, Sendable {
        /// 3–32 characters of `a–z`, `0–9`, `_` and `.` (``Validation/username(_:)``).
        public var username: String
        /// 8–128 characters, no control characters.
        public var password: String
        /// Creates the request body.
        public init(username: String, password: String) {
            self.username = username
            self.password = password
        }
    }

    /// `PATCH /v1/me`: my display name from now on (same rules as at registration).
    public struct ProfileRequest: Codable, Sendable, Equatable {
        public var displayName: String
        /// Creates the request body.
        public init(displayName: String) { self.displayName = displayName }
    }

    /// `POST /v1/auth/password`: the current password proves it is the owner; every other session ends.
    public struct ChangePasswordRequest: Codable, Sendable {
        /// The password in use now.
        public var currentPassword: String
        /// The password from now on (same rules as at registration).
        public var newPassword: String
        /// Creates the request body.
        public init(currentPassword: String, newPassword: String) {
            self.currentPassword = currentPassword
            self.newPassword = newPassword
        }
    }

    /// A new session: the bearer token is shown once and stored only as a hash on the server.
    public struct SessionResponse: Codable, Sendable {
        /// The signed-in user.
        public var user: User
        /// The bearer token for `Authorization: Bearer …` and the WebSocket `hello`.
        public var token: String
        /// When the session ends unless the user signs in again.
        public var expiresAt: Timestamp
        /// Creates the response body.
        public init(user: User, token: String, expiresAt: Timestamp) {
            self.user = user
            self.token = token
            self.expiresAt = expiresAt
        }
    }

    /// `GET /v1/users?q=…`: users found by a search.
    public struct UserList: Codable, Sendable {
        /// The matches, by username.
        public var users: [User]
        /// Creates the response body.
        public init(users: [User]) { self.users = users }
    }

    /// `POST /v1/conversations`: find or create the direct conversation with a user.
    public struct CreateConversationRequest: Codable, Sendable {
        /// The other member.
        public var userId: UserID
        /// Creates the request body.
        public init(userId: UserID) { self.userId = userId }
    }

    /// `GET /v1/conversations`: a page of the user's conversations, most recent activity first.
    public struct ConversationList: Codable, Sendable {
        /// This page's conversations.
        public var conversations: [ConversationSummary]
        /// Pass as `before` to get the next (older) page; absent on the last page.
        public var nextCursor: String?
        /// Creates the response body.
        public init(conversations: [ConversationSummary], nextCursor: String?) {
            self.conversations = conversations
            self.nextCursor = nextCursor
        }
    }

    /// `GET /v1/conversations/{id}/messages`: a page of history (see ``ParleyCore/MessagePage``).
    public typealias MessagePage = ParleyCore.MessagePage

    /// `POST /v1/messages`: the stored message (201), or the original one for a retry (200).
    public struct SendResponse: Codable, Sendable {
        /// The message as stored, with its seq.
        public var message: Message
        /// True when this client id was stored before: nothing new was written.
        public var duplicate: Bool
        /// Creates the response body.
        public init(message: Message, duplicate: Bool) {
            self.message = message
            self.duplicate = duplicate
        }
    }

    /// `POST /v1/conversations/{id}/receipts`: moves the caller's cursors forward.
    public struct ReceiptRequest: Codable, Sendable {
        /// Everything up to this seq reached the user's device.
        public var deliveredSeq: Int64?
        /// Everything up to this seq was seen (implies delivered).
        public var readSeq: Int64?
        /// Creates the request body; give at least one cursor.
        public init(deliveredSeq: Int64? = nil, readSeq: Int64? = nil) {
            self.deliveredSeq = deliveredSeq
            self.readSeq = readSeq
        }
    }
}

/// A page of a conversation's history, ascending by seq.
public struct MessagePage: Codable, Sendable, Equatable {
    /// The page's messages, ascending by seq.
    public var messages: [Message]
    /// Whether more messages exist beyond this page in the direction asked.
    public var hasMore: Bool
    /// Creates a page.
    public init(messages: [Message], hasMore: Bool) {
        self.messages = messages
        self.hasMore = hasMore
    }
}
