import Crypto
import NIOCore
import ParleyCore

/// A photo's metadata taken out before anyone else can download it (docs/security.md "Files"): a
/// phone's photo says where it was taken, and a profile photo is served without a token.
///
/// Rules:
/// 1. Only JPEG, PNG and WebP are looked at (``types``); what ``ImageMetadataWalker`` finds is
///    blanked in place, so the file keeps its size, its pixels and its orientation.
/// 2. The blanked bytes are staged under `staging` and committed as a blob of their own; the
///    original blob is left to the collector (nothing names it once the upload records the new one).
/// 3. The same bytes give the same result, so a completion that runs again (after a crash, on
///    another node) stores the same blob.
public enum ImageMetadataScrub {
    public static let types: Set<String> = ["image/jpeg", "image/png", "image/webp"]

    /// The blob without its metadata, or nil when it had none.
    public static func scrub(_ blob: StoredBlob, in blobs: any BlobStore, staging: String) async throws -> StoredBlob? {
        var walker = ImageMetadataWalker()
        for try await chunk in try await blobs.read(blob.key, range: nil).chunks {
            walker.feed(chunk.readableBytesView)
            if walker.done { break }
        }
        guard !walker.patches.isEmpty else { return nil }
        try await blobs.deleteStaged(staging)
        let source = try await blobs.read(blob.key, range: nil)
        // Hashed as it is written, so the commit need not read it back.
        let digest = PatchedChunks.Digest()
        let staged = try await blobs.appendStaged(
            staging, at: 0, limit: blob.size, body: PatchedChunks(base: source.chunks, patches: walker.patches, digest: digest))
        let hashed = BlobKey(sha256: LowercaseHex.string(Array(digest.hash.finalize()))).map { StoredBlob(key: $0, size: staged) }
        let scrubbed = try await blobs.commitStaged(staging, hashed: hashed)
        try? await blobs.deleteStaged(staging)
        return scrubbed
    }

    /// The patches `bytes` would get (for tests and tools).
    public static func patches(of bytes: [UInt8]) -> [MetadataPatch] {
        var walker = ImageMetadataWalker()
        walker.feed(bytes)
        return walker.patches
    }

    /// `bytes` with `patches` applied.
    public static func applying(_ patches: [MetadataPatch], to bytes: [UInt8]) -> [UInt8] {
        var out = bytes
        for patch in patches {
            for index in 0..<patch.length where Int(patch.offset) + index < out.count { out[Int(patch.offset) + index] = patch.byte(at: index) }
        }
        return out
    }
}

/// A blob's chunks with patches written over them as they pass (and hashed, when given a digest).
struct PatchedChunks: AsyncSequence {
    typealias Element = ByteBuffer
    let base: AsyncThrowingStream<ByteBuffer, any Error>
    let patches: [MetadataPatch]
    var digest: Digest? = nil

    /// The SHA-256 of what passed, read once the sequence has ended.
    final class Digest: @unchecked Sendable {
        var hash = SHA256()
    }

    func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator(), patches: patches, digest: digest) }

    struct Iterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<ByteBuffer, any Error>.AsyncIterator
        let patches: [MetadataPatch]
        let digest: Digest?
        var position: Int64 = 0

        mutating func next() async throws -> ByteBuffer? {
            guard var chunk = try await base.next() else { return nil }
            let start = position, end = position + Int64(chunk.readableBytes)
            for patch in patches where patch.offset < end && patch.offset + Int64(patch.length) > start {
                let from = Swift.max(start, patch.offset), to = Swift.min(end, patch.offset + Int64(patch.length))
                // Head, zeros and tail, each written as a span (the zeros of a large block never exist as an array).
                let spans = [(0, patch.head.count), (patch.head.count, patch.head.count + patch.zeros), (patch.head.count + patch.zeros, patch.length)]
                for (index, (lower, upper)) in spans.enumerated() {
                    let first = Swift.max(lower, Int(from - patch.offset)), last = Swift.min(upper, Int(to - patch.offset))
                    guard first < last else { continue }
                    let at = chunk.readerIndex + Int(patch.offset - start) + first
                    switch index {
                    case 0: chunk.setBytes(patch.head[first..<last], at: at)
                    case 1: chunk.setRepeatingByte(0, count: last - first, at: at)
                    default: chunk.setBytes(patch.tail[(first - lower)..<(last - lower)], at: at)
                    }
                }
            }
            position = end
            chunk.withUnsafeReadableBytes { digest?.hash.update(bufferPointer: $0) }
            return chunk
        }
    }
}
