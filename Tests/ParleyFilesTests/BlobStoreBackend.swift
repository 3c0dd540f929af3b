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

    static let all: [BlobStoreBackend] = [local]
}

import Testing
