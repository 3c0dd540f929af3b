import Crypto
import NIOCore
import ParleyCore
import ParleyFiles
import Testing

/// The rules of ``BlobStore``, on every backend.
@Suite struct BlobStoreConformanceTests {
    /// Byte `i` is `i · 31 + seed` (mod 256). That repeats every 256 bytes, so the period is copied
    /// whole: mapped byte by byte, a debug build's 20 MiB took both of the suite's cooperative
    /// threads for seconds, and the timing-sensitive tests beside them starved.
    static func bytes(_ count: Int, seed: UInt8 = 7) -> [UInt8] {
        let period = (0..<256).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        while bytes.count < count { bytes += period.prefix(count - bytes.count) }
        return bytes
    }

    static func hex(_ bytes: [UInt8]) -> String { LowercaseHex.string(Array(SHA256.hash(data: bytes))) }

    static func chunks(_ bytes: [UInt8], size: Int) -> AsyncStream<ByteBuffer> {
        AsyncStream { continuation in
            var start = 0
            while start < bytes.count {
                continuation.yield(ByteBuffer(bytes: bytes[start..<min(start + size, bytes.count)]))
                start += size
            }
            continuation.finish()
        }
    }

    static func readAll(_ store: any BlobStore, _ key: BlobKey, range: Range<Int64>? = nil) async throws -> [UInt8] {
        let body = try await store.read(key, range: range)
        var out: [UInt8] = []
        for try await chunk in body.chunks { out += chunk.readableBytesView }
        #expect(Int64(out.count) == body.size)
        return out
    }

    @Test(arguments: BlobStoreBackend.all)
    func stagedBytesAppendAtTheirOffsetAndCommitUnderTheirHash(backend: BlobStoreBackend) async throws {
        let store = try await backend.make()
        let data = Self.bytes(3_000_000)
        #expect(try await store.stagedSize("u1") == 0)
        #expect(try await store.appendStaged("u1", at: 0, limit: 10_000_000, body: Self.chunks(Array(data[..<1_000_000]), size: 65_536)) == 1_000_000)
        await #expect(throws: BlobStoreError.offsetMismatch(staged: 1_000_000)) {
            try await store.appendStaged("u1", at: 0, limit: 10_000_000, body: Self.chunks([1, 2, 3], size: 3))
        }
        #expect(try await store.appendStaged("u1", at: 1_000_000, limit: 10_000_000, body: Self.chunks(Array(data[1_000_000...]), size: 100_000)) == 3_000_000)
        let blob = try await store.commitStaged("u1")
        #expect(blob == StoredBlob(key: BlobKey(sha256: Self.hex(data))!, size: 3_000_000))
        #expect(try await store.stagedSize("u1") == 3_000_000, "the staging stays until the caller removes it")
        #expect(try await store.commitStaged("u1") == blob, "committed again (after a crash before its record): the same blob")
        try await store.deleteStaged("u1")
        #expect(try await store.stagedSize("u1") == 0)
        #expect(try await store.size(of: blob.key) == 3_000_000)
        #expect(try await Self.readAll(store, blob.key) == data)
        #expect(try await Self.readAll(store, blob.key, range: 999_990..<1_000_010) == Array(data[999_990..<1_000_010]))
        await #expect(throws: BlobStoreError.nothingStaged) { try await store.commitStaged("u1") }
    }

    /// Rule 2's digest given by the caller: stored under it, the size checked first. Many small
    /// chunks (a local append writes up to 64 at a time with writev, 1 MiB a flush) arrive in order.
    @Test(arguments: BlobStoreBackend.all)
    func aCommitGivenTheDigestStoresUnderItOnceTheSizeMatches(backend: BlobStoreBackend) async throws {
        let store = try await backend.make()
        let data = Self.bytes(2_500_000, seed: 11)
        #expect(try await store.appendStaged("h", at: 0, limit: 10_000_000, body: Self.chunks(Array(data[..<1_200_000]), size: 1000)) == 1_200_000)
        #expect(try await store.appendStaged("h", at: 1_200_000, limit: 10_000_000, body: Self.chunks(Array(data[1_200_000...]), size: 333)) == 2_500_000)
        let key = try #require(BlobKey(sha256: Self.hex(data)))
        await #expect(throws: BlobStoreError.self, "a digest of another size is refused, the staging kept") {
            try await store.commitStaged("h", hashed: StoredBlob(key: key, size: 2_499_999))
        }
        #expect(try await store.stagedSize("h") == 2_500_000)
        #expect(try await store.commitStaged("h", hashed: StoredBlob(key: key, size: 2_500_000)) == StoredBlob(key: key, size: 2_500_000))
        #expect(try await Self.readAll(store, key) == data)
        try await store.deleteStaged("h")
        #expect(try await Self.readAll(store, key) == data, "the blob does not go with its staging")
    }

    @Test(arguments: BlobStoreBackend.all)
    func theSameBytesMakeOneBlobAndDeletingItEndsReads(backend: BlobStoreBackend) async throws {
        let store = try await backend.make()
        let data = Self.bytes(1000, seed: 3)
        _ = try await store.appendStaged("a", at: 0, limit: 5000, body: Self.chunks(data, size: 100))
        _ = try await store.appendStaged("b", at: 0, limit: 5000, body: Self.chunks(data, size: 999))
        let first = try await store.commitStaged("a")
        let second = try await store.commitStaged("b")
        #expect(first == second)
        #expect(try await store.blobs(olderThan: 4_102_444_800).contains(first.key))  // 2100
        #expect(try await store.blobs(olderThan: 0).isEmpty)
        try await store.delete(first.key)
        try await store.delete(first.key)  // nothing left: no error
        #expect(try await store.size(of: first.key) == nil)
        await #expect(throws: BlobStoreError.notFound) { try await store.read(first.key, range: nil) }
    }

    @Test(arguments: BlobStoreBackend.all)
    func aStagingNeverGrowsPastItsLimitAndKeepsWhatFit(backend: BlobStoreBackend) async throws {
        let store = try await backend.make()
        await #expect(throws: BlobStoreError.tooLarge(limit: 1000)) {
            try await store.appendStaged("big", at: 0, limit: 1000, body: Self.chunks(Self.bytes(1500), size: 500))
        }
        #expect(try await store.stagedSize("big") == 1000)
        try await store.deleteStaged("big")
        #expect(try await store.stagedSize("big") == 0)
        #expect(try await store.staged(olderThan: 4_102_444_800).isEmpty)
    }

    @Test(arguments: BlobStoreBackend.all)
    func aBodyCutOffKeepsWhatArrivedAndTheUploadGoesOnFromThere(backend: BlobStoreBackend) async throws {
        struct Cut: Error {}
        let store = try await backend.make()
        let data = Self.bytes(200_000)
        let cut = AsyncThrowingStream<ByteBuffer, any Error> { continuation in
            continuation.yield(ByteBuffer(bytes: data[..<70_000]))
            continuation.finish(throwing: Cut())
        }
        await #expect(throws: Cut.self) { try await store.appendStaged("c", at: 0, limit: 1 << 20, body: cut) }
        let staged = try await store.stagedSize("c")
        #expect(staged == 70_000)
        #expect(try await store.staged(olderThan: 4_102_444_800) == ["c"])
        _ = try await store.appendStaged("c", at: staged, limit: 1 << 20, body: Self.chunks(Array(data[Int(staged)...]), size: 4096))
        let blob = try await store.commitStaged("c")
        #expect(blob.key.sha256 == Self.hex(data))
        #expect(try await Self.readAll(store, blob.key) == data)
    }

    @Test(arguments: BlobStoreBackend.all)
    func uploadIDsThatAreNotPlainNamesAreRefused(backend: BlobStoreBackend) async throws {
        let store = try await backend.make()
        for id in ["../x", "a/b", "", String(repeating: "a", count: 65), "x y", ".."] {
            await #expect(throws: BlobStoreError.invalidUploadID) { try await store.stagedSize(id) }
            await #expect(throws: BlobStoreError.invalidUploadID) {
                try await store.appendStaged(id, at: 0, limit: 10, body: Self.chunks([1], size: 1))
            }
        }
        #expect(BlobKey(sha256: "../../etc/passwd") == nil)
        #expect(BlobKey(sha256: String(repeating: "A", count: 64)) == nil)
    }
}

@Suite struct BlobStoreTruncateAndLockTests {
    @Test(arguments: BlobStoreBackend.all)
    func aStagingCutBackGoesOnFromTheCut(backend: BlobStoreBackend) async throws {
        let store = try await backend.make()
        let data = BlobStoreConformanceTests.bytes(50_000)
        _ = try await store.appendStaged("t", at: 0, limit: 1 << 20, body: BlobStoreConformanceTests.chunks(Array(data[..<20_000]), size: 20_000))
        _ = try await store.appendStaged(
            "t", at: 20_000, limit: 1 << 20, body: BlobStoreConformanceTests.chunks([UInt8](repeating: 9, count: 5000), size: 5000))
        try await store.truncateStaged("t", to: 20_000)
        #expect(try await store.stagedSize("t") == 20_000)
        _ = try await store.appendStaged("t", at: 20_000, limit: 1 << 20, body: BlobStoreConformanceTests.chunks(Array(data[20_000...]), size: 7000))
        let blob = try await store.commitStaged("t")
        #expect(try await BlobStoreConformanceTests.readAll(store, blob.key) == data)
    }
}
