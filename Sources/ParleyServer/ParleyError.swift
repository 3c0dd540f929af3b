import Foundation
import HTTPTypes
import Hummingbird
import ParleyCore
import ParleyStore
import Logging

/// An error a client may see: an HTTP status, a machine-readable code and a safe message.
public struct ParleyError: Error, HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    public var code: ErrorCode
    public var message: String
    /// Seconds to wait before trying again (429s).
    public var retryAfter: Int?
    /// The methods the route takes (405s).
    public var allow: [HTTPRequest.Method]?
    /// Adds `Upgrade: websocket` (426s).
    public var upgrade = false
    /// Further headers the answer carries (tus: `Tus-Resumable`, `Upload-Offset` with a 409, `Tus-Version` with a 412).
    public var headers: HTTPFields = [:]

    public init(_ code: ErrorCode, _ message: String, retryAfter: Int? = nil) {
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
        self.status = Self.status(for: code)
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        if let allow { headers[.allow] = allow.map(\.rawValue).joined(separator: ", ") }
        if upgrade {
            headers[.upgrade] = "websocket"
            headers[.connection] = "Upgrade"
        }
        let body = try WireFormat.encoder().encode(ErrorBody(code: code, message: message))
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    static func status(for code: ErrorCode) -> HTTPResponse.Status {
        switch code {
        case .unauthorized, .notAuthenticated, .invalidCredentials: .unauthorized
        case .notFound, .conversationNotFound, .userNotFound, .memberNotFound, .messageNotFound, .invitationNotFound, .uploadNotFound, .fileNotFound:
            .notFound
        case .usernameTaken, .clientIdConflict, .cursorBeyondEnd, .groupFull, .messageDeleted, .offsetMismatch, .uploadAttached: .conflict
        case .uploadTooLarge, .quotaExceeded: .contentTooLarge
        case .checksumMismatch: HTTPResponse.Status(code: 460, reasonPhrase: "Checksum Mismatch")
        case .uploadBusy: HTTPResponse.Status(code: 423, reasonPhrase: "Locked")
        case .unsupportedTusVersion: .preconditionFailed
        case .rangeNotSatisfiable: .rangeNotSatisfiable
        case .invalidRecipient, .forbidden, .editWindowClosed, .deleteWindowClosed: .forbidden
        case .payloadTooLarge: .contentTooLarge
        case .unsupportedMediaType: .unsupportedMediaType
        case .methodNotAllowed: .methodNotAllowed
        case .upgradeRequired: HTTPResponse.Status(code: 426, reasonPhrase: "Upgrade Required")
        case .requestTimeout: .requestTimeout
        case .rateLimited: .tooManyRequests
        case .unavailable, .storageUnavailable: .serviceUnavailable
        case .internalError: .internalServerError
        case .invalidJSON, .invalidUTF8, .invalidFrame, .unknownFrameType, .invalidQuery, .alreadyAuthenticated,
            .invalidUsername, .invalidDisplayName, .invalidPassword, .invalidClientId,
            .textEmpty, .textTooLong, .textInvalidCharacters, .invalidCursor, .invalidTitle, .invalidMembers, .invalidRole, .invalidEmoji,
            .invalidAction, .invalidPushSubscription, .invalidNotificationSetting, .invalidUpload, .invalidAttachment, .malformedRequest:
            .badRequest
        }
    }

    init(_ failure: Validation.Failure) {
        self.init(failure.code, failure.message)
    }

    /// The client-facing form of a store rule violation.
    init(_ error: StoreError) {
        switch error {
        case .usernameTaken: self.init(.usernameTaken, "That username is taken.")
        case .userNotFound: self.init(.userNotFound, "No such user.")
        case .conversationNotFound: self.init(.conversationNotFound, "No such conversation.")
        case .noLongerMember: self.init(.conversationNotFound, "You are no longer a member of this group.")
        case .invalidRecipient: self.init(.invalidRecipient, "You cannot message yourself.")
        case .clientIdConflict: self.init(.clientIdConflict, "This clientId was already used for something else: another message, action or conversation.")
        case .cursorBeyondEnd: self.init(.cursorBeyondEnd, "The cursor is beyond the conversation's last message.")
        case .forbidden(let reason): self.init(.forbidden, reason)
        case .invalidMembers(let reason): self.init(.invalidMembers, reason)
        case .invalidRole: self.init(.invalidRole, "Role must be admin or member.")
        case .groupFull(let limit): self.init(.groupFull, "A group has at most \(limit) members.")
        case .memberNotFound: self.init(.memberNotFound, "That person is not a member of this group.")
        case .messageNotFound: self.init(.messageNotFound, "No such message.")
        case .invitationNotFound: self.init(.invitationNotFound, "No such invitation.")
        case .messageDeleted: self.init(.messageDeleted, "That message was deleted.")
        case .invalidAction: self.init(.invalidAction, "That action does not apply to this message.")
        case .editWindowClosed: self.init(.editWindowClosed, "This message can no longer be edited.")
        case .deleteWindowClosed: self.init(.deleteWindowClosed, "This message can no longer be deleted for everyone.")
        case .invalidAttachment:
            // The upload's state, not the request's shape, is wrong: a conflict (retrying once it is complete can succeed).
            self.init(.invalidAttachment, "An attachment is not a complete upload of yours that no message carries yet.")
            status = .conflict
        case .uploadNotFound: self.init(.uploadNotFound, "No such upload.")
        case .uploadAttached:
            self.init(.uploadAttached, "That upload is part of a message or is a profile photo; it goes when the message is deleted or the photo replaced.")
        case .quotaExceeded(let limit): self.init(.quotaExceeded, "Your uploads would take more than your \(ByteCountText.text(limit)) of storage.")
        case .storageUnavailable:
            self.init(.storageUnavailable, "The server cannot store anything right now; nothing was lost, try again shortly.", retryAfter: 5)
        }
    }

    /// Maps any error to what a client may see: known errors keep their meaning, anything else is a
    /// generic 500 (the caller logs the original; no SQL or stack text leaves the server).
    static func from(_ error: any Error) -> ParleyError? {
        switch error {
        case let error as ParleyError: error
        case let error as StoreError: ParleyError(error)
        case let error as Validation.Failure: ParleyError(error)
        case is DecodingError: ParleyError(.invalidJSON, "The request body is not the expected JSON.")
        case is RequestBodyCut: ParleyError(.invalidJSON, "The request body ended before it was whole.")
        case let error as HTTPError:
            switch error.status {
            case .notFound: ParleyError(.notFound, "No such route.")
            case .contentTooLarge: ParleyError(.payloadTooLarge, "The request body is too large.")
            case .methodNotAllowed: ParleyError(.methodNotAllowed, "This route does not take this method.")
            default: error.status.code < 500 ? ParleyError(.invalidQuery, "The request is malformed.") : nil
            }
        default: nil
        }
    }
}

/// Turns every error into the JSON error body; unknown errors become a logged, generic 500 (the
/// same error logged at most once per interval), and storage failures are reported to ``StorageHealth``.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    let health: StorageHealth
    let logLimiter: LogLimiter

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            if let known = ParleyError.from(error) {
                if known.code == .storageUnavailable { health.writeFailed() }
                throw known
            }
            let description = String(reflecting: error)
            logLimiter.limit(description) { suppressed in
                context.logger.error(
                    "Request failed",
                    metadata: [
                        "error": "\(description)", "path": "\(request.uri.path)", "repeats_not_logged": "\(suppressed)",
                    ])
            }
            throw ParleyError(.internalError, "Something went wrong on the server.")
        }
    }
}
