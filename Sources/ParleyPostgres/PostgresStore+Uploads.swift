import ParleyCore
import ParleyStore
import PostgresNIO

extension PostgresStore: UploadStore {
    static let uploadColumns =
        "id, owner_id, name, length, sha256, created_at, expires_at, blob, mime_type, kind, width, height, conversation_id, seq, photo_of, keeps_metadata"
    typealias UploadRow = (
        String, String, String, Int64, String?, Int64, Int64, String?, String?, String?, Int32?, Int32?, String?, Int64?, String?, Bool
    )

    public func createUpload(_ upload: NewUpload, quota: Int64, now: Timestamp) async throws {
        try await transaction { db in
            // Rule 2, under the owner's row lock: two creations at once cannot both slip under the quota.
            _ = try await db.rows("SELECT 1 FROM users WHERE id = \(upload.owner.rawValue) FOR UPDATE", self.logger)
            let used =
                try await db.value(
                    "SELECT COALESCE(SUM(length), 0)::BIGINT FROM uploads WHERE owner_id = \(upload.owner.rawValue)", as: Int64.self, self.logger) ?? 0
            guard used + upload.length <= quota else { throw StoreError.quotaExceeded(limit: quota) }
            try await db.query(
                """
                INSERT INTO uploads (id, owner_id, name, length, sha256, created_at, expires_at, keeps_metadata)
                VALUES (\(upload.id.rawValue), \(upload.owner.rawValue), \(upload.name), \(upload.length), \(upload.sha256), \(now.milliseconds),
                    \(upload.expiresAt.milliseconds), \(upload.keepsMetadata))
                """, logger: self.logger)
        }
    }

    public func uploadedBytes(of owner: UserID) async throws -> Int64 {
        try await read { db in
            try await db.value("SELECT COALESCE(SUM(length), 0)::BIGINT FROM uploads WHERE owner_id = \(owner.rawValue)", as: Int64.self, self.logger) ?? 0
        }
    }

    public func upload(_ id: UploadID, owner: UserID) async throws -> StoredUpload? {
        try await read { db in try await self.upload(id, db).flatMap { $0.owner == owner ? $0 : nil } }
    }

    public func completeUpload(_ id: UploadID, owner: UserID, _ reading: UploadReading, now: Timestamp) async throws -> StoredUpload {
        try await transaction { db in
            let width = reading.width.map(Int32.init), height = reading.height.map(Int32.init)
            try await db.query(
                """
                UPDATE uploads SET blob = \(reading.blob), mime_type = \(reading.mimeType), kind = \(reading.kind.rawValue),
                    width = \(width), height = \(height)
                WHERE id = \(id.rawValue) AND owner_id = \(owner.rawValue)
                """, logger: self.logger)
            guard let stored = try await self.upload(id, db), stored.owner == owner else { throw StoreError.uploadNotFound }
            // The blob is named again: no longer the collector's.
            try await db.query("DELETE FROM blob_candidates WHERE blob = \(reading.blob)", logger: self.logger)
            return stored
        }
    }

    public func deleteUpload(_ id: UploadID, owner: UserID) async throws {
        try await transaction { db in
            guard let upload = try await self.upload(id, db, lock: true), upload.owner == owner else { throw StoreError.uploadNotFound }
            guard !upload.isClaimed else { throw StoreError.uploadAttached }
            try await self.forget([upload], now: .now(), db)
        }
    }

    public func fileAccess(_ id: UploadID, for user: UserID) async throws -> FileAccess? {
        try await read { db in
            guard let upload = try await self.upload(id, db), let reading = upload.reading else { return nil }
            if upload.owner != user {
                guard let conversation = upload.conversationId, let seq = upload.seq,
                    try await self.canSee(seq, in: conversation, user: user, db),
                    try await db.value(
                        "SELECT 1 FROM conversation_members WHERE conversation_id = \(conversation.rawValue) AND user_id = \(user.rawValue)",
                        as: Int32.self, self.logger) != nil
                else { return nil }
            }
            return FileAccess(blob: reading.blob, size: upload.length, name: upload.name, mimeType: reading.mimeType, kind: reading.kind)
        }
    }

    public func expiredUploads(now: Timestamp, limit: Int) async throws -> [UploadID] {
        try await read { db in
            try await db.values(
                """
                SELECT id FROM uploads WHERE conversation_id IS NULL AND photo_of IS NULL AND expires_at < \(now.milliseconds)
                ORDER BY expires_at LIMIT \(limit)
                """,
                as: String.self, self.logger
            ).map(UploadID.init(rawValue:))
        }
    }

    public func removeExpiredUploads(_ ids: [UploadID], now: Timestamp) async throws -> [UploadID] {
        try await transaction { db in
            var expired: [StoredUpload] = []
            for id in ids {
                if let upload = try await self.upload(id, db, lock: true), !upload.isClaimed, upload.expiresAt < now { expired.append(upload) }
            }
            try await self.forget(expired, now: now, db)
            return expired.map(\.id)
        }
    }

    public func referencedBlobs(_ blobs: [String]) async throws -> Set<String> {
        guard !blobs.isEmpty else { return [] }
        return try await read { db in
            Set(try await db.values("SELECT DISTINCT blob FROM uploads WHERE blob = ANY(\(blobs))", as: String.self, self.logger))
        }
    }

    public func blobCandidates(limit: Int) async throws -> [String] {
        try await read { db in try await db.values("SELECT blob FROM blob_candidates ORDER BY since LIMIT \(limit)", as: String.self, self.logger) }
    }

    public func dropBlobCandidates(_ blobs: [String]) async throws {
        guard !blobs.isEmpty else { return }
        try await execute("DELETE FROM blob_candidates WHERE blob = ANY(\(blobs))")
    }

    /// Removes upload rows; their blobs become the collector's candidates.
    func forget(_ uploads: [StoredUpload], now: Timestamp, _ db: PostgresConnection) async throws {
        for upload in uploads {
            try await db.query("DELETE FROM uploads WHERE id = \(upload.id.rawValue)", logger: logger)
            if let blob = upload.reading?.blob {
                try await db.query(
                    "INSERT INTO blob_candidates (blob, since) VALUES (\(blob), \(now.milliseconds)) ON CONFLICT DO NOTHING", logger: logger)
            }
        }
    }

    func upload(_ id: UploadID, _ db: PostgresConnection, lock: Bool = false) async throws -> StoredUpload? {
        try await db.rows(
            "SELECT \(unescaped: Self.uploadColumns) FROM uploads WHERE id = \(id.rawValue) \(unescaped: lock ? "FOR UPDATE" : "")", logger
        ).first.map { StoredUpload(try $0.decode(UploadRow.self)) }
    }

    /// Rule 10 of a send: each attachment a complete upload of the sender's that no message carries (nor a profile photo),
    /// its row locked until the send commits (a second send of it waits, then finds it claimed).
    func claimable(_ new: NewMessage, _ db: PostgresConnection) async throws -> [Attachment] {
        var attachments: [Attachment] = []
        for request in new.attachments {
            guard let upload = try await upload(request.uploadId, db, lock: true), upload.owner == new.sender, !upload.isClaimed,
                let attachment = upload.attachment(request)
            else { throw StoreError.invalidAttachment }
            attachments.append(attachment)
        }
        return attachments
    }

    func claim(_ attachments: [Attachment], conversation: ConversationID, seq: Int64, _ db: PostgresConnection) async throws {
        guard !attachments.isEmpty else { return }
        try await db.query(
            "UPDATE messages SET attachments = \(StoredJSON.text(attachments)) WHERE conversation_id = \(conversation.rawValue) AND seq = \(seq)",
            logger: logger)
        try await db.query(
            "UPDATE uploads SET conversation_id = \(conversation.rawValue), seq = \(seq) WHERE id = ANY(\(attachments.map(\.id.rawValue)))",
            logger: logger)
    }
}

extension StoredUpload {
    init(_ row: PostgresStore.UploadRow) {
        let reading = row.7.map { blob in
            UploadReading(
                blob: blob, mimeType: row.8 ?? "application/octet-stream", kind: AttachmentKind(rawValue: row.9 ?? "") ?? .file,
                width: row.10.map(Int.init), height: row.11.map(Int.init))
        }
        self.init(
            id: UploadID(rawValue: row.0), owner: UserID(rawValue: row.1), name: row.2, length: row.3, sha256: row.4,
            createdAt: Timestamp(milliseconds: row.5), expiresAt: Timestamp(milliseconds: row.6), reading: reading,
            conversationId: row.12.map(ConversationID.init(rawValue:)), seq: row.13, photoOf: row.14.map(UserID.init(rawValue:)), keepsMetadata: row.15)
    }
}
