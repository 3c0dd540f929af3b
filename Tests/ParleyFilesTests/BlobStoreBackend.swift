import Foundation
import ParleyFiles

/// The blob stores the conformance suite runs on. Each call makes a fresh, empty store.
struct BlobStoreBackend: CustomTestStringConvertible, Sendable {
    let name: String
    let make: @Sendable () async throws -> any BlobStore

    var testDescription: String { name }

    static let local = BlobStoreBackend(name: "local") {
        try LocalBlobStore(directory: NSTemporaryDirectory() + "parley-blobs-\(UUID().uuidString)")
    }

    /// A fresh bucket on moto (``S3TestStore``).
    static let s3 = BlobStoreBackend(name: "s3") { try await S3TestStore.make() }

    /// The same with a key prefix and listings of 2 keys a page, so every rule also runs through
    /// prefixed keys and continuation tokens.
    static let s3Paged = BlobStoreBackend(name: "s3, prefixed, 2 keys a page") {
        try await S3TestStore.make(prefix: "parley/files", pageSize: 2)
    }

    static let all: [BlobStoreBackend] = [local, s3, s3Paged]
}

import Testing
