import Crypto
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import ParleyCore
import ParleyFiles
import ParleyStore

/// Opens the blob store a configuration names and the services on it, at start.
enum FileStorageSetup {
    /// The file service, its blob store checked: in a cluster (`clustered`) every node must reach
    /// the same blobs, so a local directory that another node does not share refuses to start.
    static func make(
        _ configuration: FileConfiguration, store: any ParleyStore, clustered: Bool,
        now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }, logger: Logger
    ) async throws -> FileService {
        let blobs = try openBlobStore(configuration.blobStore, logger: logger)
        if clustered, let local = blobs as? LocalBlobStore { try await checkShared(local, store: store) }
        let key = try await store.sharedSecret(
            named: FileLinks.secretName, orStore: LowercaseHex.string(Array(SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) })))
        let links = FileLinks(key: SymmetricKey(data: Data(key.utf8)), lifetimeSeconds: configuration.linkLifetimeSeconds)
        return FileService(store: store, blobs: blobs, configuration: configuration, links: links, now: now, logger: logger)
    }

    static func openBlobStore(_ location: String?, logger: Logger) throws -> any BlobStore {
        guard let location else {
            let directory = NSTemporaryDirectory() + "parley-files-\(UUID().uuidString)"
            logger.notice("Files are kept in a temporary directory; set --files to keep them", metadata: ["directory": "\(directory)"])
            return try LocalBlobStore(directory: directory)
        }
        if location.hasPrefix("s3://") {
            do {
                return S3BlobStore(location: try S3Location(location))
            } catch {
                throw FileStorageError("--files: \(error)")
            }
        }
        return try LocalBlobStore(directory: location)
    }

    /// The directory's own id (a file in it) must be the one the database remembers, which the
    /// first node stored: a node with a directory of its own finds another id there, or none.
    static func checkShared(_ blobs: LocalBlobStore, store: any ParleyStore) async throws {
        let path = blobs.root + "/.parley-blob-store-id"
        // Made once, exclusively: two nodes starting together on one directory read the same id.
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 {
            let id = UUID().uuidString.lowercased()
            _ = id.withCString { write(fd, $0, strlen($0)) }
            fsync(fd)
            close(fd)
        }
        var mine = ""
        for _ in 0..<50 where mine.isEmpty {  // another node may be writing it this instant
            mine = ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            if mine.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
        }
        guard !mine.isEmpty else { throw FileStorageError("Cannot read or make \(path).") }
        let shared = try await store.sharedSecret(named: "blob-store-id", orStore: mine)
        guard shared == mine else {
            throw FileStorageError(
                "This node's file directory (\(blobs.root)) is not the one the other nodes of the cluster use: every node must reach the same "
                    + "files. Share that directory between the nodes (NFS, a mounted volume) or use an S3-compatible store (--files s3://…).")
        }
    }
}

/// A blob store that cannot be used; the message says what to change.
struct FileStorageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
