import GRDB
import ParleyCore
import ParleyStore

extension SQLiteStore: ProfilePhotoStore {
    public func setPhoto(of user: UserID, upload id: UploadID?, now: Timestamp) async throws -> User {
        try await write { db in
            // Rule 1, checked in the write that claims it: a send claiming it at the same time comes before or after, never both.
            if let id {
                guard let upload = try Self.upload(id, db), upload.owner == user, upload.reading?.kind == .image, upload.conversationId == nil,
                    upload.photoOf == nil || upload.photoOf == user
                else { throw StoreError.invalidAttachment }
            }
            guard let row = try Row.fetchOne(db, sql: "SELECT photo_upload FROM users WHERE id = ?", arguments: [user.rawValue]) else {
                throw StoreError.userNotFound
            }
            let previous = (row[0] as String?).map(UploadID.init(rawValue:))
            if previous != id {
                if let id { try db.execute(sql: "UPDATE uploads SET photo_of = ? WHERE id = ?", arguments: [user.rawValue, id.rawValue]) }
                try db.execute(sql: "UPDATE users SET photo_upload = ? WHERE id = ?", arguments: [id?.rawValue, user.rawValue])
                // Rule 3: the old photo's row goes and its blob becomes the collector's candidate.
                if let previous, let old = try Self.upload(previous, db) { try Self.forget([old], now: now, db) }
            }
            guard let updated = try Self.users([user], db).first else { throw StoreError.userNotFound }
            return updated
        }
    }

    public func photoAccess(_ id: UploadID) async throws -> FileAccess? {
        try await lookup { db in
            guard let upload = try Self.upload(id, db), upload.photoOf != nil, let reading = upload.reading else { return nil }
            return FileAccess(blob: reading.blob, size: upload.length, name: upload.name, mimeType: reading.mimeType, kind: reading.kind)
        }
    }

    public func peers(of user: UserID) async throws -> [UserID] {
        try await lookup { db in
            try String.fetchAll(db, sql: Self.peersSQL, arguments: [user.rawValue]).map(UserID.init(rawValue:))
        }
    }

    /// Rule 5, from the user's membership rows (indexed by user); a group's current members also
    /// have an open span, which is checked for both sides.
    static let peersSQL = """
        SELECT DISTINCT other.user_id FROM conversation_members me
        JOIN conversation_members other ON other.conversation_id = me.conversation_id AND other.user_id != me.user_id
        WHERE me.user_id = ? AND (
            substr(me.conversation_id, 1, 3) = 'dm_'
            OR (EXISTS (SELECT 1 FROM member_spans s WHERE s.conversation_id = me.conversation_id AND s.user_id = me.user_id AND s.to_seq IS NULL)
                AND EXISTS (
                    SELECT 1 FROM member_spans s WHERE s.conversation_id = other.conversation_id AND s.user_id = other.user_id AND s.to_seq IS NULL)))
        """
}
