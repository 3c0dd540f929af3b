/// What a push carries to a browser's service worker or an app extension (docs/protocol.md
/// "Notifications"): already worded for display, so a device shows it without a round trip.
public struct PushPayload: Hashable, Codable, Sendable {
    /// What the push asks the device to do.
    public enum Kind: String, Hashable, Codable, Sendable {
        /// Show (or replace) the conversation's notification, with an alert.
        case message
        /// The notified message was edited: replace the notification without an alert.
        case update
        /// The notified message was deleted: take its notification back.
        case withdraw
        /// The user read the conversation elsewhere up to `seq`: take its notification back.
        case read
    }

    /// The payload's version.
    public var v: Int
    public var kind: Kind
    public var conversationId: ConversationID
    /// `message`: the newest message; `update`/`withdraw`: that message; `read`: the read cursor.
    public var seq: Int64
    /// The notification's title (the sender, the group's title, or "Parley").
    public var title: String
    /// Its body, at the user's preview level.
    public var body: String
    /// `message`: new messages in this conversation since the previous notification.
    public var count: Int?
    /// The user's total unread messages.
    public var badge: Int
    /// What choosing the notification opens in the web client.
    public var url: String

    /// Creates a value.
    public init(
        kind: Kind, conversationId: ConversationID, seq: Int64, title: String, body: String, count: Int? = nil, badge: Int, url: String
    ) {
        self.v = 1
        self.kind = kind
        self.conversationId = conversationId
        self.seq = seq
        self.title = title
        self.body = body
        self.count = count
        self.badge = badge
        self.url = url
    }
}
