import GRDB
import ParleyCore
import ParleyStore

extension SQLiteStore: UploadStore {
    static let uploadColumns =
        "id, owner_id, name, length, sha256, created_at, expires_at, blob, mime_type, kind, width, height, conversation_id, seq, photo_of, keeps_metadata"

    public func createUpload(_ upload: NewUpload, quota: Int64, now: Timestamp) async throws {
        try await write { db in
            // Rule 2: what the owner stores already plus this one.
            let used = try Int64.fetchOne(db, sql: "SELECT COALESCE(SUM(length), 0) FROM uploads WHERE owner_id = ?", arguments: [upload.owner.rawValue]) ?? 0
            guard used + upload.length <= quota else { throw StoreError.quotaExceeded(limit: quota) }
            try db.execute(
                sql: "INSERT INTO uploads (id, owner_id, name, length, sha256, created_at, expires_at, keeps_metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                arguments: [
                    upload.id.rawValue, upload.owner.rawValue, upload.name, upload.length, upload.sha256, now.milliseconds, upload.expiresAt.milliseconds,
                    upload.keepsMetadata,
                ])
        }
    }

    public func uploadedBytes(of owner: UserID) async throws -> Int64 {
        try await lookup { db in
            try Int64.fetchOne(db, sql: "SELECT COALESCE(SUM(length), 0) FROM uploads WHERE owner_id = ?", arguments: [owner.rawValue]) ?? 0
        }
    }

    public func upload(_ id: UploadID, owner: UserID) async throws -> StoredUpload? {
        try await lookup { db in try Self.upload(id, db).flatMap { $0.owner == owner ? $0 : nil } }
    }

    public func completeUpload(_ id: UploadID, owner: UserID, _ reading: UploadReading, now: Timestamp) async throws -> StoredUpload {
        try await write { db in
            try db.execute(
                sql: "UPDATE uploads SET blob = ?, mime_type = ?, kind = ?, width = ?, height = ? WHERE id = ? AND owner_id = ?",
                arguments: [reading.blob, reading.mimeType, reading.kind.rawValue, reading.width, reading.height, id.rawValue, owner.rawValue])
            guard db.changesCount == 1, let stored = try Self.upload(id, db) else { throw StoreError.uploadNotFound }
            // The blob is named again: no longer the collector's.
            try db.execute(sql: "DELETE FROM blob_candidates WHERE blob = ?", arguments: [reading.blob])
            return stored
        }
    }

    public func deleteUpload(_ id: UploadID, owner: UserID) async throws {
        try await write { db in
            guard let upload = try Self.upload(id, db), upload.owner == owner else { throw StoreError.uploadNotFound }
            guard !upload.isClaimed else { throw StoreError.uploadAttached }
            try Self.forget([upload], now: Timestamp.now(), db)
        }
    }

    public func fileAccess(_ id: UploadID, for user: UserID) async throws -> FileAccess? {
        try await lookup { db in
            guard let upload = try Self.upload(id, db), let reading = upload.reading else { return nil }
            if upload.owner != user {
                // Rule 4: through the message carrying it, as the user sees that message, while a member.
                guard let conversation = upload.conversationId, let seq = upload.seq,
                    try MessageVisibility.canSee(seq, in: conversation, user: user, db),
                    try Bool.fetchOne(
                        db.cachedStatement(sql: "SELECT 1 FROM conversation_members WHERE conversation_id = ? AND user_id = ?"),
                        arguments: [conversation.rawValue, user.rawValue]) == true
                else { return nil }
            }
            return FileAccess(blob: reading.blob, size: upload.length, name: upload.name, mimeType: reading.mimeType, kind: reading.kind)
        }
    }

    public func expiredUploads(now: Timestamp, limit: Int) async throws -> [UploadID] {
        try await lookup { db in
            try String.fetchAll(
                db, sql: "SELECT id FROM uploads WHERE conversation_id IS NULL AND photo_of IS NULL AND expires_at < ? ORDER BY expires_at LIMIT ?",
                arguments: [now.milliseconds, limit]
            ).map(UploadID.init(rawValue:))
        }
    }

    public func removeExpiredUploads(_ ids: [UploadID], now: Timestamp) async throws -> [UploadID] {
        try await write { db in
            let expired = try ids.compactMap { try Self.upload($0, db) }.filter { !$0.isClaimed && $0.expiresAt < now }
            try Self.forget(expired, now: now, db)
            return expired.map(\.id)
        }
    }

    public func referencedBlobs(_ blobs: [String]) async throws -> Set<String> {
        try await lookup { db in
            var named: Set<String> = []
            for blob in blobs where try Bool.fetchOne(db, sql: "SELECT 1 FROM uploads WHERE blob = ? LIMIT 1", arguments: [blob]) == true {
                named.insert(blob)
            }
            return named
        }
    }

    public func blobCandidates(limit: Int) async throws -> [String] {
        try await lookup { db in try String.fetchAll(db, sql: "SELECT blob FROM blob_candidates ORDER BY since LIMIT ?", arguments: [limit]) }
    }

    public func dropBlobCandidates(_ blobs: [String]) async throws {
        try await write { db in
            for blob in blobs { try db.execute(sql: "DELETE FROM blob_candidates WHERE blob = ?", arguments: [blob]) }
        }
    }

    /// Removes upload rows; their blobs become the collector's candidates.
    static func forget(_ uploads: [StoredUpload], now: Timestamp, _ db: Database) throws {
        for upload in uploads {
            try db.execute(sql: "DELETE FROM uploads WHERE id = ?", arguments: [upload.id.rawValue])
            if let blob = upload.reading?.blob {
                try db.execute(sql: "INSERT OR IGNORE INTO blob_candidates (blob, since) VALUES (?, ?)", arguments: [blob, now.milliseconds])
            }
        }
    }

    static func upload(_ id: UploadID, _ db: Database) throws -> StoredUpload? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT \(uploadColumns) FROM uploads WHERE id = ?"), arguments: [id.rawValue]).map(StoredUpload.init(row:))
    }

    /// Rule 10 of a send: the uploads now belong to the message.
    static func claim(_ attachments: [Attachment], by message: Message, _ db: Database) throws {
        try db.cachedStatement(sql: "UPDATE messages SET attachments = ? WHERE conversation_id = ? AND seq = ?")
            .execute(arguments: [StoredJSON.text(attachments), message.conversationId.rawValue, message.seq])
        for attachment in attachments {
            try db.cachedStatement(sql: "UPDATE uploads SET conversation_id = ?, seq = ? WHERE id = ?")
                .execute(arguments: [message.conversationId.rawValue, message.seq, attachment.id.rawValue])
        }
    }
}

extension StoredUpload {
    init(row: Row) {
        let reading: UploadReading? = (row[7] as String?).map { blob in
            UploadReading(
                blob: blob, mimeType: row[8] ?? "application/octet-stream", kind: AttachmentKind(rawValue: row[9] ?? "") ?? .file,
                width: (row[10] as Int64?).map(Int.init), height: (row[11] as Int64?).map(Int.init))
        }
        self.init(
            id: UploadID(rawValue: row[0]), owner: UserID(rawValue: row[1]), name: row[2], length: row[3], sha256: row[4],
            createdAt: Timestamp(milliseconds: row[5]), expiresAt: Timestamp(milliseconds: row[6]), reading: reading,
            conversationId: (row[12] as String?).map(ConversationID.init(rawValue:)), seq: row[13],
            photoOf: (row[14] as String?).map(UserID.init(rawValue:)), keepsMetadata: row[15] ?? false)
    }
}
