import Crypto
import Foundation
import HTTPTypes
import ParleyCore
import Testing
@testable import ParleyServer

/// tus's checksum extension: every algorithm `OPTIONS` offers is checked (tus requires `sha1`), a
/// chunk that fails is dropped whole, and an algorithm not offered or a digest of the wrong size is
/// a 400 that keeps nothing.
@Suite struct UploadChecksumTests {
    static let digests: [String: @Sendable ([UInt8]) -> [UInt8]] = [
        "sha1": { Array(Insecure.SHA1.hash(data: $0)) }, "md5": { Array(Insecure.MD5.hash(data: $0)) },
        "sha256": { Array(SHA256.hash(data: $0)) }, "sha512": { Array(SHA512.hash(data: $0)) },
    ]

    @Test func everyOfferedAlgorithmIsChecked() async throws {
        try await TestServer.run { api in
            let ada = try await api.register("ada")
            let options = try await api.request(.options, "/v1/uploads")
            let offered = try #require(options.headers[TusHeaders.tusChecksumAlgorithm]).split(separator: ",").map(String.init)
            #expect(Set(offered) == Set(Self.digests.keys), "offered: \(offered)")
            let bytes = (0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            let location = try #require(try await api.createUpload(ada, length: bytes.count).headers[.location])
            var offset = 0
            for algorithm in offered {
                let digest = try #require(Self.digests[algorithm])
                let chunk = Array(bytes[offset..<offset + 1000])
                let wrong = try await api.patchUpload(ada, location, offset: offset, chunk, checksum: digest(chunk + [0]), algorithm: algorithm)
                #expect(wrong.status.code == 460 && wrong.errorCode == .checksumMismatch, "\(algorithm): \(wrong.status)")
                #expect(try await api.headUpload(ada, location).headers[TestAPI.uploadOffset] == String(offset), "\(algorithm): dropped whole")
                let right = try await api.patchUpload(ada, location, offset: offset, chunk, checksum: digest(chunk), algorithm: algorithm)
                #expect(right.status == .noContent, "\(algorithm): \(right.status)")
                offset += chunk.count
                #expect(right.headers[TestAPI.uploadOffset] == String(offset))
            }
            let upload = try await api.request(.get, location, token: ada.token).decode(API.Upload.self)
            #expect(upload.complete && upload.offset == Int64(bytes.count))
        }
    }

    @Test func anAlgorithmNotOfferedOrADigestOfTheWrongSizeKeepsNothing() async throws {
        try await TestServer.run { api in
            let ada = try await api.register("ada")
            let location = try #require(try await api.createUpload(ada, length: 10).headers[.location])
            let chunk = [UInt8](repeating: 1, count: 10)
            let sha1 = try #require(Self.digests["sha1"]), sha256 = try #require(Self.digests["sha256"])
            for (algorithm, digest) in [("crc32", [UInt8](repeating: 0, count: 4)), ("sha1", sha256(chunk)), ("SHA1", sha1(chunk))] {
                let refused = try await api.patchUpload(ada, location, offset: 0, chunk, checksum: digest, algorithm: algorithm)
                #expect(refused.status == .badRequest && refused.errorCode == .invalidUpload, "\(algorithm): \(refused.status)")
                #expect(try await api.headUpload(ada, location).headers[TestAPI.uploadOffset] == "0")
            }
        }
    }
}
