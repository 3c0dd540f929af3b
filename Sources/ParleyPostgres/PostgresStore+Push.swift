import ParleyCore
import ParleyStore
import NIOCore
import PostgresNIO

extension PostgresStore: PushSubscriptionStore {
    public func savePushSubscription(_ subscription: PushSubscriptionRecord, for user: UserID, limit: Int) async throws {
        try await transaction { db in
            try await Self.startPushCursor(of: user, db, self.logger)
            try await db.query(
                """
                INSERT INTO push_subscriptions (endpoint, user_id, p256dh, auth, created_at)
                VALUES (\(subscription.endpoint), \(user.rawValue), \(ByteBuffer(bytes: subscription.p256dh)), \(ByteBuffer(bytes: subscription.auth)), \(subscription.createdAt.milliseconds))
                ON CONFLICT (endpoint) DO UPDATE SET user_id = excluded.user_id, p256dh = excluded.p256dh, auth = excluded.auth,
                    created_at = excluded.created_at
                """, logger: self.logger)
            // Rule 2: the newest `limit` stay.
            try await db.query(
                """
                DELETE FROM push_subscriptions WHERE user_id = \(user.rawValue) AND endpoint NOT IN
                    (SELECT endpoint FROM push_subscriptions WHERE user_id = \(user.rawValue) ORDER BY created_at DESC, endpoint LIMIT \(max(1, limit)))
                """, logger: self.logger)
        }
    }

    public func deletePushSubscription(endpoint: String, of user: UserID) async throws -> Bool {
        try await transaction { db in
            try await db.value(
                "DELETE FROM push_subscriptions WHERE endpoint = \(endpoint) AND user_id = \(user.rawValue) RETURNING true", as: Bool.self, self.logger
            ) == true
        }
    }

    public func dropPushSubscription(endpoint: String) async throws {
        try await execute("DELETE FROM push_subscriptions WHERE endpoint = \(endpoint)")
    }

    public func pushSubscriptions(of user: UserID) async throws -> [PushSubscriptionRecord] {
        try await read { db in
            try await db.rows(
                "SELECT endpoint, p256dh, auth, created_at FROM push_subscriptions WHERE user_id = \(user.rawValue) ORDER BY created_at DESC, endpoint",
                self.logger
            ).map { row in
                let (endpoint, p256dh, auth, created) = try row.decode((String, ByteBuffer, ByteBuffer, Int64).self)
                return PushSubscriptionRecord(
                    endpoint: endpoint, p256dh: Array(p256dh.readableBytesView), auth: Array(auth.readableBytesView),
                    createdAt: Timestamp(milliseconds: created))
            }
        }
    }
}
