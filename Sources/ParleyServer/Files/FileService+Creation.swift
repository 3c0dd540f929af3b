import ParleyCore
import ParleyFiles
import ParleyStore
import Synchronization

/// Creating uploads: rules 1 and 7 of ``FileService``.
extension FileService {
    /// Creates an upload (rule 1).
    func create(owner: UserID, length: Int64, metadata: TusHeaders.Metadata, now: Timestamp) async throws -> StoredUpload {
        let upload = try plan(owner: owner, length: length, metadata: metadata, now: now)
        try await record(upload, now: now)
        return upload
    }

    /// An upload within the size limit and its owner's rate, not yet recorded (rule 1).
    func plan(owner: UserID, length: Int64, metadata: TusHeaders.Metadata, now: Timestamp) throws -> StoredUpload {
        guard length <= configuration.maxUploadBytes else {
            throw ParleyError(.uploadTooLarge, "A file may have at most \(ByteCountText.text(configuration.maxUploadBytes)).")
        }
        if let wait = limiter.acquire(owner.rawValue) {
            throw ParleyError(.rateLimited, "Too many uploads; try again in \(wait) s.", retryAfter: wait)
        }
        return StoredUpload(
            id: .random(), owner: owner, name: Attachments.cleanName(metadata.filename ?? ""), length: length, sha256: metadata.sha256,
            createdAt: now, expiresAt: now.adding(seconds: configuration.uploadLifetimeSeconds), keepsMetadata: metadata.original)
    }

    /// Rule 7's look before the bytes: whether the owner's quota has room for `upload`, counting
    /// their creations whose bytes are arriving on this node (so many at once cannot each pass
    /// alone); holds its room until ``release(_:)``.
    func reserve(_ upload: StoredUpload) async throws {
        let recorded = try await store.uploadedBytes(of: upload.owner)
        try arriving.withLock { arriving in
            guard recorded + arriving[upload.owner, default: 0] + upload.length <= configuration.quotaBytes else {
                throw ParleyError(StoreError.quotaExceeded(limit: configuration.quotaBytes))
            }
            arriving[upload.owner, default: 0] += upload.length
        }
    }

    /// Gives back what ``reserve(_:)`` held, once the upload is recorded or abandoned.
    func release(_ upload: StoredUpload) {
        arriving.withLock { arriving in
            let left = arriving[upload.owner, default: 0] - upload.length
            arriving[upload.owner] = left > 0 ? left : nil
        }
    }

    /// Records a planned upload, within its owner's quota.
    func record(_ upload: StoredUpload, now: Timestamp) async throws {
        let new = NewUpload(
            id: upload.id, owner: upload.owner, name: upload.name, length: upload.length, sha256: upload.sha256, expiresAt: upload.expiresAt,
            keepsMetadata: upload.keepsMetadata)
        try await store.createUpload(new, quota: configuration.quotaBytes, now: now)
    }

    /// Removes what a failed creation-with-upload left: its record, if made, and its staged bytes.
    func abandon(_ id: UploadID, owner: UserID) async {
        digests.forget(id)
        try? await store.deleteUpload(id, owner: owner)
        try? await blobs.deleteStaged(id.rawValue)
    }
}
