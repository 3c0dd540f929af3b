import Dispatch
import GRDB
import Synchronization

/// Runs many callers' write transactions as one SQLite transaction, so one commit (one fsync with
/// durability `full`) serves a whole batch. This is what lets durable sends go far past the
/// fsyncs-per-second of the disk.
///
/// Rules:
/// 1. Jobs run in the order they were submitted (FIFO), each inside its own savepoint.
/// 2. A job that throws rolls back only its own savepoint and gets its own error; the rest of the
///    batch goes on.
/// 3. No caller hears back before the batch's transaction has committed; if the commit fails, every
///    job of the batch gets that error (nothing of it was written).
/// 4. A batch is whatever is waiting when the writer becomes free (at most `maxBatch` jobs): under
///    light load a batch is a single job, so latency is one transaction, not a timer. (Sleeping before
///    a batch for more jobs, as PostgreSQL's `commit_delay` does, was measured twice, before every
///    batch and under load only: at 5,000 sends/s it saved a seventh to a quarter of the CPU and added
///    its sleep to each send's latency; docs/benchmarks.md, twelfth and fourteenth passes.)
/// 5. If no transaction can begin (the pool is closed), every waiting job gets that error: no
///    caller waits for ever.
/// 6. Writes the jobs defer (``DeferredBatchWrites``: the search index) are applied after the last
///    job, in the batch's transaction; a job that throws takes its deferred writes back with it.
final class GroupCommitWriter: Sendable {
    private struct State {
        var pending: [Job] = []
        var draining = false
    }

    private let pool: DatabasePool
    private let maxBatch: Int
    private let state = Mutex(State())
    /// Where batches are written, with GRDB's synchronous write: a thread of its own rather than a
    /// task, so a batch costs no task start and no hop between the concurrency pool and GRDB's queue.
    private let queue = DispatchQueue(label: "parley.group-commit")

    /// Told after each batch that wrote something has committed (the store's WAL checkpointer).
    private let afterCommit: @Sendable () -> Void
    private let deferred: (any DeferredBatchWrites)?

    init(
        pool: DatabasePool, maxBatch: Int = 1024, deferred: (any DeferredBatchWrites)? = nil,
        afterCommit: @escaping @Sendable () -> Void = {}
    ) {
        self.pool = pool
        self.maxBatch = maxBatch
        self.deferred = deferred
        self.afterCommit = afterCommit
    }

    /// Runs `work` in the next batch and returns its result once the batch is committed.
    func write<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let job = Job(work: work, continuation: continuation)
            let startDraining = state.withLock { state in
                state.pending.append(job)
                guard !state.draining else { return false }
                state.draining = true
                return true
            }
            if startDraining { queue.async { self.drain() } }
        }
    }

    private func drain() {
        while true {
            // The batch is taken once the writer is free, so whatever queued while waiting joins it.
            var jobs: [Job] = []
            var taken = false
            do {
                try pool.write { db in
                    jobs = takeBatch()
                    taken = true
                    for job in jobs { job.execute(db, deferred) }
                    try deferred?.apply(db)
                }
                if !jobs.isEmpty { afterCommit() }
                for job in jobs { job.complete(commitError: nil) }
            } catch {
                // Rule 5: no transaction began (the pool is closed), so the waiting jobs fail with it.
                if !taken { jobs = takeBatch() }
                for job in jobs { job.complete(commitError: error) }
            }
            if jobs.isEmpty { return }
        }
    }

    /// How many jobs wait for the next batch (tests use it to know a batch's jobs have all queued).
    var waitingJobs: Int { state.withLock { $0.pending.count } }

    /// Up to `maxBatch` waiting jobs; when none wait, the writer stops draining.
    private func takeBatch() -> [Job] {
        state.withLock { state in
            let batch = Array(state.pending.prefix(maxBatch))
            state.pending.removeFirst(batch.count)
            if batch.isEmpty { state.draining = false }
            return batch
        }
    }
}

/// One caller's work and how to answer it. Touched by the writer's queue, then by the drainer,
/// never at the same time.
private final class Job: @unchecked Sendable {
    private let run: (Database) -> Bool
    private let finish: ((any Error)?) -> Void

    init<T: Sendable>(work: @escaping @Sendable (Database) throws -> T, continuation: CheckedContinuation<T, any Error>) {
        var result: Result<T, any Error> = .failure(CancellationError())
        run = { db in
            result = Result { try db.inCachedSavepoint(named: "job") { try work(db) } }
            if case .failure = result { return false } else { return true }
        }
        finish = { commitError in
            if let commitError { continuation.resume(throwing: commitError) } else { continuation.resume(with: result) }
        }
    }

    /// Runs the job; if it failed, its deferred writes go too (rule 6).
    func execute(_ db: Database, _ deferred: (any DeferredBatchWrites)?) {
        let mark = deferred?.mark ?? 0
        if !run(db) { deferred?.rollBack(to: mark) }
    }

    func complete(commitError: (any Error)?) { finish(commitError) }
}

/// Writes a batch's jobs log instead of making them at once, applied after the last job in the
/// batch's transaction (``SearchIndexLog``). Touched only by the writer.
protocol DeferredBatchWrites: AnyObject, Sendable {
    /// Where the log stands before a job.
    var mark: Int { get }
    /// Forgets what a failed job logged since `mark`.
    func rollBack(to mark: Int)
    /// Makes the logged writes, in order, and empties the log whether they were made or not (the
    /// only way out of a batch that logged anything: its jobs never throw).
    func apply(_ db: Database) throws
}
