import Logging
import ParleyCore
import ParleyFiles
import ParleyStore
import ServiceLifecycle

/// Removes what no message needs (docs/protocol.md "Files"), every
/// ``FileConfiguration/collectIntervalSeconds``:
/// 1. uploads no message claimed in time, with their staged bytes;
/// 2. stagings older than any upload can be (left by a crash);
/// 3. blobs an upload stopped naming (a deleted message's, an expired upload's), once no upload
///    names them and they were not stored again in the last ``candidateGraceSeconds`` (the same
///    bytes uploaded anew name the blob again a moment after storing it);
/// 4. any other blob no upload names that is older than ``FileConfiguration/blobGraceSeconds``
///    (a crash between storing a blob and recording it).
struct FileCollector: Service {
    let store: any ParleyStore
    let blobs: any BlobStore
    let configuration: FileConfiguration
    let logger: Logger

    static let candidateGraceSeconds = 120.0
    static let batch = 500

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                let report = try await collect(now: .now())
                if report.total > 0 { logger.info("Collected files", metadata: report.metadata) }
            } catch is CancellationError {
                return  // the server is stopping (or failed to start): nothing failed
            } catch {
                logger.warning("File collection failed", metadata: ["error": "\(error)"])
            }
            try? await cancelWhenGracefulShutdown {
                try await Task.sleep(for: .milliseconds(Int64(configuration.collectIntervalSeconds * 1000)))
            }
        }
    }

    struct Report: Equatable {
        var uploads = 0, stagings = 0, blobs = 0
        var total: Int { uploads + stagings + blobs }
        var metadata: Logger.Metadata { ["uploads": "\(uploads)", "stagings": "\(stagings)", "blobs": "\(blobs)"] }
    }

    func collect(now: Timestamp) async throws -> Report {
        var report = Report()
        let seconds = Double(now.milliseconds) / 1000
        let removed = try await store.removeExpiredUploads(try await store.expiredUploads(now: now, limit: Self.batch), now: now)
        for id in removed { try await blobs.deleteStaged(id.rawValue) }
        report.uploads = removed.count
        for upload in try await blobs.staged(olderThan: seconds - configuration.uploadLifetimeSeconds - configuration.blobGraceSeconds) {
            try await blobs.deleteStaged(upload)
            report.stagings += 1
        }
        let candidates = try await store.blobCandidates(limit: Self.batch)
        let named = try await store.referencedBlobs(candidates)
        var done: [String] = []
        for blob in candidates {
            guard !named.contains(blob), let key = BlobKey(sha256: blob) else {
                done.append(blob)
                continue
            }
            guard let modified = try await blobs.modified(key) else {
                done.append(blob)
                continue
            }
            guard modified < seconds - Self.candidateGraceSeconds else { continue }
            try await blobs.delete(key)
            done.append(blob)
            report.blobs += 1
        }
        try await store.dropBlobCandidates(done)
        let old = try await blobs.blobs(olderThan: seconds - configuration.blobGraceSeconds)
        for start in stride(from: 0, to: old.count, by: Self.batch) {
            let keys = Array(old[start..<min(start + Self.batch, old.count)])
            let stillNamed = try await store.referencedBlobs(keys.map(\.sha256))
            for key in keys where !stillNamed.contains(key.sha256) {
                try await blobs.delete(key)
                report.blobs += 1
            }
        }
        return report
    }
}
