import Foundation
import GRDB
import ParleyCore
import ParleyStore

extension SQLiteStore: PushSubscriptionStore {
    public func savePushSubscription(_ subscription: PushSubscriptionRecord, for user: UserID, limit: Int) async throws {
        try await write { db in
            try Self.startPushCursor(of: user, db)
            try db.execute(
                sql: """
                    INSERT INTO push_subscriptions (endpoint, user_id, p256dh, auth, created_at) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (endpoint) DO UPDATE SET user_id = excluded.user_id, p256dh = excluded.p256dh, auth = excluded.auth,
                        created_at = excluded.created_at
                    """,
                arguments: [subscription.endpoint, user.rawValue, Data(subscription.p256dh), Data(subscription.auth), subscription.createdAt.milliseconds])
            // Rule 2: the newest `limit` stay.
            try db.execute(
                sql: """
                    DELETE FROM push_subscriptions WHERE user_id = ?1 AND endpoint NOT IN
                        (SELECT endpoint FROM push_subscriptions WHERE user_id = ?1 ORDER BY created_at DESC, endpoint LIMIT ?2)
                    """,
                arguments: [user.rawValue, max(1, limit)])
        }
    }

    public func deletePushSubscription(endpoint: String, of user: UserID) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM push_subscriptions WHERE endpoint = ? AND user_id = ?", arguments: [endpoint, user.rawValue])
            return db.changesCount > 0
        }
    }

    public func dropPushSubscription(endpoint: String) async throws {
        try await write { db in try db.execute(sql: "DELETE FROM push_subscriptions WHERE endpoint = ?", arguments: [endpoint]) }
    }

    public func pushSubscriptions(of user: UserID) async throws -> [PushSubscriptionRecord] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT endpoint, p256dh, auth, created_at FROM push_subscriptions WHERE user_id = ? ORDER BY created_at DESC, endpoint",
                arguments: [user.rawValue]
            ).map { row in
                PushSubscriptionRecord(
                    endpoint: row[0], p256dh: [UInt8](row[1] as Data), auth: [UInt8](row[2] as Data), createdAt: Timestamp(milliseconds: row[3]))
            }
        }
    }
}
