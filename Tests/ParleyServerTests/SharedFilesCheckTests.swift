import Foundation
import Logging
import ParleyFiles
import ParleyPostgres
import ParleyTestSupport
import Testing

@testable import ParleyServer

/// A cluster's nodes must reach the same files: a node whose local directory is not the one the
/// others use refuses to start (docs/deployment.md "Files").
@Suite struct SharedFilesCheckTests {
    @Test func nodesOnOneDirectoryStartAndANodeWithItsOwnRefuses() async throws {
        let url = try DatabaseURL(try await PostgresTestServer.freshDatabaseAsync())
        let first = try await PostgresStore.connect(url, poolSize: 2, logger: Logger(label: "test"))
        let second = try await PostgresStore.connect(url, poolSize: 2, logger: Logger(label: "test"))
        let shared = NSTemporaryDirectory() + "parley-shared-\(UUID().uuidString)/files"
        // Two nodes starting at the same moment on one (new) directory agree on its id.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for store in [first, second] {
                group.addTask { try await FileStorageSetup.checkShared(try LocalBlobStore(directory: shared), store: store) }
            }
            try await group.waitForAll()
        }
        let own = NSTemporaryDirectory() + "parley-own-\(UUID().uuidString)"
        await #expect(throws: FileStorageError.self) {
            try await FileStorageSetup.checkShared(try LocalBlobStore(directory: own), store: second)
        }
        try await first.close()
        try await second.close()
    }
}
