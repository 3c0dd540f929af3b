import NIOCore

/// Where file bytes live (docs/protocol.md "Files"): a local directory or an S3-compatible service.
/// Every backend passes the same conformance suite (`BlobStoreConformance`).
///
/// Rules:
/// 1. An upload is first *staged* under its upload id: bytes are appended at the staged size and
///    never anywhere else (a resumed upload continues from ``stagedSize(_:)``); what an append
///    stored before its body was cut off stays stored.
/// 2. ``commitStaged(_:hashed:)`` stores the staged bytes under their sha256 (the blob's key); the
///    same bytes staged twice make one blob, and committing a staging again gives the same blob.
///    The staging stays until ``deleteStaged(_:)``: the caller records the blob first, so a crash
///    in between leaves the bytes to commit again rather than an upload that lost them. A caller
///    that hashed every byte as it was appended passes that digest, and the store does not read
///    the bytes back to hash them again (it checks the staged size against it).
/// 3. A stored blob never changes; ``delete(_:)`` removes it, and reads of it then fail with
///    ``BlobStoreError/notFound``.
/// 4. ``blobs(olderThan:)`` and ``staged(olderThan:)`` list what the garbage collector may look at:
///    blobs stored (or stored again) and stagings last written before the date.
public protocol BlobStore: Sendable {
    /// How many bytes are staged for `upload` (0 when none).
    func stagedSize(_ upload: String) async throws -> Int64
    /// Appends `body` to the staging of `upload`, which must hold exactly `offset` bytes, never
    /// letting it grow past `limit`; returns the staged size afterwards.
    /// - Throws: ``BlobStoreError/offsetMismatch(staged:)``, ``BlobStoreError/tooLarge(limit:)``
    ///   (what fit is kept), ``BlobStoreError/busy`` (another append to it is under way), or the
    ///   body's own error (what arrived before it is kept).
    func appendStaged<Body: AsyncSequence>(_ upload: String, at offset: Int64, limit: Int64, body: Body) async throws -> Int64
    where Body.Element == ByteBuffer
    /// Cuts the staging of `upload` back to `size` bytes (a chunk whose checksum failed is dropped).
    func truncateStaged(_ upload: String, to size: Int64) async throws
    /// Moves the staged bytes of `upload` into a blob under their sha256: `hashed`'s key when given
    /// (the caller's digest of every staged byte; it must name their size), else hashed here.
    /// - Throws: ``BlobStoreError/nothingStaged``, or ``BlobStoreError/storage(_:)`` when the staged
    ///   size is not `hashed`'s.
    func commitStaged(_ upload: String, hashed: StoredBlob?) async throws -> StoredBlob
    /// Forgets the staged bytes of `upload` (nothing when there are none).
    func deleteStaged(_ upload: String) async throws
    /// The blob's size, or nil when there is no such blob.
    func size(of key: BlobKey) async throws -> Int64?
    /// When the blob was last stored (seconds since 1970), or nil when there is no such blob.
    func modified(_ key: BlobKey) async throws -> Double?
    /// The bytes of `range` (the whole blob when nil), in chunks. - Throws: ``BlobStoreError/notFound``.
    func read(_ key: BlobKey, range: Range<Int64>?) async throws -> BlobBody
    /// Removes the blob (nothing when there is none).
    func delete(_ key: BlobKey) async throws
    /// Keys of blobs stored before `date` (seconds since 1970).
    func blobs(olderThan date: Double) async throws -> [BlobKey]
    /// Upload ids whose staging was last written before `date` (seconds since 1970).
    func staged(olderThan date: Double) async throws -> [String]
}

extension BlobStore {
    /// Moves the staged bytes of `upload` into a blob under their sha256, hashing them here.
    public func commitStaged(_ upload: String) async throws -> StoredBlob { try await commitStaged(upload, hashed: nil) }
}

/// A blob's content address: the lowercase hex sha256 of its bytes.
public struct BlobKey: Hashable, Sendable, CustomStringConvertible {
    public let sha256: String

    /// nil unless `sha256` is 64 lowercase hex digits (a key never names a path of its own choosing).
    public init?(sha256: String) {
        guard sha256.utf8.count == 64, sha256.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else { return nil }
        self.sha256 = sha256
    }

    public var description: String { sha256 }
}

/// What ``BlobStore/commitStaged(_:)`` stored.
public struct StoredBlob: Hashable, Sendable {
    public var key: BlobKey
    public var size: Int64

    public init(key: BlobKey, size: Int64) {
        self.key = key
        self.size = size
    }
}

/// A blob's bytes on their way: `size` of them (the range's length), in chunks.
public struct BlobBody: Sendable {
    public var size: Int64
    public var chunks: AsyncThrowingStream<ByteBuffer, any Error>

    public init(size: Int64, chunks: AsyncThrowingStream<ByteBuffer, any Error>) {
        self.size = size
        self.chunks = chunks
    }
}

public enum BlobStoreError: Error, Equatable, Sendable {
    /// The append's offset is not the staged size (the client must ask again where to go on).
    case offsetMismatch(staged: Int64)
    /// The staging would grow past the limit.
    case tooLarge(limit: Int64)
    case notFound
    /// Another append to the same staging is under way.
    case busy
    /// Nothing is staged under that upload id.
    case nothingStaged
    /// The upload id is not a plain identifier (letters, digits, `-`, `_`; 1–64 characters).
    case invalidUploadID
    /// The storage refused or failed (a message safe to log, never shown to clients).
    case storage(String)
}

extension BlobStoreError {
    /// Upload ids become file and object names: only plain identifiers pass.
    static func check(_ upload: String) throws {
        guard (1...64).contains(upload.utf8.count),
            upload.utf8.allSatisfy({ (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) || $0 == 45 || $0 == 95 })
        else { throw BlobStoreError.invalidUploadID }
    }
}
