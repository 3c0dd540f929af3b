import Crypto
import NIOCore
import ParleyCore
@testable import ParleyServer
import Testing

/// The rules of ``UploadDigests``: a file hashed as it arrives, or not at all.
@Suite struct UploadDigestTests {
    static func digest(_ parts: [[UInt8]]) -> [UInt8] {
        var hash = SHA256()
        for part in parts { hash.update(data: part) }
        return Array(hash.finalize())
    }

    static func feed(_ start: SHA256, _ bytes: [UInt8]) async throws -> RunningHash {
        let running = RunningHash(start)
        let body = HashingSequence(
            base: AsyncStream {
                $0.yield(ByteBuffer(bytes: bytes)); $0.finish()
            }, hashes: [running])
        for try await _ in body {}
        return running
    }

    @Test func anAppendGoesOnOnlyFromADigestKeptAtItsOffset() async throws {
        let digests = UploadDigests(capacity: 10)
        let id = UploadID.random()
        let first = try await Self.feed(try #require(digests.take(id, at: 0)), [1, 2, 3])
        #expect(first.count == 3)
        digests.keep(id, first.state, at: 3)
        #expect(digests.take(id, at: 5) == nil, "an append elsewhere gets none")
        #expect(digests.take(id, at: 3) == nil, "and the kept one is gone with it: the store hashes at commit")
        digests.keep(id, first.state, at: 3)
        let second = try await Self.feed(try #require(digests.take(id, at: 3)), [4, 5])
        #expect(second.digest() == Self.digest([[1, 2, 3], [4, 5]]))
        #expect(digests.take(id, at: 5) == nil, "taken by the append that ran: rule 2")
    }

    @Test func anAppendAtZeroStartsAfreshAndForgetRemoves() throws {
        let digests = UploadDigests(capacity: 10)
        let id = UploadID.random()
        digests.keep(id, SHA256(), at: 7)
        let fresh = try #require(digests.take(id, at: 0))
        #expect(Array(fresh.finalize()) == Self.digest([]))
        digests.keep(id, SHA256(), at: 7)
        digests.forget(id)
        #expect(digests.take(id, at: 7) == nil)
    }

    @Test func theDigestsStayWithinTheirCapacity() {
        let digests = UploadDigests(capacity: 3)
        let ids = (0..<5).map { _ in UploadID.random() }
        for id in ids { digests.keep(id, SHA256(), at: 1) }
        #expect(digests.count == 3)
        #expect(digests.take(ids[4], at: 1) != nil, "the newest is kept; older ones make room")
    }

    @Test func aBodyFeedsEveryHashItPassesThrough() async throws {
        let chunk = RunningHash(), file = RunningHash()
        let parts: [[UInt8]] = [[9, 9], [1], [2, 3, 4]]
        let body = HashingSequence(
            base: AsyncStream {
                for part in parts { $0.yield(ByteBuffer(bytes: part)) }; $0.finish()
            }, hashes: [chunk, file])
        var passed: [UInt8] = []
        for try await buffer in body { passed += buffer.readableBytesView }
        #expect(passed == parts.flatMap { $0 })
        #expect(chunk.digest() == Self.digest(parts) && file.digest() == Self.digest(parts) && file.count == 6)
    }
}
