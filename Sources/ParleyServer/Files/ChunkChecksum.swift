import Crypto
import Foundation
import HTTPTypes
import NIOCore
import ParleyCore
import Synchronization

/// A `PATCH`'s `Upload-Checksum` (tus checksum extension): the algorithm and the digest its chunk
/// must have. tus requires `sha1`; `md5`, `sha256` and `sha512` are offered too, as tusd does.
struct ChunkChecksum: Sendable, Equatable {
    enum Algorithm: String, CaseIterable, Sendable {
        case sha1, md5, sha256, sha512

        var digestByteCount: Int {
            switch self {
            case .sha1: Insecure.SHA1.byteCount
            case .md5: Insecure.MD5.byteCount
            case .sha256: SHA256.byteCount
            case .sha512: SHA512.byteCount
            }
        }

        func makeHash() -> any HashFunction {
            switch self {
            case .sha1: Insecure.SHA1()
            case .md5: Insecure.MD5()
            case .sha256: SHA256()
            case .sha512: SHA512()
            }
        }
    }

    /// `Tus-Checksum-Algorithm`'s value: every algorithm, comma-separated.
    static let offered = Algorithm.allCases.map(\.rawValue).joined(separator: ",")

    let algorithm: Algorithm
    let digest: [UInt8]

    /// `Upload-Checksum: <algorithm> <base64 digest>`; nil without the header.
    /// - Throws: 400 `invalid_upload` for an algorithm not offered or a digest of the wrong size.
    init?(_ fields: HTTPFields) throws {
        guard let text = fields[TusHeaders.uploadChecksum] else { return nil }
        let parts = text.split(separator: " ")
        guard parts.count == 2, let algorithm = Algorithm(rawValue: String(parts[0])) else {
            throw ParleyError(.invalidUpload, "'Upload-Checksum' must be '<algorithm> <base64>', the algorithm one of \(Self.offered).")
        }
        guard let digest = Data(base64Encoded: String(parts[1])), digest.count == algorithm.digestByteCount else {
            throw ParleyError(.invalidUpload, "The 'Upload-Checksum' value is not a base64 \(algorithm.rawValue) digest.")
        }
        self.init(algorithm: algorithm, digest: Array(digest))
    }

    init(algorithm: Algorithm, digest: [UInt8]) {
        self.algorithm = algorithm
        self.digest = digest
    }
}

/// Something a body's chunks are fed to on their way to storage (``HashingSequence``).
protocol ChunkFeed: Sendable {
    func update(_ chunk: ByteBuffer)
}

/// A chunk's digest, by its ``ChunkChecksum``'s algorithm, fed as the chunk arrives.
final class ChunkHash: ChunkFeed {
    private let hash: Mutex<any HashFunction>

    init(_ algorithm: ChunkChecksum.Algorithm) { hash = Mutex(algorithm.makeHash()) }

    func update(_ chunk: ByteBuffer) {
        chunk.withUnsafeReadableBytes { bytes in hash.withLock { $0.update(bufferPointer: bytes) } }
    }

    func digest() -> [UInt8] { hash.withLock { $0.finalize().withUnsafeBytes { Array($0) } } }
}
