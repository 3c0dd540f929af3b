import Foundation
import GRDB
import ParleyCore
import ParleyStore

extension SQLiteStore {
    public func notificationSettings(of user: UserID) async throws -> NotificationSettings {
        try await pool.read { db in
            let preview = try String.fetchOne(db, sql: "SELECT preview FROM push_preferences WHERE user_id = ?", arguments: [user.rawValue])
            let conversations = try Row.fetchAll(
                db, sql: "SELECT conversation_id, level, muted_until FROM notification_settings WHERE user_id = ? ORDER BY conversation_id",
                arguments: [user.rawValue]
            ).map { row in
                ConversationNotificationSetting(
                    conversationId: ConversationID(rawValue: row[0]), level: NotificationLevel(rawValue: row[1]) ?? .all,
                    mutedUntil: (row[2] as Int64?).map(Timestamp.init(milliseconds:)))
            }
            return NotificationSettings(preview: preview.flatMap(NotificationPreview.init(rawValue:)) ?? .full, conversations: conversations)
        }
    }

    public func setNotificationPreview(_ preview: NotificationPreview, for user: UserID) async throws {
        try await write { db in
            try db.execute(
                sql: "INSERT INTO push_preferences (user_id, preview) VALUES (?, ?) ON CONFLICT (user_id) DO UPDATE SET preview = excluded.preview",
                arguments: [user.rawValue, preview.rawValue])
        }
    }

    public func changeNotificationSetting(
        _ change: ConversationNotificationChange, in conversation: ConversationID, for user: UserID, now: Timestamp
    ) async throws -> ConversationNotificationSetting {
        try await write { db in
            guard
                try Bool.fetchOne(
                    db, sql: "SELECT 1 FROM conversation_members WHERE conversation_id = ? AND user_id = ?",
                    arguments: [conversation.rawValue, user.rawValue]) == true
            else { throw StoreError.conversationNotFound }
            let row = try Row.fetchOne(
                db, sql: "SELECT level, muted_until FROM notification_settings WHERE user_id = ? AND conversation_id = ?",
                arguments: [user.rawValue, conversation.rawValue])
            var setting = ConversationNotificationSetting(
                conversationId: conversation, level: row.flatMap { NotificationLevel(rawValue: $0[0]) } ?? .all,
                mutedUntil: row.flatMap { ($0[1] as Int64?).map(Timestamp.init(milliseconds:)) })
            setting.apply(change, now: now)
            if setting.isDefault(at: now) {
                try db.execute(
                    sql: "DELETE FROM notification_settings WHERE user_id = ? AND conversation_id = ?", arguments: [user.rawValue, conversation.rawValue])
            } else {
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO notification_settings (user_id, conversation_id, level, muted_until) VALUES (?, ?, ?, ?)
                        """,
                    arguments: [user.rawValue, conversation.rawValue, setting.level.rawValue, setting.mutedUntil?.milliseconds])
            }
            return setting
        }
    }

    public func sharedSecret(named name: String, orStore candidate: String) async throws -> String {
        try await write { db in
            try db.execute(sql: "INSERT OR IGNORE INTO shared_secrets (name, secret) VALUES (?, ?)", arguments: [name, candidate])
            return try String.fetchOne(db, sql: "SELECT secret FROM shared_secrets WHERE name = ?", arguments: [name]) ?? candidate
        }
    }
}
