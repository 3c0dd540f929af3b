import Foundation
import ParleyCore
import ParleySDK

/// A chat's notification setting, for its header and menu (docs/protocol.md "Notifications").
///
/// Rules: the level and mute shown are what the server last answered (``ParleyClient/notificationSetting(of:)``);
/// "Mentions only" is offered in groups only (a direct chat has nobody to mention me but the other
/// person); a failed change leaves the setting as it was and says why in ``errorMessage``.
extension ChatViewModel {
    /// Which messages of this chat notify me.
    public var notificationLevel: NotificationLevel { client.notificationSetting(of: conversation).level }

    /// Muted now.
    public var isMuted: Bool { client.isMuted(conversation) }

    /// "Muted until Friday 9:41 AM", "Muted", or `nil` when not muted.
    public var muteText: String? {
        guard isMuted, let until = client.notificationSetting(of: conversation).mutedUntil else { return nil }
        if until == .forever { return "Muted" }
        return "Muted until " + until.date.formatted(date: .abbreviated, time: .shortened)
    }

    /// The levels a menu offers here.
    public var notificationLevels: [NotificationLevel] { isGroup ? [.all, .mentions, .none] : [.all, .none] }

    /// Changes the level; false (and ``errorMessage``) when the server refused.
    @discardableResult
    public func setNotificationLevel(_ level: NotificationLevel) async -> Bool {
        await run { try await self.client.setNotificationLevel(level, for: self.conversation) }
    }

    /// Mutes for 8 hours, a week or always; `.off` unmutes.
    @discardableResult
    public func mute(for duration: MuteDuration) async -> Bool {
        await run { try await self.client.mute(self.conversation, for: duration) }
    }
}
