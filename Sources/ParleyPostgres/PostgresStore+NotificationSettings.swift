import ParleyCore
import ParleyStore
import PostgresNIO

extension PostgresStore {
    public func notificationSettings(of user: UserID) async throws -> NotificationSettings {
        try await read { db in
            let preview = try await db.value("SELECT preview FROM push_preferences WHERE user_id = \(user.rawValue)", as: String.self, self.logger)
            let conversations = try await db.rows(
                "SELECT conversation_id, level, muted_until FROM notification_settings WHERE user_id = \(user.rawValue) ORDER BY conversation_id",
                self.logger
            ).map { row in
                let (conversation, level, muted) = try row.decode((String, String, Int64?).self)
                return ConversationNotificationSetting(
                    conversationId: ConversationID(rawValue: conversation), level: NotificationLevel(rawValue: level) ?? .all,
                    mutedUntil: muted.map(Timestamp.init(milliseconds:)))
            }
            return NotificationSettings(preview: preview.flatMap(NotificationPreview.init(rawValue:)) ?? .full, conversations: conversations)
        }
    }

    public func setNotificationPreview(_ preview: NotificationPreview, for user: UserID) async throws {
        try await execute(
            """
            INSERT INTO push_preferences (user_id, preview) VALUES (\(user.rawValue), \(preview.rawValue))
            ON CONFLICT (user_id) DO UPDATE SET preview = excluded.preview
            """)
    }

    public func changeNotificationSetting(
        _ change: ConversationNotificationChange, in conversation: ConversationID, for user: UserID, now: Timestamp
    ) async throws -> ConversationNotificationSetting {
        try await transaction { db in
            guard
                try await db.value(
                    "SELECT true FROM conversation_members WHERE conversation_id = \(conversation.rawValue) AND user_id = \(user.rawValue)",
                    as: Bool.self, self.logger) == true
            else { throw StoreError.conversationNotFound }
            let stored = try await db.rows(
                """
                SELECT level, muted_until FROM notification_settings
                WHERE user_id = \(user.rawValue) AND conversation_id = \(conversation.rawValue) FOR UPDATE
                """, self.logger
            ).first.map { try $0.decode((String, Int64?).self) }
            var setting = ConversationNotificationSetting(
                conversationId: conversation, level: stored.flatMap { NotificationLevel(rawValue: $0.0) } ?? .all,
                mutedUntil: stored?.1.map(Timestamp.init(milliseconds:)))
            setting.apply(change, now: now)
            if setting.isDefault(at: now) {
                try await db.query(
                    "DELETE FROM notification_settings WHERE user_id = \(user.rawValue) AND conversation_id = \(conversation.rawValue)",
                    logger: self.logger)
            } else {
                try await db.query(
                    """
                    INSERT INTO notification_settings (user_id, conversation_id, level, muted_until)
                    VALUES (\(user.rawValue), \(conversation.rawValue), \(setting.level.rawValue), \(setting.mutedUntil?.milliseconds))
                    ON CONFLICT (user_id, conversation_id) DO UPDATE SET level = excluded.level, muted_until = excluded.muted_until
                    """, logger: self.logger)
            }
            return setting
        }
    }

    public func sharedSecret(named name: String, orStore candidate: String) async throws -> String {
        try await transaction { db in
            try await db.query("INSERT INTO shared_secrets (name, secret) VALUES (\(name), \(candidate)) ON CONFLICT (name) DO NOTHING", logger: self.logger)
            return try await db.value("SELECT secret FROM shared_secrets WHERE name = \(name)", as: String.self, self.logger) ?? candidate
        }
    }
}
