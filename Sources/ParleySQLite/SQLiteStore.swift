import Foundation
import GRDB
import GRDBSQLite
import ParleyCore
import ParleyStore
import SQLiteProcessSetup
import Synchronization

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
    /// The folder of the database file (free space is checked there).
    let directory: String
    /// Sends, receipts and conversation creation go through here: one commit per batch.
    let batcher: GroupCommitWriter
    /// Copies the WAL into the database file, off the commit path.
    let checkpointer: WALCheckpointer
    /// The send path's statements, prepared on the writer connection.
    let writerStatements: WriterStatements
    /// The connections of the reads every connect makes (``rawLookup(_:)``).
    let lookupConnections: LookupConnections
    /// Lookups under way, and whether the store is closed (``lookup(_:)``).
    private let lookups = Mutex(LookupGate())

    private struct LookupGate {
        var closed = false
        var inFlight = 0
    }

    /// Opens (creating if needed) and migrates the database at `path`.
    public convenience init(path: String, durability: Durability = .full) throws {
        try self.init(path: path, durability: durability, walRestartThreshold: WALCheckpointer.defaultRestartThreshold)
    }

    /// `walRestartThreshold`: ``WALCheckpointer`` rule 2's, in WAL pages (tests take a small one).
    init(path: String, durability: Durability, walRestartThreshold: Int) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let synchronous = "PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL")"
        configuration.prepareDatabase { db in
            try db.execute(sql: synchronous)
            try db.execute(sql: "PRAGMA foreign_keys = ON")
            // 64 MiB page cache and memory-mapped reads per connection: hot pages stay in memory
            // instead of being re-read with pread on every transaction.
            try db.execute(sql: "PRAGMA cache_size = -65536")
            try db.execute(sql: "PRAGMA mmap_size = 268435456")
            // Statement journals and sort scratch stay in memory: they spilled to files under
            // /var/tmp (ext4 writes on every multi-row statement) even with the database on tmpfs.
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
            // A message deleted for everyone leaves no bytes of its text behind in the file
            // (docs/protocol.md "Message actions"): freed cells and pages are zeroed.
            try db.execute(sql: "PRAGMA secure_delete = ON")
            // What the search index stores and the triggers that fill it call (SearchText).
            db.add(
                function: DatabaseFunction("parley_fold", argumentCount: 1, pure: true) { values in
                    String.fromDatabaseValue(values[0]).map(SearchText.fold)
                })
            db.add(
                function: DatabaseFunction("parley_cjk", argumentCount: 1, pure: true) { values in
                    String.fromDatabaseValue(values[0]).map(SearchText.hasCJK) ?? false
                })
            guard parley_register_search_functions(UnsafeMutableRawPointer(db.sqliteConnection)) == SQLITE_OK else {
                throw DatabaseError(message: "could not add parley_width_forms")
            }
        }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.directory = directory.path
        try Self.restrictToOwner(path)
        pool = try DatabasePool(path: path, configuration: configuration)
        // The pool turns WAL on after `prepareDatabase` and sets `synchronous = NORMAL` on its writer
        // as it does: said again here, or `full` would acknowledge commits not yet on disk.
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: synchronous)
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(WALCheckpointer.writerThreshold)")
            if durability == .full { try db.execute(sql: "PRAGMA parley_gather_wal = ON") }
        }
        // SQLite creates the WAL and shared-memory files with the database file's mode; an older
        // database may have them already, so they are tightened too.
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            try Self.restrictToOwner(path + suffix)
        }
        try SQLiteSchema.migrator.migrate(pool)
        writerStatements = try pool.writeWithoutTransaction { db in try WriterStatements(db) }
        lookupConnections = try LookupConnections(path: path)
        let checkpointer = try WALCheckpointer(
            path: path, restartThreshold: walRestartThreshold, betweenCommits: WALCheckpointer.writerPass(pool))
        self.checkpointer = checkpointer
        batcher = GroupCommitWriter(pool: pool, deferred: writerStatements.searchIndex, afterCommit: checkpointer.committed)
    }

    /// Whether SQLite's process-wide set-up ran before its first use (`SQLiteProcessSetup`: memory
    /// statistics off, which took a process-wide mutex on every allocation inside SQLite).
    static var processSetupApplied: Bool { parley_sqlite_process_setup_applied() == 1 }

    /// Whether the VFS that gathers a commit's WAL frames into one write is the process's default
    /// (`SQLiteProcessSetup`); the writer asks for it with durability `full`.
    static var walGatheringRegistered: Bool { parley_gathered_wal_writes_registered() == 1 }

    /// Creates `path` readable and writable by its owner only (0600), or tightens an existing file:
    /// messages and password hashes are nobody else's business on a shared machine.
    static func restrictToOwner(_ path: String) throws {
        let manager = FileManager.default
        if !manager.fileExists(atPath: path) {
            guard manager.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
            }
        }
        try manager.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
    }

    /// A read by key through GRDB's pool. The reads every connect makes take ``rawLookup(_:)``
    /// instead, on the caller's thread.
    ///
    /// It awaits the pool: a read on the caller's thread once blocked the Swift concurrency pool's
    /// threads waiting for a reader, while the readers were only given back by tasks that needed
    /// one of those threads, and the server stopped (all of its threads in GRDB's `Pool.get`).
    ///
    /// A lookup after ``close()`` throws, and `close()` waits for the lookups under way (a
    /// connection's last presence update can still run while the server shuts down).
    func lookup<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try enter()
        defer { leave() }
        return try await pool.read(work)
    }

    /// A lookup on ``LookupConnections``, for the reads every connect makes; the same gate as
    /// ``lookup(_:)``.
    func rawLookup<T>(_ work: (LookupStatements) throws -> T) throws -> T {
        try gated { try lookupConnections.run(work) }
    }

    private func gated<T>(_ work: () throws -> T) throws -> T {
        try enter()
        defer { leave() }
        return try work()
    }

    private func enter() throws {
        try lookups.withLock { gate in
            guard !gate.closed else { throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "Connection is closed") }
            gate.inFlight += 1
        }
    }

    private func leave() { lookups.withLock { $0.inFlight -= 1 } }

    /// A write transaction; storage failures become ``StoreError/storageUnavailable``.
    func write<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let value = try await Self.classifyingStorageFailures { try await pool.write(work) }
        checkpointer.committed()
        return value
    }

    /// A write in the group-commit batch; storage failures become ``StoreError/storageUnavailable``.
    func batchedWrite<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await Self.classifyingStorageFailures { try await batcher.write(work) }
    }

    static func classifyingStorageFailures<T>(_ operation: () async throws -> T) async throws -> T {
        do {
            return try await operation()
        } catch {
            throw classified(error)
        }
    }

    /// A full disk or an I/O failure becomes ``StoreError/storageUnavailable``; anything else is kept.
    static func classified(_ error: any Error) -> any Error {
        guard let error = error as? DatabaseError,
            [.SQLITE_FULL, .SQLITE_IOERR, .SQLITE_CANTOPEN, .SQLITE_READONLY].contains(error.resultCode)
        else { return error }
        return StoreError.storageUnavailable
    }

    /// Writable means: at least `minimumFreeBytes` free where the database lives (a write that
    /// reuses WAL space can succeed on a full disk, so a probe write alone would say too little),
    /// and a small write transaction commits.
    public func checkWritable() async throws {
        var stats = statvfs()
        if statvfs(directory, &stats) == 0, UInt64(stats.f_bavail) * UInt64(stats.f_frsize) < Self.minimumFreeBytes {
            throw StoreError.storageUnavailable
        }
        try await write { db in try db.execute(sql: "PRAGMA user_version = 1") }
    }

    static let minimumFreeBytes: UInt64 = 1 << 20

    /// SQLite's `PRAGMA integrity_check`: `["ok"]` for a sound database, else the problems found.
    public func integrityCheck() async throws -> [String] {
        try await pool.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
    }

    /// Copies the whole WAL into the database file and empties it (`wal_checkpoint(TRUNCATE)`):
    /// after it, the file alone holds the database, and nothing deleted is left in the WAL.
    /// A reader's snapshot or the checkpointer's own pass makes it busy for a moment (the writer's
    /// connection does not wait): it is tried again, for up to ten seconds.
    public func checkpointTruncatingWAL() async throws {
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while true {
            do {
                _ = try await pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
                return
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    public func ping() async throws {
        _ = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
    }

    public func close() async throws {
        lookups.withLock { $0.closed = true }
        while lookups.withLock({ $0.inFlight > 0 }) { try? await Task.sleep(for: .milliseconds(1)) }
        lookupConnections.close()
        try checkpointer.close()
        try await pool.writeWithoutTransaction { _ in writerStatements.finalize() }
        try pool.close()
    }
}
