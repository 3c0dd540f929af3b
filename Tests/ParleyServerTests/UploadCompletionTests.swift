import Crypto
import Foundation
import Logging
import NIOCore
import ParleyCore
import ParleyFiles
import ParleySQLite
import ParleyStore
import Testing

@testable import ParleyServer

/// ``FileService`` rules 5 and 6 on a real SQLite store and a real local blob store: a file hashed
/// as it arrives, and an upload the server stopped in the middle of completing.
@Suite struct UploadCompletionTests {
    struct Setup {
        let service: FileService
        let blobs: LocalBlobStore
        let owner: UserID
    }

    static func setUp() async throws -> Setup {
        let store = try SQLiteStore(path: TestServer.temporaryDatabase(), durability: .normal)
        let blobs = try LocalBlobStore(directory: NSTemporaryDirectory() + "parley-completion-\(UUID().uuidString)")
        let service = FileService(
            store: store, blobs: blobs, configuration: FileConfiguration(), links: FileLinks(key: SymmetricKey(size: .bits256), lifetimeSeconds: 900),
            logger: Logger(label: "test"))
        let ada = try await store.createUser(NewUser(username: "ada", displayName: "Ada", passwordHash: "-"), now: .now())
        return Setup(service: service, blobs: blobs, owner: ada.id)
    }

    static func body(_ bytes: [UInt8], pieces: Int = 1000) -> AsyncStream<ByteBuffer> {
        AsyncStream { continuation in
            for start in stride(from: 0, to: bytes.count, by: pieces) {
                continuation.yield(ByteBuffer(bytes: bytes[start..<min(start + pieces, bytes.count)]))
            }
            continuation.finish()
        }
    }

    static let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
    static var hex: String { LowercaseHex.string(Array(SHA256.hash(data: bytes))) }

    /// A PATCH whose upload is terminated (tus DELETE on another connection) while its bytes arrive
    /// answers 404, whether it would have ended the upload or not; nothing of it stays staged.
    @Test(arguments: [300_000, 200_000])
    func aPartArrivingWhileItsUploadIsTerminatedIsNotFound(end: Int) async throws {
        let setup = try await Self.setUp()
        let upload = try await setup.service.create(owner: setup.owner, length: 300_000, metadata: .init(), now: .now())
        let (body, continuation) = AsyncStream<ByteBuffer>.makeStream()
        continuation.yield(ByteBuffer(bytes: Self.bytes[..<100_000]))
        let patch = Task { try await setup.service.append(upload, at: 0, checksum: nil, body: body, now: .now()) }
        // The gate: the first bytes are staged before the DELETE comes.
        for _ in 0..<2_000 where try await setup.blobs.stagedSize(upload.id.rawValue) < 100_000 { try await Task.sleep(for: .milliseconds(5)) }
        try await setup.service.terminate(upload.id, owner: setup.owner)
        continuation.yield(ByteBuffer(bytes: Self.bytes[100_000..<end]))
        continuation.finish()
        await #expect(throws: ParleyError.self) { try await patch.value }
        do {
            _ = try await patch.value
        } catch let error as ParleyError {
            #expect(error.code == .uploadNotFound)
        }
        #expect(try await setup.blobs.stagedSize(upload.id.rawValue) == 0)
        await #expect(throws: ParleyError.self) { try await setup.service.find(upload.id, owner: setup.owner) }
    }

    @Test func aFileSentInPartsIsStoredUnderItsHashAndItsStagingGoes() async throws {
        let setup = try await Self.setUp()
        let upload = try await setup.service.create(owner: setup.owner, length: 300_000, metadata: .init(sha256: Self.hex), now: .now())
        let (_, first) = try await setup.service.append(upload, at: 0, checksum: nil, body: Self.body(Array(Self.bytes[..<100_000])), now: .now())
        #expect(first == 100_000 && setup.service.digests.count == 1, "the digest so far is kept")
        // A chunk that fails its checksum leaves the digest as it was.
        let wrong = ChunkChecksum(algorithm: .sha256, digest: Array(SHA256.hash(data: [1])))
        await #expect(throws: ParleyError.self) {
            try await setup.service.append(upload, at: 100_000, checksum: wrong, body: Self.body(Array(Self.bytes[100_000..<200_000])), now: .now())
        }
        let (done, end) = try await setup.service.append(upload, at: 100_000, checksum: nil, body: Self.body(Array(Self.bytes[100_000...])), now: .now())
        #expect(end == 300_000 && done.reading?.blob == Self.hex, "the promise held, so the digest was the file's")
        #expect(setup.service.digests.count == 0)
        #expect(try await setup.blobs.stagedSize(upload.id.rawValue) == 0, "the staging goes once the upload is recorded complete")
        #expect(try await setup.blobs.size(of: BlobKey(sha256: Self.hex)!) == 300_000)
    }

    @Test(arguments: [false, true])
    func anUploadWhoseBytesAllArrivedButWasNotRecordedCompleteIsCompletedWhenAsked(committed: Bool) async throws {
        let setup = try await Self.setUp()
        let upload = try await setup.service.create(owner: setup.owner, length: 300_000, metadata: .init(sha256: Self.hex), now: .now())
        // The server stopped after the last byte was synced (and, `committed`, after the blob was stored).
        _ = try await setup.blobs.appendStaged(upload.id.rawValue, at: 0, limit: 300_000, body: Self.body(Self.bytes))
        if committed { _ = try await setup.blobs.commitStaged(upload.id.rawValue) }
        let (found, offset) = try await setup.service.find(upload.id, owner: setup.owner)
        #expect(offset == 300_000 && found.reading?.blob == Self.hex, "the acknowledged bytes were not lost")
        #expect(try await setup.blobs.stagedSize(upload.id.rawValue) == 0)
        #expect(try await setup.service.find(upload.id, owner: setup.owner).upload.reading?.blob == Self.hex)
    }
}
