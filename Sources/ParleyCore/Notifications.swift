/// Which messages of a conversation notify a user whose apps are closed (docs/protocol.md "Notifications").
public enum NotificationLevel: String, Hashable, Codable, Sendable, CaseIterable {
    /// Every message from someone else.
    case all
    /// Only messages that mention the user.
    case mentions
    /// None.
    case none
}

/// How much of a message a notification shows on a locked screen, chosen per user.
public enum NotificationPreview: String, Hashable, Codable, Sendable, CaseIterable {
    /// The sender, the group's title and the text.
    case full
    /// Who wrote, not what.
    case sender
    /// Only "New message".
    case none
}

/// How long a mute lasts, as asked for by `PUT /v1/conversations/{id}/notifications`.
public enum MuteDuration: String, Hashable, Codable, Sendable, CaseIterable {
    case eightHours = "8h"
    case oneWeek = "1w"
    case always
    /// Unmutes.
    case off

    /// The end of the mute starting at `now`: `nil` for `off`, ``Timestamp/forever`` for `always`.
    public func until(_ now: Timestamp) -> Timestamp? {
        switch self {
        case .eightHours: Timestamp(milliseconds: now.milliseconds + 8 * 3_600_000)
        case .oneWeek: Timestamp(milliseconds: now.milliseconds + 7 * 86_400_000)
        case .always: .forever
        case .off: nil
        }
    }
}

extension Timestamp {
    /// 9999-12-31T23:59:59Z: what "muted always" is stored and shown as (a JSON number every
    /// client reads exactly, unlike `Int64.max`).
    public static let forever = Timestamp(milliseconds: 253_402_300_799_000)
}

/// One conversation's notification setting for one user.
public struct ConversationNotificationSetting: Hashable, Codable, Sendable {
    /// The conversation.
    public var conversationId: ConversationID
    /// Which messages notify.
    public var level: NotificationLevel
    /// Nothing notifies before this time; `nil` when not muted.
    public var mutedUntil: Timestamp?

    /// Creates a value.
    public init(conversationId: ConversationID, level: NotificationLevel = .all, mutedUntil: Timestamp? = nil) {
        self.conversationId = conversationId
        self.level = level
        self.mutedUntil = mutedUntil
    }

    /// Whether a message of this conversation notifies at `now`, given whether it mentions the user.
    public func notifies(mentioning: Bool, at now: Timestamp) -> Bool {
        if let mutedUntil, mutedUntil > now { return false }
        switch level {
        case .all: return true
        case .mentions: return mentioning
        case .none: return false
        }
    }

    /// Encodes `mutedUntil` as an explicit `null` when not muted, as the API documents.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(conversationId, forKey: .conversationId)
        try container.encode(level, forKey: .level)
        try container.encode(mutedUntil, forKey: .mutedUntil)
    }
}

/// A user's notification settings: `GET /v1/notifications`.
public struct NotificationSettings: Hashable, Codable, Sendable {
    /// What notifications show.
    public var preview: NotificationPreview
    /// The conversations whose setting is not the default (level `all`, not muted).
    public var conversations: [ConversationNotificationSetting]

    /// Creates a value.
    public init(preview: NotificationPreview = .full, conversations: [ConversationNotificationSetting] = []) {
        self.preview = preview
        self.conversations = conversations
    }
}

/// The body of `PUT /v1/conversations/{id}/notifications`: either part or both.
public struct ConversationNotificationChange: Hashable, Codable, Sendable {
    /// The new level, if it changes.
    public var level: NotificationLevel?
    /// The new mute, if it changes.
    public var mute: MuteDuration?

    /// Creates a value.
    public init(level: NotificationLevel? = nil, mute: MuteDuration? = nil) {
        self.level = level
        self.mute = mute
    }
}

/// The body of `PUT /v1/notifications`.
public struct NotificationPreviewChange: Hashable, Codable, Sendable {
    /// The new preview level.
    public var preview: NotificationPreview

    /// Creates a value.
    public init(preview: NotificationPreview) { self.preview = preview }
}

extension ConversationNotificationSetting {
    /// Applies the parts `change` has; a mute is counted from `now`.
    public mutating func apply(_ change: ConversationNotificationChange, now: Timestamp) {
        if let level = change.level { self.level = level }
        if let mute = change.mute { mutedUntil = mute.until(now) }
    }

    /// Level `all` and not muted at `now`: what a conversation with no stored setting has.
    public func isDefault(at now: Timestamp) -> Bool {
        level == .all && (mutedUntil.map { $0 <= now } ?? true)
    }
}
