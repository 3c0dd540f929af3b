import Logging
import ParleyCore
import ParleyStore
import PostgresNIO

extension PostgresStore: PushQueueStore {
    public func claimPushWork(node: String, now: Timestamp, leaseUntil: Timestamp, limit: Int) async throws -> [PushWork] {
        let prefix = PushWork.earlierIncarnations(of: node)
        return try await transaction { db in
            // SKIP LOCKED: two nodes claiming at once each take other users instead of waiting.
            try await db.rows(
                """
                UPDATE push_cursors p SET lease_owner = \(node), lease_until = \(leaseUntil.milliseconds)
                FROM (SELECT c.user_id FROM push_cursors c JOIN users u ON u.id = c.user_id
                      WHERE u.stream_head > c.pushed_pos AND c.retry_at <= \(now.milliseconds)
                          AND (c.lease_until <= \(now.milliseconds)
                              OR (c.lease_owner <> \(node) AND left(c.lease_owner, length(\(prefix))) = \(prefix)))
                          AND (EXISTS (SELECT 1 FROM push_subscriptions s WHERE s.user_id = c.user_id)
                              OR EXISTS (SELECT 1 FROM apns_tokens t WHERE t.user_id = c.user_id))
                      LIMIT \(max(1, limit)) FOR UPDATE OF c SKIP LOCKED) due
                WHERE p.user_id = due.user_id
                RETURNING p.user_id, p.pushed_pos, p.attempts
                """, self.logger
            ).map { row in
                let (user, position, attempts) = try row.decode((String, Int64, Int32).self)
                return PushWork(user: UserID(rawValue: user), pushedPosition: position, attempts: Int(attempts))
            }
        }
    }

    public func finishPushWork(of user: UserID, node: String, upTo position: Int64, notified: [ConversationID: Int64?]) async throws -> Bool {
        try await transaction { db in
            guard
                try await db.value(
                    """
                    UPDATE push_cursors SET pushed_pos = GREATEST(pushed_pos, \(position)), lease_owner = NULL, lease_until = 0, retry_at = 0,
                        attempts = 0
                    WHERE user_id = \(user.rawValue) AND lease_owner = \(node) RETURNING true
                    """, as: Bool.self, self.logger) == true
            else { return false }
            for (conversation, seq) in notified {
                if let seq {
                    try await db.query(
                        """
                        INSERT INTO push_notified (user_id, conversation_id, seq) VALUES (\(user.rawValue), \(conversation.rawValue), \(seq))
                        ON CONFLICT (user_id, conversation_id) DO UPDATE SET seq = excluded.seq
                        """, logger: self.logger)
                } else {
                    try await db.query(
                        "DELETE FROM push_notified WHERE user_id = \(user.rawValue) AND conversation_id = \(conversation.rawValue)", logger: self.logger)
                }
            }
            return true
        }
    }

    public func retryPushWork(of user: UserID, node: String, at: Timestamp) async throws {
        try await execute(
            """
            UPDATE push_cursors SET lease_owner = NULL, lease_until = 0, retry_at = \(at.milliseconds), attempts = attempts + 1
            WHERE user_id = \(user.rawValue) AND lease_owner = \(node)
            """)
    }

    public func pushCursor(of user: UserID) async throws -> Int64? {
        try await read { db in try await db.value("SELECT pushed_pos FROM push_cursors WHERE user_id = \(user.rawValue)", as: Int64.self, self.logger) }
    }

    public func pushesDue() async throws -> Int {
        try await read { db in
            Int(
                try await db.value(
                    "SELECT COUNT(*) FROM push_cursors c JOIN users u ON u.id = c.user_id WHERE u.stream_head > c.pushed_pos", as: Int64.self,
                    self.logger) ?? 0)
        }
    }

    public func pushNotified(of user: UserID) async throws -> [ConversationID: Int64] {
        try await read { db in
            var notified: [ConversationID: Int64] = [:]
            for row in try await db.rows("SELECT conversation_id, seq FROM push_notified WHERE user_id = \(user.rawValue)", self.logger) {
                let (conversation, seq) = try row.decode((String, Int64).self)
                notified[ConversationID(rawValue: conversation)] = seq
            }
            return notified
        }
    }

    /// Rule 1 of ``PushQueueStore``: a user's first target starts their cursor at their stream head.
    static func startPushCursor(of user: UserID, _ db: PostgresConnection, _ logger: Logger) async throws {
        try await db.query(
            """
            INSERT INTO push_cursors (user_id, pushed_pos) SELECT id, stream_head FROM users WHERE id = \(user.rawValue)
            ON CONFLICT (user_id) DO UPDATE SET pushed_pos = GREATEST(push_cursors.pushed_pos, excluded.pushed_pos), attempts = 0, retry_at = 0
            WHERE NOT EXISTS (SELECT 1 FROM push_subscriptions WHERE user_id = \(user.rawValue))
                AND NOT EXISTS (SELECT 1 FROM apns_tokens WHERE user_id = \(user.rawValue))
            """, logger: logger)
    }

    public func saveAPNsToken(_ device: APNsDeviceRecord, for user: UserID, limit: Int) async throws {
        try await transaction { db in
            try await Self.startPushCursor(of: user, db, self.logger)
            try await db.query(
                """
                INSERT INTO apns_tokens (token, user_id, sandbox, created_at)
                VALUES (\(device.token), \(user.rawValue), \(device.sandbox), \(device.createdAt.milliseconds))
                ON CONFLICT (token) DO UPDATE SET user_id = excluded.user_id, sandbox = excluded.sandbox, created_at = excluded.created_at
                """, logger: self.logger)
            try await db.query(
                """
                DELETE FROM apns_tokens WHERE user_id = \(user.rawValue) AND token NOT IN
                    (SELECT token FROM apns_tokens WHERE user_id = \(user.rawValue) ORDER BY created_at DESC, token LIMIT \(max(1, limit)))
                """, logger: self.logger)
        }
    }

    public func deleteAPNsToken(_ token: String, of user: UserID) async throws -> Bool {
        try await transaction { db in
            try await db.value(
                "DELETE FROM apns_tokens WHERE token = \(token) AND user_id = \(user.rawValue) RETURNING true", as: Bool.self, self.logger) == true
        }
    }

    public func dropAPNsToken(_ token: String) async throws {
        try await execute("DELETE FROM apns_tokens WHERE token = \(token)")
    }

    public func apnsTokens(of user: UserID) async throws -> [APNsDeviceRecord] {
        try await read { db in
            try await db.rows(
                "SELECT token, sandbox, created_at FROM apns_tokens WHERE user_id = \(user.rawValue) ORDER BY created_at DESC, token", self.logger
            ).map { row in
                let (token, sandbox, created) = try row.decode((String, Bool, Int64).self)
                return APNsDeviceRecord(token: token, sandbox: sandbox, createdAt: Timestamp(milliseconds: created))
            }
        }
    }
}
