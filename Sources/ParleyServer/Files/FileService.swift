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
///    interrupted append delivered is kept.
/// 3. A chunk with an `Upload-Checksum` that does not match is dropped whole (the offset stays).
/// 4. When the last byte arrives the file is hashed; a promised sha256 that differs removes the
///    upload. Otherwise the server reads what the file is (``FileReading``) and the upload is complete.
final class FileService: Sendable {
    let store: any ParleyStore
    let blobs: any BlobStore
    let configuration: FileConfiguration
    let links: FileLinks
    let limiter: RateLimiter
    let busy = Mutex<Set<UploadID>>([])
    let logger: Logger

    init(store: any ParleyStore, blobs: any BlobStore, configuration: FileConfiguration, links: FileLinks, logger: Logger) {
        self.store = store
        self.blobs = blobs
        self.configuration = configuration
        self.links = links
        self.limiter = RateLimiter(ratePerSecond: configuration.uploadsPerMinute / 60, burst: configuration.uploadsPerMinute)
        self.logger = logger
    }

    func create(owner: UserID, length: Int64, metadata: TusHeaders.Metadata, now: Timestamp) async throws -> StoredUpload {
        guard length <= configuration.maxUploadBytes else {
            throw ParleyError(.uploadTooLarge, "A file may have at most \(ByteCountText.text(configuration.maxUploadBytes)).")
        }
        if let wait = limiter.acquire(owner.rawValue) {
            throw ParleyError(.rateLimited, "Too many uploads; try again in \(wait) s.", retryAfter: wait)
        }
        let upload = NewUpload(
            id: .random(), owner: owner, name: Attachments.cleanName(metadata.filename ?? ""), length: length, sha256: metadata.sha256,
            expiresAt: now.adding(seconds: configuration.uploadLifetimeSeconds))
        try await store.createUpload(upload, quota: configuration.quotaBytes, now: now)
        return StoredUpload(
            id: upload.id, owner: owner, name: upload.name, length: length, sha256: upload.sha256, createdAt: now, expiresAt: upload.expiresAt)
    }

    /// The owner's upload and how many of its bytes are stored.
    func find(_ id: UploadID, owner: UserID) async throws -> (upload: StoredUpload, offset: Int64) {
        guard let upload = try await store.upload(id, owner: owner) else { throw ParleyError(.uploadNotFound, "No such upload.") }
        if upload.reading != nil { return (upload, upload.length) }
        return (upload, try await blobs.stagedSize(id.rawValue))
    }

    /// Appends `body` at `offset` (rules 2–4); returns the upload and its offset afterwards.
    func append<Body: AsyncSequence>(
        _ upload: StoredUpload, at offset: Int64, checksum: [UInt8]?, body: Body, now: Timestamp
    ) async throws -> (upload: StoredUpload, offset: Int64) where Body.Element == ByteBuffer {
        guard upload.reading == nil else { throw Self.mismatch(upload.length) }
        guard busy.withLock({ $0.insert(upload.id).inserted }) else { throw Self.busyError }
        defer { _ = busy.withLock { $0.remove(upload.id) } }
        let hashing = HashingSequence(base: body, hashing: checksum != nil)
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
        }
        if let checksum, hashing.digest() != checksum {
            try await blobs.truncateStaged(upload.id.rawValue, to: offset)
            throw ParleyError(.checksumMismatch, "The chunk's SHA-256 is not the one in 'Upload-Checksum'; it was dropped.")
        }
        guard staged == upload.length else { return (upload, staged) }
        return (try await complete(upload, now: now), staged)
    }

    /// Rule 4: the last byte arrived.
    func complete(_ upload: StoredUpload, now: Timestamp) async throws -> StoredUpload {
        if upload.length == 0 {
            // An empty file has no bytes to stage: its staging is made empty, then stored like any other.
            _ = try await blobs.appendStaged(upload.id.rawValue, at: 0, limit: 0, body: AsyncStream<ByteBuffer> { $0.finish() })
        }
        let blob = try await blobs.commitStaged(upload.id.rawValue)
        if let promised = upload.sha256, promised != blob.key.sha256 {
            try? await store.deleteUpload(upload.id, owner: upload.owner)
            throw ParleyError(.checksumMismatch, "The file's SHA-256 is not the one promised in 'Upload-Metadata'; the upload was removed.")
        }
        let reading = try await FileReading.read(blob, from: blobs)
        return try await store.completeUpload(upload.id, owner: upload.owner, reading, now: now)
    }

    /// Gives up an upload that no message carries (tus termination).
    func terminate(_ id: UploadID, owner: UserID) async throws {
        try await store.deleteUpload(id, owner: owner)
        try? await blobs.deleteStaged(id.rawValue)
    }

    static func mismatch(_ stored: Int64) -> ParleyError {
        var error = ParleyError(.offsetMismatch, "The upload has \(stored) bytes: continue from there.")
        error.headers[TusHeaders.uploadOffset] = String(stored)
        return error
    }

    static let busyError = ParleyError(.uploadBusy, "Another request is appending to this upload; ask where it stands (HEAD) when it ends.")
}

/// Passes a body through, hashing it on the way when asked (a chunk's `Upload-Checksum`).
struct HashingSequence<Base: AsyncSequence>: AsyncSequence where Base.Element == ByteBuffer {
    typealias Element = ByteBuffer
    let base: Base
    let hashing: Bool
    let hash = RunningHash()

    func digest() -> [UInt8] { hash.digest() }

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let hashing: Bool
        let hash: RunningHash

        mutating func next() async throws -> ByteBuffer? {
            guard let chunk = try await base.next() else { return nil }
            if hashing { hash.update(chunk) }
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator(), hashing: hashing, hash: hash) }
}

/// A SHA-256 fed chunk by chunk.
final class RunningHash: Sendable {
    private let state = Mutex<SHA256>(SHA256())

    func update(_ chunk: ByteBuffer) {
        chunk.withUnsafeReadableBytes { bytes in state.withLock { $0.update(bufferPointer: bytes) } }
    }

    func digest() -> [UInt8] { Array(state.withLock { $0.finalize() }) }
}
