import Foundation
import GRDB
import ParleyCore
import ParleyStore

/// The embedded default backend: one SQLite file in WAL mode, one writer, concurrent readers.
///
/// Every write is one transaction; with ``Durability/full`` (the default) a commit is on disk
/// before the call returns, which is what lets the server acknowledge a send (guarantee 3).
public final class SQLiteStore: ParleyStore, Sendable {
    public enum Durability: String, Sendable, CaseIterable {
        /// fsync on every commit: survives power loss.
        case full
        /// fsync at checkpoints only: survives a process crash, may lose the last commits on power loss.
        case normal
    }

    let pool: DatabasePool
    /// Sends, receipts and conversation creation go through here: one commit per batch.
    let batcher: GroupCommitWriter

    /// Opens (creating if needed) and migrates the database at `path`.
    public init(path: String, durability: Durability = .full) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL")")
            try db.execute(sql: "PRAGMA foreign_keys = ON")
            // 64 MiB page cache and memory-mapped reads per connection: hot pages stay in memory
            // instead of being re-read with pread on every transaction.
            try db.execute(sql: "PRAGMA cache_size = -65536")
            try db.execute(sql: "PRAGMA mmap_size = 268435456")
        }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        pool = try DatabasePool(path: path, configuration: configuration)
        try SQLiteSchema.migrator.migrate(pool)
        batcher = GroupCommitWriter(pool: pool)
    }

    public func ping() async throws {
        _ = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
    }

    public func close() async throws {
        try pool.close()
    }
}
