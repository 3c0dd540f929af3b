import Dispatch
import Foundation
import GRDB
import Synchronization

/// Copies the write-ahead log back into the database file on a connection and a thread of its own,
/// so that commits find it mostly done, and starts the WAL over with a short pause of the writer.
///
/// SQLite's automatic checkpoint runs inside the commit that takes the WAL past its threshold: that
/// commit, and every send queued behind it, waited while the pages not yet copied were written to
/// the database file and synced (at 5,000 sends/s, ~10 ms every ~85 ms: the delivery p90 and p99).
/// Only a checkpoint that finds every frame copied lets the next write start the WAL over, and with
/// commits running during the copy, only one that no commit can overtake finds that. Rules:
/// 1. After each commit the writer calls ``committed()``; a PASSIVE checkpoint then runs within
///    `interval`, on this object's queue, never on the writer's. It never blocks a writer or a reader.
/// 2. When a checkpoint finds the WAL at `restartThreshold` pages or more, more passes follow at
///    once, each copying what was committed during the one before, until one takes under
///    ``shortPass`` (or after ``maximumPasses``). Then a last one runs through `betweenCommits`: on
///    the writer's connection, between two transactions, so no commit overtakes it, and the next
///    write starts the WAL over. The commit path waits for that short copy and its syncs only
///    (~5 ms), once per ``defaultRestartThreshold`` pages (~1 s at 5,000 sends/s).
/// 3. The writer's own automatic checkpoint stays at ``writerThreshold`` pages, above rule 2's: it
///    only runs if this object falls behind (or is not there).
/// 4. ``close()`` waits for a checkpoint under way, then closes the connection; after it, nothing runs.
final class WALCheckpointer: Sendable {
    private struct State {
        var scheduled = false
        var closed = false
        var lastRun = ContinuousClock.now - .seconds(3600)
    }

    /// Rule 1's interval. Each pass writes every page committed since the one before, once, and in
    /// 250 ms most pages take several commits: at 5,000 sends/s the disk took half the writes a
    /// second it took with a pass every 50 ms (~7,000 against ~13,000), for the same delivery p99.
    /// Every 1 s wrote fewer still, but let the WAL grow to the writer's own threshold at max rate
    /// (rule 3).
    static let defaultInterval = Duration.milliseconds(250)

    /// Rule 2's threshold, in WAL pages (160 MiB of 4 KiB pages). The pause it brings hits the sends
    /// queued behind it: at 4,000 pages (every ~85 ms at 5,000 sends/s) that was the delivery p99.
    static let defaultRestartThreshold = 40000
    /// Rule 2: a pass this short leaves little for the writer's pass; after `maximumPasses` the
    /// writer's pass runs anyway, so the WAL stays bounded while commits outrun the copying.
    static let shortPass = Duration.milliseconds(2)
    static let maximumPasses = 8

    /// Rule 3: the writer's automatic checkpoint, in WAL pages (400 MiB); SQLite's default of 1,000
    /// filled in ~40 ms at 5,000 sends/s.
    static let writerThreshold = 100_000

    /// How many times a run of rule 1 (and 2) has ended (tests wait on it rather than on a clock).
    let runsEnded = Atomic<Int>(0)
    private let connection: DatabaseQueue
    private let queue = DispatchQueue(label: "parley.wal-checkpoint")
    private let state = Mutex(State())
    private let interval: Duration
    private let restartThreshold: Int
    /// Runs a checkpoint on the writer's connection between two of its transactions (rule 2).
    private let betweenCommits: (@Sendable () throws -> Void)?

    init(
        path: String, interval: Duration = defaultInterval, restartThreshold: Int = defaultRestartThreshold,
        betweenCommits: (@Sendable () throws -> Void)? = nil
    ) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        // Its copies go to the disk 16 pages at a time (`SQLiteProcessSetup`'s VFS, rule 5), so
        // the commits' WAL syncs never queue behind a whole checkpoint's pages.
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA parley_paced_writes = ON") }
        connection = try DatabaseQueue(path: path, configuration: configuration)
        self.interval = interval
        self.restartThreshold = restartThreshold
        self.betweenCommits = betweenCommits
    }

    /// Rule 1: asks for a checkpoint, due `interval` after the last one.
    func committed() {
        let delay: Duration? = state.withLock { state in
            guard !state.scheduled, !state.closed else { return nil }
            state.scheduled = true
            return max(.zero, interval - (ContinuousClock.now - state.lastRun))
        }
        guard let delay else { return }
        let nanoseconds = delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) { self.run() }
    }

    /// Rule 2's last pass: a checkpoint on `pool`'s writer connection, which waits for the write
    /// under way and holds off the next one.
    static func writerPass(_ pool: DatabasePool) -> @Sendable () throws -> Void {
        { try pool.writeWithoutTransaction { db in _ = try db.checkpoint(.passive) } }
    }

    /// Rule 4.
    func close() throws {
        queue.sync { state.withLock { $0.closed = true } }
        try connection.close()
    }

    /// One checkpoint now, waiting for it; throws once closed.
    @discardableResult
    func checkpointNow() throws -> (walFrameCount: Int, checkpointedFrameCount: Int) {
        try queue.sync {
            guard !state.withLock({ $0.closed }) else { throw CancellationError() }
            return try checkpoint()
        }
    }

    /// Whether this object's copies are paced (rule 5 of `SQLiteProcessSetup`'s VFS), and the
    /// write-outs made so far.
    func pacedWrites() throws -> (inEffect: Bool, writeOuts: Int) {
        try queue.sync { try connection.read(Self.pacedWrites) }
    }

    /// `PRAGMA parley_paced_writes` of `db`'s connection: whether pacing is in effect, and the
    /// write-outs made so far.
    static func pacedWrites(_ db: Database) throws -> (inEffect: Bool, writeOuts: Int) {
        let numbers = (try String.fetchOne(db, sql: "PRAGMA parley_paced_writes") ?? "").split(separator: " ").compactMap { Int($0) }
        return (numbers.first == 1, numbers.count == 2 ? numbers[1] : -1)
    }

    private func run() {
        let go = state.withLock { state in
            state.scheduled = false
            state.lastRun = ContinuousClock.now
            return !state.closed
        }
        guard go else { return }
        defer { runsEnded.add(1, ordering: .relaxed) }
        // A failed checkpoint costs nothing but WAL length; the next commit asks for another.
        for pass in 1... {
            let start = ContinuousClock.now
            guard let (walFrames, _) = try? checkpoint() else { return }
            guard walFrames >= restartThreshold, let betweenCommits else { return }
            // Rule 2: what a pass copies was committed during the one before, so passes shorten;
            // the writer waits once one is short enough.
            if ContinuousClock.now - start < Self.shortPass || pass == Self.maximumPasses {
                try? betweenCommits()
                return
            }
        }
    }

    private func checkpoint() throws -> (walFrameCount: Int, checkpointedFrameCount: Int) {
        try connection.writeWithoutTransaction { db in try db.checkpoint(.passive) }
    }
}
