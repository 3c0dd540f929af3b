import Foundation
import ParleyCore

/// The REST side of the server, as the client needs it. `HTTPParleyAPI` talks to a real server;
/// tests may use a fake.
public protocol ParleyAPI: Sendable {
    func register(username: String, displayName: String, password: String) async throws -> API.SessionResponse
    func login(username: String, password: String) async throws -> API.SessionResponse
    func logout(token: String) async throws
    func conversations(token: String) async throws -> [ConversationSummary]
    func conversation(_ id: ConversationID, token: String) async throws -> ConversationSummary
    /// A page of history, ascending; `before` pages backwards from a seq.
    func history(_ id: ConversationID, before: Int64?, limit: Int, token: String) async throws -> MessagePage
    func searchUsers(_ query: String, token: String) async throws -> [User]
    func user(_ id: UserID, token: String) async throws -> User
    /// Changes my display name (`PATCH /v1/me`); the user as now.
    func setDisplayName(_ displayName: String, token: String) async throws -> User

    // Groups (docs/protocol.md "Groups"): every action carries the caller's idempotency key.

    /// `POST /v1/groups`: creates a group (or answers the original for a repeated `clientId`).
    func createGroup(_ request: API.CreateGroupRequest, token: String) async throws -> API.GroupActionResponse
    /// `POST /v1/conversations/{id}/members`: adds contacts and invites anyone else.
    func addMembers(to id: ConversationID, _ request: API.AddMembersRequest, token: String) async throws -> API.GroupActionResponse
    /// `POST /v1/conversations/{id}/members/{memberId}/remove`.
    func removeMember(_ user: UserID, from id: ConversationID, clientId: ClientMessageID, token: String) async throws -> API.GroupActionResponse
    /// `POST /v1/conversations/{id}/members/{memberId}/role`.
    func setRole(of user: UserID, in id: ConversationID, _ request: API.ChangeRoleRequest, token: String) async throws -> API.GroupActionResponse
    /// `POST /v1/conversations/{id}/leave`.
    func leave(_ id: ConversationID, clientId: ClientMessageID, token: String) async throws -> API.GroupActionResponse
    /// `POST /v1/conversations/{id}/title`.
    func rename(_ id: ConversationID, _ request: API.RenameGroupRequest, token: String) async throws -> API.GroupActionResponse
    /// `GET /v1/invitations`: my pending invitations, newest first.
    func invitations(token: String) async throws -> [Invitation]
    /// `POST /v1/invitations/{id}/accept`: joins the group.
    func acceptInvitation(_ id: ConversationID, clientId: ClientMessageID, token: String) async throws -> API.GroupActionResponse
    /// `POST /v1/invitations/{id}/decline`.
    func declineInvitation(_ id: ConversationID, token: String) async throws
    /// `GET /v1/conversations/{id}/messages/{seq}/info`: who has one of my group messages.
    func messageInfo(_ id: ConversationID, seq: Int64, token: String) async throws -> MessageInfo

    // Message actions (docs/protocol.md "Message actions").

    /// `POST /v1/conversations/{id}/messages/{seq}/actions`: react, edit, delete or hide a message
    /// (a repeated `clientId` answers the message as it is now, `duplicate: true`).
    func act(on seq: Int64, in id: ConversationID, _ body: API.MessageActionBody, token: String) async throws -> API.MessageActionResponse
    /// `GET /v1/conversations/{id}/messages/{seq}/versions`: the earlier texts of an edited message, oldest first.
    func versions(of seq: Int64, in id: ConversationID, token: String) async throws -> [MessageVersion]

    // Search (docs/protocol.md "Search").

    /// `GET /v1/search`: a page of the messages I can read that match `query`; `cursor` is the
    /// previous page's `nextCursor`.
    func search(query: String, order: SearchOrder, limit: Int?, cursor: String?, token: String) async throws -> API.SearchResults

    // Notifications (docs/protocol.md "Notifications").

    /// `GET /v1/notifications`: my preview level and every conversation setting that is not the default.
    func notificationSettings(token: String) async throws -> NotificationSettings
    /// `PUT /v1/notifications`: what my notifications show.
    func setNotificationPreview(_ preview: NotificationPreview, token: String) async throws -> NotificationSettings
    /// `PUT /v1/conversations/{id}/notifications`: a conversation's level and mute.
    func changeNotifications(of id: ConversationID, _ change: ConversationNotificationChange, token: String) async throws -> ConversationNotificationSetting
    /// `PUT /v1/push/apns-tokens/{token}`: this device (hex token) gets pushes while the app is closed.
    func registerAPNsToken(_ deviceToken: String, environment: API.APNsTokenBody.Environment, token: String) async throws
    /// `DELETE /v1/push/apns-tokens/{token}`.
    func unregisterAPNsToken(_ deviceToken: String, token: String) async throws

    // Files (docs/protocol.md "Files").
    /// `POST /v1/uploads` (tus creation): an upload of `length` bytes, `sha256` (hex) promised;
    /// `original`: sent as it was, so a photo keeps its metadata (the server otherwise takes it out).
    func createUpload(length: Int64, name: String, sha256: String?, original: Bool, token: String) async throws -> API.Upload
    /// `GET /v1/uploads/{id}`: where the upload stands.
    func upload(_ id: UploadID, token: String) async throws -> API.Upload
    /// `PATCH /v1/uploads/{id}` (tus): `bytes` at `offset`, checksummed.
    func appendUpload(_ id: UploadID, offset: Int64, bytes: Data, token: String) async throws
    /// `DELETE /v1/uploads/{id}` (tus termination): gives up an upload no message carries.
    func deleteUpload(_ id: UploadID, token: String) async throws
    /// `POST /v1/files/links`: signed links to the attachments I can see.
    func fileLinks(_ ids: [UploadID], token: String) async throws -> [API.FileLink]
    /// `GET /v1/files/{id}/content` with `Range`: part of a file.
    func fileBytes(_ id: UploadID, offset: Int64, length: Int64, token: String) async throws -> Data
}

extension ParleyAPI {
    /// An API without files (test stand-ins) refuses them.
    public func createUpload(length: Int64, name: String, sha256: String?, original: Bool, token: String) async throws -> API.Upload {
        throw Self.noFiles
    }
    public func upload(_ id: UploadID, token: String) async throws -> API.Upload { throw Self.noFiles }
    public func appendUpload(_ id: UploadID, offset: Int64, bytes: Data, token: String) async throws { throw Self.noFiles }
    public func deleteUpload(_ id: UploadID, token: String) async throws { throw Self.noFiles }
    public func fileLinks(_ ids: [UploadID], token: String) async throws -> [API.FileLink] { throw Self.noFiles }
    public func fileBytes(_ id: UploadID, offset: Int64, length: Int64, token: String) async throws -> Data { throw Self.noFiles }

    static var noFiles: ParleyClientError { ParleyClientError(status: 404, code: .notFound, message: "This server does not take files.") }
}

/// A failed request: the server's error code and message, or a transport failure (`code == nil`).
public struct ParleyClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The HTTP status.
    public var status: Int
    /// The API's error code, when the body had one.
    public var code: ErrorCode?
    /// The server's message (safe to show).
    public var message: String

    /// Creates the error.
    public init(status: Int, code: ErrorCode?, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// The server's message.
    public var description: String { message }
    /// 401: the session is gone; the app should sign in again.
    public var isUnauthorized: Bool { status == 401 }
    /// Whether the request may or may not have reached the server, or was refused only for now:
    /// no answer, a 5xx, `rate_limited`, `storage_unavailable`. Retrying it with the same
    /// idempotency key is safe and may succeed.
    public var isUncertain: Bool { status == 0 || status >= 500 || code == .rateLimited || code == .storageUnavailable || code == .unavailable }
}
