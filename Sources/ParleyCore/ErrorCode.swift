/// Machine-readable error codes shared by the REST API and the WebSocket protocol.
public enum ErrorCode: String, Codable, Sendable, CaseIterable {
    // Request shape
    case invalidJSON = "invalid_json"
    case invalidUTF8 = "invalid_utf8"
    case invalidFrame = "invalid_frame"
    case unknownFrameType = "unknown_frame_type"
    case invalidQuery = "invalid_query"
    case payloadTooLarge = "payload_too_large"
    case unsupportedMediaType = "unsupported_media_type"
    case methodNotAllowed = "method_not_allowed"
    case upgradeRequired = "upgrade_required"
    // Auth
    case unauthorized
    case notAuthenticated = "not_authenticated"
    case alreadyAuthenticated = "already_authenticated"
    case invalidCredentials = "invalid_credentials"
    case usernameTaken = "username_taken"
    case invalidUsername = "invalid_username"
    case invalidDisplayName = "invalid_display_name"
    case invalidPassword = "invalid_password"
    // Conversations and messages
    case notFound = "not_found"
    case conversationNotFound = "conversation_not_found"
    case userNotFound = "user_not_found"
    case invalidRecipient = "invalid_recipient"
    case invalidClientId = "invalid_client_id"
    case clientIdConflict = "client_id_conflict"
    case textEmpty = "text_empty"
    case textTooLong = "text_too_long"
    case textInvalidCharacters = "text_invalid_characters"
    case invalidCursor = "invalid_cursor"
    case cursorBeyondEnd = "cursor_beyond_end"
    // Groups
    case invalidTitle = "invalid_title"
    case invalidMembers = "invalid_members"
    case invalidRole = "invalid_role"
    case groupFull = "group_full"
    case forbidden
    case memberNotFound = "member_not_found"
    case messageNotFound = "message_not_found"
    case invitationNotFound = "invitation_not_found"
    // Message actions
    case invalidEmoji = "invalid_emoji"
    case invalidAction = "invalid_action"
    case messageDeleted = "message_deleted"
    case editWindowClosed = "edit_window_closed"
    case deleteWindowClosed = "delete_window_closed"
    // Files
    case invalidUpload = "invalid_upload"
    case uploadNotFound = "upload_not_found"
    case uploadTooLarge = "upload_too_large"
    case quotaExceeded = "quota_exceeded"
    case offsetMismatch = "offset_mismatch"
    case checksumMismatch = "checksum_mismatch"
    case uploadAttached = "upload_attached"
    case uploadBusy = "upload_busy"
    case unsupportedTusVersion = "unsupported_tus_version"
    case invalidAttachment = "invalid_attachment"
    case fileNotFound = "file_not_found"
    case rangeNotSatisfiable = "range_not_satisfiable"
    case invalidPushSubscription = "invalid_push_subscription"
    case invalidNotificationSetting = "invalid_notification_setting"
    // Limits and failures
    case rateLimited = "rate_limited"
    case unavailable
    /// The server cannot store anything right now (disk full, I/O errors); retry after a while.
    case storageUnavailable = "storage_unavailable"
    case internalError = "internal_error"
    // HTTP itself, answered before any route (new cases go last: a module built against the cases
    // before keeps reading them right)
    /// An HTTP request the server could not read (the parser refused it).
    case malformedRequest = "malformed_request"
    /// An HTTP request whose head or body did not arrive in time.
    case requestTimeout = "request_timeout"
}

/// The JSON body of every REST error: `{"error": {"code": "...", "message": "..."}}`.
public struct ErrorBody: Codable, Sendable, Equatable {
    /// The code and a human-readable message.
    public struct Detail: Codable, Sendable, Equatable {
        /// The machine-readable reason.
        public var code: ErrorCode
        /// A safe, human-readable explanation.
        public var message: String
    }
    /// What went wrong.
    public var error: Detail

    /// Creates an error body.
    public init(code: ErrorCode, message: String) {
        self.error = Detail(code: code, message: message)
    }
}
