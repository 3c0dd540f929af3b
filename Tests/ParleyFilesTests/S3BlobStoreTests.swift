import NIOCore
import Testing

@testable import ParleyFiles

/// What the S3 store does beyond the conformance suite: parts, multipart uploads, pages, the
/// refresh of a blob stored again, conditional parts, and S3's refusals. On moto (``S3TestStore``).
@Suite struct S3BlobStoreTests {
    typealias Conformance = BlobStoreConformanceTests

    @Test func aLargeUploadIsStagedInPartsAndCommittedThroughAMultipartUpload() async throws {
        let store = try await S3TestStore.make()
        let data = Conformance.bytes(20 << 20, seed: 5)
        let mib = 1 << 20
        _ = try await store.appendStaged("big", at: 0, limit: 1 << 30, body: Conformance.chunks(Array(data[..<(12 * mib)]), size: 100_000))
        let rest = Conformance.chunks(Array(data[(12 * mib)...]), size: mib)
        #expect(try await store.appendStaged("big", at: Int64(12 * mib), limit: 1 << 30, body: rest) == 20 << 20)
        // Whole parts of 8 MiB as they filled, the rest of each append in a shorter one.
        #expect(try await store.parts("big").map(\.size) == [8 << 20, 4 << 20, 8 << 20])
        let blob = try await store.commitStaged("big")
        #expect(blob == StoredBlob(key: BlobKey(sha256: Conformance.hex(data))!, size: 20 << 20))
        #expect(try await store.parts("big").count == 3, "the parts stay until the staging is deleted")
        try await store.deleteStaged("big")
        #expect(try await store.parts("big").isEmpty)
        #expect(try await store.staged(olderThan: 4_102_444_800).isEmpty)
        let stored = try await Conformance.readAll(store, blob.key)
        #expect(stored.count == data.count)
        #expect(Conformance.hex(stored) == blob.key.sha256)
        let across = Int64(8 * mib - 10)..<Int64(8 * mib + 10)
        #expect(try await Conformance.readAll(store, blob.key, range: across) == Array(data[(8 * mib - 10)..<(8 * mib + 10)]))
        #expect(try await Conformance.readAll(store, blob.key, range: Int64(20 * mib - 3)..<Int64(20 * mib)) == Array(data.suffix(3)))
        #expect(try await Conformance.readAll(store, blob.key, range: 5..<5).isEmpty)
        await #expect(throws: BlobStoreError.notFound) { try await store.read(blob.key, range: Int64(20 * mib - 3)..<Int64(20 * mib + 1)) }
        await #expect(throws: BlobStoreError.notFound) { try await store.read(blob.key, range: Int64(20 * mib + 1)..<Int64(20 * mib + 1)) }
    }

    /// Rule 4: the collector's grace starts again when the same bytes are committed again. A blob
    /// of one part is PUT again; a larger one is copied onto itself (its bytes are not sent again).
    @Test(arguments: [1000, 9 << 20])
    func committingTheSameBytesAgainRenewsTheBlobsTime(size: Int) async throws {
        let store = try await S3TestStore.make()
        let data = Conformance.bytes(size, seed: 9)
        _ = try await store.appendStaged("first", at: 0, limit: Int64(size), body: Conformance.chunks(data, size: 1 << 20))
        let blob = try await store.commitStaged("first")
        let before = try #require(try await store.modified(blob.key))
        try await Task.sleep(for: .milliseconds(1100))  // S3's times have whole seconds
        _ = try await store.appendStaged("second", at: 0, limit: Int64(size), body: Conformance.chunks(data, size: 1 << 20))
        #expect(try await store.commitStaged("second") == blob)
        let after = try #require(try await store.modified(blob.key))
        #expect(after > before)
        #expect(try await store.blobs(olderThan: before + 0.5).isEmpty)
        try await store.deleteStaged("second")
        #expect(try await store.stagedSize("second") == 0)
        #expect(try await Conformance.readAll(store, blob.key) == data)
    }

    @Test func listingsGoOnPageAfterPage() async throws {
        let store = try await S3TestStore.make(pageSize: 2)
        for upload in 0..<5 {
            for step in 0..<3 {
                let bytes = Conformance.bytes(10, seed: UInt8(upload * 3 + step))
                _ = try await store.appendStaged("p\(upload)", at: Int64(step * 10), limit: 100, body: Conformance.chunks(bytes, size: 10))
            }
        }
        #expect(try await store.staged(olderThan: 4_102_444_800) == ["p0", "p1", "p2", "p3", "p4"])
        #expect(try await store.parts("p3").map(\.offset) == [0, 10, 20])
        #expect(try await store.stagedSize("p3") == 30)
        var keys: Set<BlobKey> = []
        for upload in 0..<5 {
            keys.insert(try await store.commitStaged("p\(upload)").key)
            try await store.deleteStaged("p\(upload)")
        }
        #expect(Set(try await store.blobs(olderThan: 4_102_444_800)) == keys)
        #expect(try await store.client.list(store.location.prefix, pageSize: 2).count == 5)
    }

    /// Two appends at one offset (say, on two nodes): the one whose part comes second is refused.
    @Test func ofTwoAppendsAtOneOffsetTheSecondPartIsRefused() async throws {
        let store = try await S3TestStore.make()
        let (started, didStart) = AsyncStream<Void>.makeStream()
        let (feed, first) = AsyncStream<ByteBuffer>.makeStream()
        first.yield(ByteBuffer(bytes: [1, 1, 1]))
        let slow = Task { try await store.appendStaged("both", at: 0, limit: 100, body: Announcing(base: feed, started: didStart)) }
        for await _ in started { break }  // it has listed the staging and holds its first bytes
        #expect(try await store.appendStaged("both", at: 0, limit: 100, body: Conformance.chunks([2, 2, 2, 2, 2], size: 5)) == 5)
        first.finish()
        await #expect(throws: BlobStoreError.busy) { try await slow.value }
        let blob = try await store.commitStaged("both")
        #expect(try await Conformance.readAll(store, blob.key) == [2, 2, 2, 2, 2])
    }

    @Test func aCutInsideAPartKeepsItsFirstBytes() async throws {
        let store = try await S3TestStore.make()
        let data = Conformance.bytes(30_000, seed: 4)
        for start in stride(from: 0, to: 30_000, by: 10_000) {
            _ = try await store.appendStaged("cut", at: Int64(start), limit: 1 << 20, body: Conformance.chunks(Array(data[start..<start + 10_000]), size: 4096))
        }
        try await store.truncateStaged("cut", to: 15_000)
        #expect(try await store.parts("cut").map(\.size) == [10_000, 5000])
        try await store.truncateStaged("cut", to: 20_000)  // past the end: nothing
        #expect(try await store.stagedSize("cut") == 15_000)
        _ = try await store.appendStaged("cut", at: 15_000, limit: 1 << 20, body: Conformance.chunks(Array(data[15_000...]), size: 7000))
        #expect(try await Conformance.readAll(store, try await store.commitStaged("cut").key) == data)
        try await store.deleteStaged("cut")

        _ = try await store.appendStaged("zero", at: 0, limit: 100, body: Conformance.chunks([1, 2, 3], size: 3))
        try await store.truncateStaged("zero", to: 0)
        #expect(try await store.stagedSize("zero") == 0)
        #expect(try await store.staged(olderThan: 4_102_444_800) == ["zero"])  // still there, empty
        _ = try await store.appendStaged("zero", at: 0, limit: 100, body: Conformance.chunks([4, 5], size: 2))
        #expect(try await Conformance.readAll(store, try await store.commitStaged("zero").key) == [4, 5])
    }

    @Test func failuresSayTheOperationTheStatusAndTheCodeOnly() async throws {
        let key = BlobKey(sha256: String(repeating: "a", count: 64))!
        let missing = try await S3TestStore.make(creatingBucket: false)
        await #expect(throws: BlobStoreError.storage("S3 ListObjectsV2 answered 404 NoSuchBucket")) { try await missing.stagedSize("u") }
        // A missing bucket is a broken store, not a missing blob.
        await #expect(throws: BlobStoreError.storage("S3 GetObject answered 404 NoSuchBucket")) { try await missing.read(key, range: nil) }
        let store = try await S3TestStore.make()
        await #expect(throws: BlobStoreError.notFound) { try await store.read(key, range: 0..<1) }
        #expect(try await store.modified(key) == nil)
        try await store.createBucket()  // ours already: fine
    }

    /// moto's second server checks every signature as S3 does (see ``MotoTestServer`` for why the
    /// shared one does not): every kind of request the store sends, signed by ``SigV4Signer``.
    @Test func aServerThatChecksSignaturesTakesOurs() async throws {
        let store = try await S3TestStore.make(verifying: true)  // CreateBucket
        // Query values escaped (moto's check decodes more than `/` before it compares: `;` `,` `*` too).
        #expect(try await store.client.list("", startAfter: "a+b=c d&e%f#g").isEmpty)
        let data = Conformance.bytes(9 << 20, seed: 11)
        var writer = S3BlobStore.PartWriter(store: store, upload: "m", written: 0, replacing: false)
        try await writer.append(ByteBuffer(bytes: data))  // PutObject, If-None-Match signed too
        try await writer.flush()
        let parts = [
            S3BlobStore.Part(key: store.partKey("m", at: 0), offset: 0, size: 8 << 20),
            S3BlobStore.Part(key: store.partKey("m", at: 8 << 20), offset: 8 << 20, size: 1 << 20),
        ]
        let key = BlobKey(sha256: Conformance.hex(data))!
        try await store.uploadMultipart(parts, as: key, size: Int64(data.count), upload: "m")  // GetObject, the multipart calls
        #expect(try await store.client.list("", pageSize: 1).count == 3)  // continuation tokens
        #expect(try await store.size(of: key) == Int64(data.count))  // HeadObject
        try await store.refresh(key)  // CopyObject, with x-amz-copy-source
        #expect(try await Conformance.readAll(store, key, range: 100..<200) == Array(data[100..<200]))  // GetObject with a Range
        try await store.delete(key)  // DeleteObject
        #expect(try await store.size(of: key) == nil)

        let wrong = try await S3TestStore.make(verifying: true, secretKey: "not-the-secret", creatingBucket: false)
        await #expect(throws: BlobStoreError.storage("S3 ListObjectsV2 answered 403 SignatureDoesNotMatch")) { try await wrong.client.list("") }
    }
}

/// A body that says when its first chunk was taken.
struct Announcing: AsyncSequence, Sendable {
    let base: AsyncStream<ByteBuffer>
    let started: AsyncStream<Void>.Continuation

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<ByteBuffer>.AsyncIterator
        let started: AsyncStream<Void>.Continuation

        mutating func next() async -> ByteBuffer? {
            let chunk = await base.next()
            started.yield()
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator(), started: started) }
}
