import ParleyCore

/// A browser's Web Push subscription as stored: where its push service takes messages and the keys
/// only that browser can decrypt with (issue #37).
public struct PushSubscriptionRecord: Sendable, Equatable {
    /// The push service URL; unique: one browser profile, one endpoint.
    public var endpoint: String
    /// The browser's P-256 public key, uncompressed (65 bytes).
    public var p256dh: [UInt8]
    /// The browser's 16-byte authentication secret.
    public var auth: [UInt8]
    public var createdAt: Timestamp

    public init(endpoint: String, p256dh: [UInt8], auth: [UInt8], createdAt: Timestamp) {
        self.endpoint = endpoint
        self.p256dh = p256dh
        self.auth = auth
        self.createdAt = createdAt
    }
}

/// Web Push subscriptions. Rules:
/// 1. An endpoint belongs to one user: saving it again (for the same user or another, a browser
///    signed in as someone else) replaces the earlier record, so a push never reaches the
///    previous account's browser.
/// 2. A user keeps at most `limit` subscriptions; saving one more drops their oldest.
/// 3. A user removes only their own; a push service's 404 or 410 removes one whoever held it.
public protocol PushSubscriptionStore: Sendable {
    func savePushSubscription(_ subscription: PushSubscriptionRecord, for user: UserID, limit: Int) async throws
    /// True when `endpoint` was `user`'s and is removed.
    func deletePushSubscription(endpoint: String, of user: UserID) async throws -> Bool
    func dropPushSubscription(endpoint: String) async throws
    /// Newest first.
    func pushSubscriptions(of user: UserID) async throws -> [PushSubscriptionRecord]
}
