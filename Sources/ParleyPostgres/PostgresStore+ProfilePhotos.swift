import ParleyCore
import ParleyStore
import PostgresNIO

extension PostgresStore: ProfilePhotoStore {
    public func setPhoto(of user: UserID, upload id: UploadID?, now: Timestamp) async throws -> User {
        try await transaction { db in
            // Rule 1 under the upload's row lock, taken before the user's as a group send takes them: a
            // send claiming the same upload waits, then finds it claimed (or this does).
            if let id {
                guard let upload = try await self.upload(id, db, lock: true), upload.owner == user, upload.reading?.kind == .image,
                    upload.conversationId == nil, upload.photoOf == nil || upload.photoOf == user
                else { throw StoreError.invalidAttachment }
            }
            // The user's row lock orders two changes of the same photo: the second replaces the first's.
            guard let row = try await db.rows("SELECT photo_upload FROM users WHERE id = \(user.rawValue) FOR UPDATE", self.logger).first else {
                throw StoreError.userNotFound
            }
            let previous = try row.decode(String?.self).map(UploadID.init(rawValue:))
            if previous != id {
                if let id { try await db.query("UPDATE uploads SET photo_of = \(user.rawValue) WHERE id = \(id.rawValue)", logger: self.logger) }
                try await db.query("UPDATE users SET photo_upload = \(id?.rawValue) WHERE id = \(user.rawValue)", logger: self.logger)
                // Rule 3: the old photo's row goes and its blob becomes the collector's candidate.
                if let previous, let old = try await self.upload(previous, db, lock: true) { try await self.forget([old], now: now, db) }
            }
            guard let updated = try await Self.users([user], db, self.logger).first else { throw StoreError.userNotFound }
            return updated
        }
    }

    public func photoAccess(_ id: UploadID) async throws -> FileAccess? {
        try await read { db in
            guard let upload = try await self.upload(id, db), upload.photoOf != nil, let reading = upload.reading else { return nil }
            return FileAccess(blob: reading.blob, size: upload.length, name: upload.name, mimeType: reading.mimeType, kind: reading.kind)
        }
    }

    /// Rule 5, from the user's membership rows (indexed by user); a group's current members also
    /// have an open span, which is checked for both sides.
    public func peers(of user: UserID) async throws -> [UserID] {
        try await read { db in
            try await db.values(
                """
                SELECT DISTINCT other.user_id FROM conversation_members me
                JOIN conversation_members other ON other.conversation_id = me.conversation_id AND other.user_id <> me.user_id
                WHERE me.user_id = \(user.rawValue) AND (
                    me.conversation_id LIKE 'dm\\_%'
                    OR (EXISTS (SELECT 1 FROM member_spans s WHERE s.conversation_id = me.conversation_id AND s.user_id = me.user_id AND s.to_seq IS NULL)
                        AND EXISTS (
                            SELECT 1 FROM member_spans s WHERE s.conversation_id = other.conversation_id AND s.user_id = other.user_id AND s.to_seq IS NULL)))
                """, as: String.self, self.logger
            ).map(UserID.init(rawValue:))
        }
    }
}
