import Foundation
import ParleyCore

/// The notification routes (docs/protocol.md "Notifications").
extension HTTPParleyAPI {
    public func notificationSettings(token: String) async throws -> NotificationSettings {
        try await call(.GET, "/v1/notifications", token: token)
    }

    public func setNotificationPreview(_ preview: NotificationPreview, token: String) async throws -> NotificationSettings {
        try await call(.PUT, "/v1/notifications", token: token, body: NotificationPreviewChange(preview: preview))
    }

    public func changeNotifications(of id: ConversationID, _ change: ConversationNotificationChange, token: String) async throws
        -> ConversationNotificationSetting
    {
        try await call(.PUT, "/v1/conversations/\(id)/notifications", token: token, body: change)
    }

    public func registerAPNsToken(_ deviceToken: String, environment: API.APNsTokenBody.Environment, token: String) async throws {
        _ = try await raw(.PUT, "/v1/push/apns-tokens/\(deviceToken)", token: token, body: API.APNsTokenBody(environment: environment))
    }

    public func unregisterAPNsToken(_ deviceToken: String, token: String) async throws {
        _ = try await raw(.DELETE, "/v1/push/apns-tokens/\(deviceToken)", token: token)
    }
}
