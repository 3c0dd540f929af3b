import ParleyCore

/// A user whose stream has events no push has covered yet, leased to one node.
public struct PushWork: Sendable, Equatable {
    public var user: UserID
    /// The stream position every earlier push covered.
    public var pushedPosition: Int64
    /// Earlier attempts that ended in "try again" (reset once the pushes go out).
    public var attempts: Int

    public init(user: UserID, pushedPosition: Int64, attempts: Int) {
        self.user = user
        self.pushedPosition = pushedPosition
        self.attempts = attempts
    }

    /// What the leases of `node`'s earlier incarnations start with: its name and `#` (rule 2 of
    /// ``PushQueueStore``); a node id without `#` has none.
    public static func earlierIncarnations(of node: String) -> String {
        guard let mark = node.lastIndex(of: "#") else { return node + "#" }
        return String(node[...mark])
    }
}

/// An iOS device registered for APNs.
public struct APNsDeviceRecord: Sendable, Equatable {
    /// The device token, lowercase hex.
    public var token: String
    /// Registered by a development build (APNs' sandbox).
    public var sandbox: Bool
    public var createdAt: Timestamp

    public init(token: String, sandbox: Bool, createdAt: Timestamp) {
        self.token = token
        self.sandbox = sandbox
        self.createdAt = createdAt
    }
}

/// The push queue (docs/protocol.md "Notifications"). Its entries are the events every send already
/// writes to each recipient's stream in the message's own transaction; what this adds is a push
/// cursor per user with somewhere to push to. Rules:
/// 1. A user gets a cursor when their first push target (Web Push subscription or APNs token) is
///    saved, at their stream head then: pushes cover what happens from then on, never a backlog.
/// 2. ``claimPushWork(node:now:leaseUntil:limit:)`` takes users whose stream head is past their
///    cursor, who still have a target, whose lease has run out (or was taken by an earlier
///    incarnation of the same node: a node id is `name#incarnation`, and a node that restarts under
///    its name takes back at once what it held when it died) and whose retry time has come, and
///    leases them to `node` until `leaseUntil`: two nodes never hold the same user at once, nor one
///    node twice.
/// 3. ``finishPushWork(of:node:upTo:notified:)`` moves the cursor (never back), records which
///    message each conversation's notification now shows, and releases the lease, in one
///    transaction; it does nothing (false) when the lease was lost, so a late node cannot move
///    another's cursor.
/// 4. ``retryPushWork(of:node:at:)`` releases the lease, counts the attempt, and hides the user
///    until `at`.
/// A node that dies while holding a user leaves the lease to run out: the next node pushes the same
/// events again (at least once on the wire; the payload's seq lets the device show it once).
public protocol PushQueueStore: Sendable {
    func claimPushWork(node: String, now: Timestamp, leaseUntil: Timestamp, limit: Int) async throws -> [PushWork]
    @discardableResult
    func finishPushWork(of user: UserID, node: String, upTo position: Int64, notified: [ConversationID: Int64?]) async throws -> Bool
    func retryPushWork(of user: UserID, node: String, at: Timestamp) async throws
    /// The stream position `user`'s pushes have covered, if they have a cursor.
    func pushCursor(of user: UserID) async throws -> Int64?
    /// How many users have pushes due (the queue's length, for `/metrics`).
    func pushesDue() async throws -> Int
    /// Which message each conversation's notification shows for `user`, where one may show.
    func pushNotified(of user: UserID) async throws -> [ConversationID: Int64]

    /// Rule 1 for APNs; at most `limit` per user, oldest dropped.
    func saveAPNsToken(_ device: APNsDeviceRecord, for user: UserID, limit: Int) async throws
    /// True when `token` was `user`'s and is removed.
    func deleteAPNsToken(_ token: String, of user: UserID) async throws -> Bool
    /// APNs said the token is no longer valid (410, `Unregistered`, `BadDeviceToken`).
    func dropAPNsToken(_ token: String) async throws
    /// Newest first.
    func apnsTokens(of user: UserID) async throws -> [APNsDeviceRecord]

    /// The preview level and every conversation setting that is not the default.
    func notificationSettings(of user: UserID) async throws -> NotificationSettings
    func setNotificationPreview(_ preview: NotificationPreview, for user: UserID) async throws
    /// Applies `change` to `user`'s setting of `conversation`; `conversationNotFound` unless they are a member.
    func changeNotificationSetting(
        _ change: ConversationNotificationChange, in conversation: ConversationID, for user: UserID, now: Timestamp
    ) async throws -> ConversationNotificationSetting

    /// `user`'s unread messages over all their conversations: the sum of the summaries'
    /// `unreadCount`s (a push's badge), reading only the conversations with something unread.
    func unreadTotal(of user: UserID) async throws -> Int
    /// The titles of these groups (for wording pushes; a summary reads far more).
    func groupTitles(_ ids: [ConversationID]) async throws -> [ConversationID: String]

    /// The secret stored under `name`, storing `candidate` first when there is none: every node of
    /// a cluster gets the same one (the VAPID key of a PostgreSQL deployment).
    func sharedSecret(named name: String, orStore candidate: String) async throws -> String
}
