import Crypto
import HTTPTypes
import Logging
import NIOCore
import ParleyCore
import ParleyFiles
import ParleyStore
import Synchronization

/// Uploads from creation to the server's reading of the file (docs/protocol.md "Files").
///
/// Rules (``UploadRouteTests``):
/// 1. An upload is created with its length, within the size limit and the owner's quota, at most
///    ``FileConfiguration/uploadsPerMinute`` a minute per user.
/// 2. Bytes are appended at the stored offset only, one append per upload at a time; what an
///    interrupted append delivered is kept, unless it carried an `Upload-Checksum` (rule 3).
/// 3. A chunk with an `Upload-Checksum` is kept whole and verified, or dropped whole (the offset
///    stays): when it does not match, and when its request was cut (a server killed mid-chunk
///    may keep part of it, as of any chunk).
/// 4. When the last byte arrives the file is hashed; a promised sha256 that differs removes the
///    upload. Otherwise the server reads what the file is (``FileReading``) and the upload is complete.
/// 5. The file is hashed as its bytes arrive (``UploadDigests``), so completing it does not read it
///    back: only when the appends were on this node, each from where the last one ended.
/// 6. An upload whose every byte is staged but that is not recorded complete (the server stopped
///    between the last byte and the record) is completed when its owner next asks where it stands:
///    an offset the server acknowledged is never lost to a crash.
/// 7. An upload created with its first bytes (tus creation-with-upload) is recorded only once
///    those bytes are in (``append(_:at:checksum:body:now:recording:cut:)``), its quota looked at
///    before (``reserve(_:)``, counting the owner's creations arriving on this node) and decided
///    then: a server that stops while they arrive keeps no upload its client never learned of,
///    only a staging the collector removes.
/// 8. A JPEG, PNG or WebP is stored without its metadata (place, camera, captions; the orientation
///    stays), whatever client sent it (``ImageMetadataScrub``), unless it was created as sent as it
///    was (tus metadata `original`, a photo sent as a file). The promise of rule 4 is the sent bytes'.
final class FileService: Sendable {
    let store: any ParleyStore
    let blobs: any BlobStore
    let configuration: FileConfiguration
    let links: FileLinks
    let limiter: RateLimiter
    let busy = Mutex<Set<UploadID>>([])
    /// Bytes of creations-with-upload arriving on this node, per owner (rule 7).
    let arriving = Mutex<[UserID: Int64]>([:])
    let digests = UploadDigests(capacity: 10_000)
    let logger: Logger

    init(
        store: any ParleyStore, blobs: any BlobStore, configuration: FileConfiguration, links: FileLinks,
        now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }, logger: Logger
    ) {
        self.store = store
        self.blobs = blobs
        self.configuration = configuration
        self.links = links
        self.limiter = RateLimiter(ratePerSecond: configuration.uploadsPerMinute / 60, burst: configuration.uploadsPerMinute, now: now)
        self.logger = logger
    }

    /// The owner's upload and how many of its bytes are stored.
    /// Rule 6: a whole staging not recorded complete (the server stopped in between) is completed here.
    func find(_ id: UploadID, owner: UserID) async throws -> (upload: StoredUpload, offset: Int64) {
        guard let upload = try await store.upload(id, owner: owner) else { throw ParleyError(.uploadNotFound, "No such upload.") }
        if upload.reading != nil { return (upload, upload.length) }
        let staged = try await blobs.stagedSize(id.rawValue)
        guard staged == upload.length, upload.length > 0, busy.withLock({ $0.insert(upload.id).inserted }) else { return (upload, staged) }
        defer { _ = busy.withLock { $0.remove(upload.id) } }
        // Read again now that no append here can: one may have completed it since.
        guard let current = try await store.upload(id, owner: owner) else { throw ParleyError(.uploadNotFound, "No such upload.") }
        if current.reading != nil { return (current, current.length) }
        do {
            return (try await complete(current, now: .now()), current.length)
        } catch BlobStoreError.nothingStaged {
            // Another node completed it meanwhile and removed the staging: as it recorded it.
            guard let done = try await store.upload(id, owner: owner), done.reading != nil else { return (current, 0) }
            return (done, done.length)
        }
    }

    /// Appends `body` at `offset` (rules 2–4); returns the upload and its offset afterwards.
    /// `recording`, for an upload not yet recorded (rule 7), runs once the bytes are staged and
    /// checked; if it fails, they go. A body whose connection ended throws `cut`.
    func append<Body: AsyncSequence>(
        _ upload: StoredUpload, at offset: Int64, checksum: ChunkChecksum?, body: Body, now: Timestamp,
        recording: (@Sendable () async throws -> Void)? = nil, cut: ParleyError = FileService.cut
    ) async throws -> (upload: StoredUpload, offset: Int64) where Body.Element == ByteBuffer {
        guard upload.reading == nil else { throw Self.mismatch(upload.length, complete: true) }
        guard busy.withLock({ $0.insert(upload.id).inserted }) else { throw Self.busyError }
        defer { _ = busy.withLock { $0.remove(upload.id) } }
        let before = digests.take(upload.id, at: offset)
        let file = before.map { RunningHash($0) }
        let chunk = checksum.map { ChunkHash($0.algorithm) }
        let hashing = HashingSequence(base: body, hashes: [chunk as (any ChunkFeed)?, file].compactMap { $0 })
        let staged: Int64
        do {
            staged = try await blobs.appendStaged(upload.id.rawValue, at: offset, limit: upload.length, body: hashing)
        } catch BlobStoreError.offsetMismatch(let stored) {
            throw Self.mismatch(stored)
        } catch BlobStoreError.busy {
            throw Self.busyError
        } catch BlobStoreError.tooLarge {
            try await blobs.truncateStaged(upload.id.rawValue, to: offset)
            throw ParleyError(.uploadTooLarge, "The upload was created for \(upload.length) bytes; this goes past them.")
        } catch {
            await keepWhatArrived(upload, from: offset, hashed: file, checksummed: checksum != nil, before: before)
            throw error is RequestBodyCut || error is IOError ? cut : error
        }
        if let checksum, let chunk, chunk.digest() != checksum.digest {
            try await dropChunk(upload.id, from: offset, before: before)
            throw ParleyError(.checksumMismatch, "The chunk's \(checksum.algorithm.rawValue) is not the one in 'Upload-Checksum'; it was dropped.")
        }
        if let recording {
            do { try await recording() } catch {
                try? await blobs.deleteStaged(upload.id.rawValue)
                throw error
            }
        }
        // Rule 5: the file's digest so far, when it covers every staged byte.
        let hashed = file.flatMap { $0.count == staged - offset ? $0.state : nil }
        guard staged == upload.length else {
            // Terminated while these bytes arrived (tus DELETE on another connection): they went
            // to a staging already removed, and the upload is gone.
            guard try await store.upload(upload.id, owner: upload.owner) != nil else {
                try? await blobs.deleteStaged(upload.id.rawValue)
                throw Self.terminated
            }
            if let hashed { digests.keep(upload.id, hashed, at: staged) }
            return (upload, staged)
        }
        let blob = hashed.flatMap { hash in BlobKey(sha256: LowercaseHex.string(Array(hash.finalize()))) }
        do {
            return (try await complete(upload, now: now, hashed: blob.map { StoredBlob(key: $0, size: staged) }), staged)
        } catch BlobStoreError.nothingStaged {
            throw Self.terminated
        }
    }

    /// Rules 2 and 3 for a body that ended with an error (its connection cut): what arrived stays,
    /// with its digest (rule 5) when that covers every staged byte, unless the chunk was
    /// `checksummed`: then it goes whole. If the upload was terminated meanwhile (or is not
    /// recorded: rule 7), its staging goes; a failed lookup tells neither.
    private func keepWhatArrived(_ upload: StoredUpload, from offset: Int64, hashed file: RunningHash?, checksummed: Bool, before: SHA256?) async {
        var gone = false
        do { gone = try await store.upload(upload.id, owner: upload.owner) == nil } catch {}
        if gone {
            try? await blobs.deleteStaged(upload.id.rawValue)
            return
        }
        if checksummed {
            try? await dropChunk(upload.id, from: offset, before: before)
            return
        }
        if let file, let staged = try? await blobs.stagedSize(upload.id.rawValue), staged == offset + file.count {
            digests.keep(upload.id, file.state, at: staged)
        }
    }

    /// Rule 3: the chunk staged from `offset` goes whole; the file's digest is again the one before it.
    private func dropChunk(_ id: UploadID, from offset: Int64, before: SHA256?) async throws {
        try await blobs.truncateStaged(id.rawValue, to: offset)
        if let before { digests.keep(id, before, at: offset) }
    }

    /// A body whose connection ended before it was whole.
    static let cut = ParleyError(.invalidUpload, "The request's body ended before it was whole; what arrived is kept, ask where it stands (HEAD).")

    /// A PATCH whose upload was terminated while its bytes arrived.
    static let terminated = ParleyError(.uploadNotFound, "No such upload: it was removed while this part arrived.")

    /// Rule 4: the last byte arrived; `hashed` is the file's digest when rule 5 kept it.
    func complete(_ upload: StoredUpload, now: Timestamp, hashed: StoredBlob? = nil) async throws -> StoredUpload {
        if upload.length == 0 {
            // An empty file has no bytes to stage: its staging is made empty, then stored like any other.
            _ = try await blobs.appendStaged(upload.id.rawValue, at: 0, limit: 0, body: AsyncStream<ByteBuffer> { $0.finish() })
        }
        let blob = try await blobs.commitStaged(upload.id.rawValue, hashed: hashed)
        if let promised = upload.sha256, promised != blob.key.sha256 {
            try? await store.deleteUpload(upload.id, owner: upload.owner)
            try? await blobs.deleteStaged(upload.id.rawValue)
            throw ParleyError(.checksumMismatch, "The file's SHA-256 is not the one promised in 'Upload-Metadata'; the upload was removed.")
        }
        var reading = try await FileReading.read(blob, from: blobs)
        // A photo's place, camera and captions go before anyone can download it (the original blob goes with the collector).
        if !upload.keepsMetadata, ImageMetadataScrub.types.contains(reading.mimeType),
            let scrubbed = try await ImageMetadataScrub.scrub(blob, in: blobs, staging: upload.id.rawValue + "-m")
        {
            reading.blob = scrubbed.key.sha256
        }
        let completed = try await store.completeUpload(upload.id, owner: upload.owner, reading, now: now)
        // Only now that the upload is recorded complete (rule 6; the collector removes a staging left by a crash here).
        try? await blobs.deleteStaged(upload.id.rawValue)
        return completed
    }

    /// Gives up an upload that no message carries (tus termination).
    func terminate(_ id: UploadID, owner: UserID) async throws {
        digests.forget(id)
        try await store.deleteUpload(id, owner: owner)
        try? await blobs.deleteStaged(id.rawValue)
    }

    /// `409 offset_mismatch` with where the upload stands; a `complete` one has nothing left to send.
    static func mismatch(_ stored: Int64, complete: Bool = false) -> ParleyError {
        let message = complete ? "The upload is complete (\(stored) bytes): nothing more to send." : "The upload has \(stored) bytes: continue from there."
        var error = ParleyError(.offsetMismatch, message)
        error.headers[TusHeaders.uploadOffset] = String(stored)
        return error
    }

    static let busyError = ParleyError(.uploadBusy, "Another request is appending to this upload; ask where it stands (HEAD) when it ends.")
}
