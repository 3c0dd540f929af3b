import Foundation
import GRDB
import ParleyCore
import ParleyStore

extension SQLiteStore: PushQueueStore {
    public func claimPushWork(node: String, now: Timestamp, leaseUntil: Timestamp, limit: Int) async throws -> [PushWork] {
        try await write { db in
            try Row.fetchAll(
                db,
                sql: """
                    UPDATE push_cursors SET lease_owner = ?1, lease_until = ?2 WHERE user_id IN (
                        SELECT c.user_id FROM push_cursors c JOIN users u ON u.id = c.user_id
                        WHERE u.stream_head > c.pushed_pos AND c.retry_at <= ?3
                            AND (c.lease_until <= ?3 OR (c.lease_owner != ?1 AND substr(c.lease_owner, 1, length(?5)) = ?5))
                            AND (EXISTS (SELECT 1 FROM push_subscriptions s WHERE s.user_id = c.user_id)
                                OR EXISTS (SELECT 1 FROM apns_tokens t WHERE t.user_id = c.user_id))
                        LIMIT ?4)
                    RETURNING user_id, pushed_pos, attempts
                    """,
                arguments: [node, leaseUntil.milliseconds, now.milliseconds, max(1, limit), PushWork.earlierIncarnations(of: node)]
            ).map { PushWork(user: UserID(rawValue: $0[0]), pushedPosition: $0[1], attempts: $0[2]) }
        }
    }

    public func finishPushWork(of user: UserID, node: String, upTo position: Int64, notified: [ConversationID: Int64?]) async throws -> Bool {
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE push_cursors SET pushed_pos = MAX(pushed_pos, ?), lease_owner = NULL, lease_until = 0, retry_at = 0, attempts = 0
                    WHERE user_id = ? AND lease_owner = ?
                    """,
                arguments: [position, user.rawValue, node])
            guard db.changesCount > 0 else { return false }
            for (conversation, seq) in notified {
                if let seq {
                    try db.execute(
                        sql: "INSERT OR REPLACE INTO push_notified (user_id, conversation_id, seq) VALUES (?, ?, ?)",
                        arguments: [user.rawValue, conversation.rawValue, seq])
                } else {
                    try db.execute(
                        sql: "DELETE FROM push_notified WHERE user_id = ? AND conversation_id = ?", arguments: [user.rawValue, conversation.rawValue])
                }
            }
            return true
        }
    }

    public func retryPushWork(of user: UserID, node: String, at: Timestamp) async throws {
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE push_cursors SET lease_owner = NULL, lease_until = 0, retry_at = ?, attempts = attempts + 1
                    WHERE user_id = ? AND lease_owner = ?
                    """,
                arguments: [at.milliseconds, user.rawValue, node])
        }
    }

    public func pushCursor(of user: UserID) async throws -> Int64? {
        try await pool.read { db in try Int64.fetchOne(db, sql: "SELECT pushed_pos FROM push_cursors WHERE user_id = ?", arguments: [user.rawValue]) }
    }

    public func pushesDue() async throws -> Int {
        try await pool.read { db in
            try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM push_cursors c JOIN users u ON u.id = c.user_id WHERE u.stream_head > c.pushed_pos") ?? 0
        }
    }

    public func pushNotified(of user: UserID) async throws -> [ConversationID: Int64] {
        try await pool.read { db in
            var notified: [ConversationID: Int64] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT conversation_id, seq FROM push_notified WHERE user_id = ?", arguments: [user.rawValue]) {
                notified[ConversationID(rawValue: row[0])] = row[1]
            }
            return notified
        }
    }

    /// Rule 1 of ``PushQueueStore``: a user's first target starts their cursor at their stream head.
    static func startPushCursor(of user: UserID, _ db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO push_cursors (user_id, pushed_pos) SELECT id, stream_head FROM users WHERE id = ?1
                ON CONFLICT (user_id) DO UPDATE SET pushed_pos = MAX(pushed_pos, excluded.pushed_pos), attempts = 0, retry_at = 0
                WHERE NOT EXISTS (SELECT 1 FROM push_subscriptions WHERE user_id = ?1)
                    AND NOT EXISTS (SELECT 1 FROM apns_tokens WHERE user_id = ?1)
                """,
            arguments: [user.rawValue])
    }

    public func saveAPNsToken(_ device: APNsDeviceRecord, for user: UserID, limit: Int) async throws {
        try await write { db in
            try Self.startPushCursor(of: user, db)
            try db.execute(
                sql: """
                    INSERT INTO apns_tokens (token, user_id, sandbox, created_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (token) DO UPDATE SET user_id = excluded.user_id, sandbox = excluded.sandbox, created_at = excluded.created_at
                    """,
                arguments: [device.token, user.rawValue, device.sandbox, device.createdAt.milliseconds])
            try db.execute(
                sql: """
                    DELETE FROM apns_tokens WHERE user_id = ?1 AND token NOT IN
                        (SELECT token FROM apns_tokens WHERE user_id = ?1 ORDER BY created_at DESC, token LIMIT ?2)
                    """,
                arguments: [user.rawValue, max(1, limit)])
        }
    }

    public func deleteAPNsToken(_ token: String, of user: UserID) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM apns_tokens WHERE token = ? AND user_id = ?", arguments: [token, user.rawValue])
            return db.changesCount > 0
        }
    }

    public func dropAPNsToken(_ token: String) async throws {
        try await write { db in try db.execute(sql: "DELETE FROM apns_tokens WHERE token = ?", arguments: [token]) }
    }

    public func apnsTokens(of user: UserID) async throws -> [APNsDeviceRecord] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT token, sandbox, created_at FROM apns_tokens WHERE user_id = ? ORDER BY created_at DESC, token", arguments: [user.rawValue]
            ).map { APNsDeviceRecord(token: $0[0], sandbox: $0[1], createdAt: Timestamp(milliseconds: $0[2])) }
        }
    }
}
