import Dispatch
import Foundation
import GRDB
import Synchronization

/// Copies the write-ahead log back into the database file on a connection and a thread of its own,
/// so that commits find it mostly done.
///
/// SQLite's automatic checkpoint runs inside the commit that takes the WAL past 1,000 pages: that
/// commit, and every send queued behind it, waited while ~1,000 pages were written to the database
/// file and synced (the p99 at 1,000 msgs/s). Rules:
/// 1. After each commit the writer calls ``committed()``; a PASSIVE checkpoint then runs within
///    `interval`, on this object's queue, never on the writer's. It never blocks a writer or a reader.
/// 2. The writer's own automatic checkpoint still runs, at ``writerThreshold`` WAL pages, which keeps
///    the WAL bounded (only a checkpoint in the writer can start the WAL over); it finds all but the
///    last `interval` of the WAL copied already. The threshold is high enough that, at thousands of
///    sends a second (several new pages each), it is this object that copies, not the commit path.
/// 3. ``close()`` waits for a checkpoint under way, then closes the connection; after it, nothing runs.
final class WALCheckpointer: Sendable {
    private struct State {
        var scheduled = false
        var closed = false
        var lastRun = ContinuousClock.now - .seconds(3600)
    }

    /// The writer's automatic checkpoint, in WAL pages (16 MiB of 4 KiB pages); SQLite's default of
    /// 1,000 filled in ~30 ms at 5,000 sends/s, so the writer did most of the copying itself.
    static let writerThreshold = 4000

    private let connection: DatabaseQueue
    private let queue = DispatchQueue(label: "parley.wal-checkpoint")
    private let state = Mutex(State())
    private let interval: Duration

    init(path: String, interval: Duration = .milliseconds(50)) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        connection = try DatabaseQueue(path: path, configuration: configuration)
        self.interval = interval
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

    /// Rule 3.
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

    private func run() {
        let go = state.withLock { state in
            state.scheduled = false
            state.lastRun = ContinuousClock.now
            return !state.closed
        }
        guard go else { return }
        // A failed checkpoint costs nothing but WAL length; the next commit asks for another.
        _ = try? checkpoint()
    }

    private func checkpoint() throws -> (walFrameCount: Int, checkpointedFrameCount: Int) {
        try connection.writeWithoutTransaction { db in try db.checkpoint(.passive) }
    }
}
