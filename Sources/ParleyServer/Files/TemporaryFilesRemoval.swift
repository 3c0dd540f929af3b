import Foundation
import ServiceLifecycle

/// Removes the temporary directory that files were kept in when no location was configured (a
/// server built for tests or a demo, ``FileConfiguration/blobStore`` nil): those files die with the
/// server that wrote them, so they are not left behind either.
///
/// Added first, so it stops last: after the HTTP server, the live connections and the file
/// collector have stopped using the directory.
struct TemporaryFilesRemoval: Service {
    let directory: String

    func run() async throws {
        // Ends at graceful shutdown, or throws when the group is cancelled: either way, the end.
        try? await gracefulShutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
