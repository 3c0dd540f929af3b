import Foundation
import GRDB
@testable import ParleySQLite
import Synchronization
import Testing

/// ``WALCheckpointer``'s rules: after commits, the WAL is copied into the database file off the
/// writer's thread; after close nothing runs.
@Suite struct WALCheckpointerTests {
    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("parley-wal-\(UUID().uuidString)/db.sqlite").path
    }

    static func fileBytes(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    /// A pool whose writer never checkpoints by itself, so only the checkpointer can grow the file.
    static func makePool(_ path: String) throws -> DatabasePool {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA wal_autocheckpoint = 0") }
        let pool = try DatabasePool(path: path, configuration: configuration)
        try pool.write { db in try db.execute(sql: "CREATE TABLE item (n INTEGER, payload TEXT)") }
        return pool
    }

    static func fill(_ writer: GroupCommitWriter, rows: Int) async throws {
        for n in 0..<rows {
            _ = try await writer.write { db in
                try db.execute(sql: "INSERT INTO item (n, payload) VALUES (?, ?)", arguments: [n, String(repeating: "x", count: 1000)])
            }
        }
    }

    /// Rule 1: commits ask, and the checkpointer copies the WAL into the database file.
    @Test func commitsGetTheWALCopiedIntoTheDatabaseFile() async throws {
        let path = Self.temporaryPath()
        let pool = try Self.makePool(path)
        let checkpointer = try WALCheckpointer(path: path, interval: .milliseconds(20))
        let writer = GroupCommitWriter(pool: pool, afterCommit: checkpointer.committed)
        let before = Self.fileBytes(path)
        try await Self.fill(writer, rows: 2000)  // ~2 MB
        let deadline = ContinuousClock.now + .seconds(10)
        while Self.fileBytes(path) < before + (3 << 19), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(Self.fileBytes(path) >= before + (3 << 19), "the rows (about 2 MB) reached the database file")
        let state = try checkpointer.checkpointNow()
        #expect(state.checkpointedFrameCount == state.walFrameCount, "nothing left to copy")
        let paced = try checkpointer.pacedWrites()
        #expect(paced.inEffect && paced.writeOuts > 0, "the copies went to the disk a few pages at a time")
        try checkpointer.close()
    }

    /// The counter-test: without the checkpointer (and with the writer's checkpoint off) the rows
    /// stay in the WAL, so the test above measures the checkpointer and nothing else.
    @Test func withoutItTheRowsStayInTheWAL() async throws {
        let path = Self.temporaryPath()
        let pool = try Self.makePool(path)
        let before = Self.fileBytes(path)
        try await Self.fill(GroupCommitWriter(pool: pool), rows: 2000)
        try await Task.sleep(for: .milliseconds(200))
        #expect(Self.fileBytes(path) < before + (1 << 20))
    }

    /// How often the checkpointer's last pass ran on the writer's connection (rule 2).
    final class WriterPasses: Sendable {
        let count = Mutex(0)
    }

    /// A checkpointer with rule 2 at `restartThreshold` pages, its writer's passes counted.
    static func countingCheckpointer(_ path: String, _ pool: DatabasePool, restartThreshold: Int) throws -> (WALCheckpointer, WriterPasses) {
        let passes = WriterPasses()
        let writerPass = WALCheckpointer.writerPass(pool)
        let checkpointer = try WALCheckpointer(path: path, interval: .milliseconds(5), restartThreshold: restartThreshold) {
            passes.count.withLock { $0 += 1 }
            try writerPass()
        }
        return (checkpointer, passes)
    }

    /// Rule 2: past the restart threshold the last pass runs on the writer's connection, and the WAL
    /// starts over instead of growing with every commit; no row is lost on the way.
    @Test func pastTheThresholdTheWriterPassStartsTheWALOver() async throws {
        let path = Self.temporaryPath()
        let pool = try Self.makePool(path)
        let (checkpointer, passes) = try Self.countingCheckpointer(path, pool, restartThreshold: 100)
        let writer = GroupCommitWriter(pool: pool, afterCommit: checkpointer.committed)
        // A reader's snapshot holds the WAL while the first 300 rows go in, so it passes the
        // threshold however the checkpointer keeps pace (on a loaded machine it kept the WAL
        // below it, and no pass was needed).
        var holding = Configuration()
        holding.allowsUnsafeTransactions = true  // the read transaction outlives one access, on purpose
        let reader = try DatabaseQueue(path: path, configuration: holding)
        try reader.inDatabase { db in
            try db.execute(sql: "BEGIN")
            _ = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item")
        }
        try await Self.fill(writer, rows: 300)
        try reader.inDatabase { db in try db.execute(sql: "COMMIT") }
        // In runs of 150 commits (past the threshold), each followed by a pass, waited for: a
        // starved checkpointer thread would otherwise let the WAL outgrow the bound between passes.
        for _ in 0..<18 {
            let before = passes.count.withLock { $0 }
            try await Self.fill(writer, rows: 150)
            let deadline = ContinuousClock.now + .seconds(60)
            while passes.count.withLock({ $0 }) == before, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        }
        try checkpointer.close()
        try reader.close()
        #expect(passes.count.withLock { $0 } >= 1)
        // 3,000 commits of a ~1 KB row each wrote more than 3,000 pages (12 MB) to the WAL.
        #expect(Self.fileBytes(path + "-wal") < 4 << 20, "the WAL started over")
        let rows = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") }
        #expect(rows == 3000)
    }

    /// The counter-test: below the threshold the writer is never paused.
    @Test func belowTheThresholdTheWriterIsNeverPaused() async throws {
        let path = Self.temporaryPath()
        let pool = try Self.makePool(path)
        let (checkpointer, passes) = try Self.countingCheckpointer(path, pool, restartThreshold: 1_000_000)
        try await Self.fill(GroupCommitWriter(pool: pool, afterCommit: checkpointer.committed), rows: 500)
        try await Task.sleep(for: .milliseconds(50))
        try checkpointer.close()
        #expect(passes.count.withLock { $0 } == 0)
    }

    /// The store starts its WAL over by rule 2: with a small threshold, its WAL stays small while
    /// commits that would fill 12 MB of it go through the group commit. The commits come in runs
    /// of 150, each followed by the end of a checkpointer run (waited for, not slept for: on a fast
    /// machine 3,000 commits took less than two of its 250 ms intervals, and the WAL outgrew 4 MB
    /// between two runs). A run under way at the last commit may end first, so the WAL may hold
    /// two runs of commits: ~2.4 MB at most.
    @Test func theStoreStartsItsWALOver() async throws {
        let path = Self.temporaryPath()
        let store = try SQLiteStore(path: path, durability: .normal, walRestartThreshold: 100)
        try await store.batchedWrite { db in try db.execute(sql: "CREATE TABLE item (n INTEGER, payload TEXT)") }
        for run in 0..<20 {
            for n in (run * 150)..<((run + 1) * 150) {
                try await store.batchedWrite { db in
                    try db.execute(sql: "INSERT INTO item (n, payload) VALUES (?, ?)", arguments: [n, String(repeating: "x", count: 1000)])
                }
            }
            let ended = store.checkpointer.runsEnded.load(ordering: .relaxed)
            let deadline = ContinuousClock.now.advanced(by: .seconds(20))  // a hang guard
            while store.checkpointer.runsEnded.load(ordering: .relaxed) == ended, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        // Read before closing: SQLite removes the WAL file when its last connection closes.
        let walBytes = Self.fileBytes(path + "-wal")
        try await store.close()
        #expect(walBytes > 0 && walBytes < 4 << 20, "the WAL started over")
    }

    /// Rule 4.
    @Test func afterCloseNothingRuns() async throws {
        let path = Self.temporaryPath()
        _ = try Self.makePool(path)
        let checkpointer = try WALCheckpointer(path: path)
        try checkpointer.close()
        checkpointer.committed()  // asked after close: nothing happens, nothing crashes
        #expect(throws: (any Error).self) { try checkpointer.checkpointNow() }
    }
}
