import Crypto
import NIOCore
import ParleyCore
import Synchronization

/// The sha256 of each upload's staged bytes so far, hashed as they arrived, so that completing an
/// upload does not read the file back to hash it again (``FileService`` rule 5).
///
/// Rules (``UploadDigestTests``):
/// 1. A digest is kept with the offset it covers. An append at offset 0 starts a new one; an
///    append anywhere else goes on only from a digest kept at exactly its offset (an append on
///    another node, or one cut off after storing bytes it never reported, leaves none: the store
///    then hashes the file when it is committed).
/// 2. An append owns the digest while it runs (``take(_:at:)``) and gives it back only when it
///    succeeded whole (or, for a chunk dropped for its checksum, as it was before).
/// 3. At most `capacity` digests: a new one beyond that pushes out another, whose upload is then
///    hashed at commit.
final class UploadDigests: Sendable {
    private let partials = Mutex<[UploadID: (offset: Int64, hash: SHA256)]>([:])
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    /// The digest an append at `offset` goes on from, taken out (rule 2); nil when there is none (rule 1).
    func take(_ id: UploadID, at offset: Int64) -> SHA256? {
        partials.withLock { partials in
            let partial = partials.removeValue(forKey: id)
            if offset == 0 { return SHA256() }
            return partial?.offset == offset ? partial?.hash : nil
        }
    }

    /// Keeps the digest of the first `offset` bytes of the upload.
    func keep(_ id: UploadID, _ hash: SHA256, at offset: Int64) {
        partials.withLock { partials in
            if partials.count >= capacity, partials[id] == nil, let any = partials.keys.first { partials[any] = nil }
            partials[id] = (offset, hash)
        }
    }

    func forget(_ id: UploadID) { _ = partials.withLock { $0.removeValue(forKey: id) } }

    var count: Int { partials.withLock { $0.count } }
}

/// Passes a body through, feeding each chunk to the given hashes on the way (a chunk's
/// `Upload-Checksum`, the whole file's digest).
struct HashingSequence<Base: AsyncSequence>: AsyncSequence where Base.Element == ByteBuffer {
    typealias Element = ByteBuffer
    let base: Base
    let hashes: [any ChunkFeed]

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let hashes: [any ChunkFeed]

        mutating func next() async throws -> ByteBuffer? {
            guard let chunk = try await base.next() else { return nil }
            for hash in hashes { hash.update(chunk) }
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator(), hashes: hashes) }
}

/// A SHA-256 fed chunk by chunk, counting the bytes it was fed.
final class RunningHash: ChunkFeed {
    private let hash: Mutex<(state: SHA256, count: Int64)>

    init(_ start: SHA256 = SHA256()) { hash = Mutex((start, 0)) }

    func update(_ chunk: ByteBuffer) {
        chunk.withUnsafeReadableBytes { bytes in
            hash.withLock {
                $0.state.update(bufferPointer: bytes)
                $0.count += Int64(bytes.count)
            }
        }
    }

    /// The state so far (to go on from, or to finalize).
    var state: SHA256 { hash.withLock { $0.state } }
    var count: Int64 { hash.withLock { $0.count } }

    func digest() -> [UInt8] { Array(state.finalize()) }
}
