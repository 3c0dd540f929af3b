import Foundation
import ParleyCore

/// Notifications while the app is closed (docs/protocol.md "Notifications").
///
/// Rules:
/// 1. The server decides who is pushed (no live connection, the conversation's level and mute, a
///    mention) and words the push at the user's preview level; the app registers its APNs device
///    token and shows what arrives (``PushPayload`` under `parley` in the APNs body).
/// 2. ``notificationSettings`` holds what the server last said; each change is sent and the answer
///    replaces the local copy, so the copy never claims a setting the server refused.
/// 3. ``badgeCount`` is ``unreadCount(_:)`` summed over the conversations held locally: what the
///    server puts in a push's badge once the client is in sync.
extension ParleyClient {
    /// Registers this device for APNs pushes; `deviceToken` as `didRegisterForRemoteNotificationsWithDeviceToken` gives it.
    public func registerForPushNotifications(deviceToken: Data, environment: API.APNsTokenBody.Environment = .production) async throws {
        try await api.registerAPNsToken(Self.hex(deviceToken), environment: environment, token: session.token)
    }

    /// Stops pushes to this device (on sign-out, or when the user turns notifications off).
    public func unregisterForPushNotifications(deviceToken: Data) async throws {
        try await api.unregisterAPNsToken(Self.hex(deviceToken), token: session.token)
    }

    /// Reads the settings from the server (rule 2).
    @discardableResult
    public func loadNotificationSettings() async throws -> NotificationSettings {
        let settings = try await api.notificationSettings(token: session.token)
        notificationSettings = settings
        return settings
    }

    /// What notifications show: the message, only who wrote, or only "New message".
    public func setNotificationPreview(_ preview: NotificationPreview) async throws {
        notificationSettings = try await api.setNotificationPreview(preview, token: session.token)
    }

    /// Which messages of `id` notify me: all, mentions only, or none.
    public func setNotificationLevel(_ level: NotificationLevel, for id: ConversationID) async throws {
        store(try await api.changeNotifications(of: id, ConversationNotificationChange(level: level), token: session.token))
    }

    /// Mutes `id` for 8 hours, a week or always (`.off` unmutes).
    public func mute(_ id: ConversationID, for duration: MuteDuration) async throws {
        store(try await api.changeNotifications(of: id, ConversationNotificationChange(mute: duration), token: session.token))
    }

    /// `id`'s setting as last known (the default, all and not muted, when none is held).
    public func notificationSetting(of id: ConversationID) -> ConversationNotificationSetting {
        notificationSettings.conversations.first { $0.conversationId == id } ?? ConversationNotificationSetting(conversationId: id)
    }

    /// Whether `id` is muted now.
    public func isMuted(_ id: ConversationID, at now: Date = Date()) -> Bool {
        notificationSetting(of: id).mutedUntil.map { $0 > Timestamp(now) } ?? false
    }

    /// The app icon's badge (rule 3).
    public var badgeCount: Int {
        Int(clamping: conversations.keys.reduce(Int64(0)) { $0 + unreadCount($1) })
    }

    private func store(_ setting: ConversationNotificationSetting) {
        notificationSettings.conversations.removeAll { $0.conversationId == setting.conversationId }
        if !setting.isDefault(at: Timestamp(Date())) { notificationSettings.conversations.append(setting) }
    }

    static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }
}
