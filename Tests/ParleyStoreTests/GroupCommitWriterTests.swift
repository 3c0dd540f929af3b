import Foundation
import GRDB
@testable import ParleySQLite
import Synchronization
import Testing

/// The rules in ``GroupCommitWriter``'s doc comment, one test each.
@Suite struct GroupCommitWriterTests {
    struct Refused: Error, Equatable {}

    static func makePool() throws -> DatabasePool {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("parley-gc-\(UUID().uuidString).sqlite").path
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA foreign_keys = ON") }
        let pool = try DatabasePool(path: path, configuration: configuration)
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE parent (id INTEGER PRIMARY KEY)")
            try db.execute(sql: "CREATE TABLE item (n INTEGER NOT NULL, parent INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)")
        }
        return pool
    }

    @Test func jobsRunInSubmissionOrderAndAFailingJobRollsBackOnlyItself() async throws {
        let pool = try Self.makePool()
        let writer = GroupCommitWriter(pool: pool)
        var results: [Result<Int, Refused>] = []
        for n in 1...60 {
            do {
                let value = try await writer.write { db -> Int in
                    try db.execute(sql: "INSERT INTO item (n) VALUES (?)", arguments: [n])
                    if n.isMultiple(of: 5) { throw Refused() }
                    return n
                }
                results.append(.success(value))
            } catch let error as Refused {
                results.append(.failure(error))
            }
        }
        #expect(results.filter { (try? $0.get()) == nil }.count == 12)
        let stored = try await pool.read { db in try Int.fetchAll(db, sql: "SELECT n FROM item ORDER BY rowid") }
        #expect(stored == (1...60).filter { !$0.isMultiple(of: 5) })
    }

    /// A batch of sends is one job with a savepoint per message: a message that fails rolls back
    /// its own writes only, and the job goes on.
    @Test func aSavepointInsideAJobRollsBackOnlyItsOwnWrites() async throws {
        let pool = try Self.makePool()
        let writer = GroupCommitWriter(pool: pool)
        let outcomes = try await writer.write { db -> [Bool] in
            (1...7).map { n in
                (try? db.inCachedSavepoint(named: "message") { () throws -> Void in
                    try db.execute(sql: "INSERT INTO item (n) VALUES (?)", arguments: [n])
                    if n.isMultiple(of: 3) { throw Refused() }
                }) != nil
            }
        }
        #expect(outcomes == [true, true, false, true, true, false, true])
        let stored = try await pool.read { db in try Int.fetchAll(db, sql: "SELECT n FROM item ORDER BY rowid") }
        #expect(stored == [1, 2, 4, 5, 7])
    }

    @Test func concurrentJobsShareBatchesAndAllCommit() async throws {
        let pool = try Self.makePool()
        let writer = GroupCommitWriter(pool: pool)
        let values = try await withThrowingTaskGroup(of: Int.self) { group in
            for n in 1...500 {
                group.addTask {
                    try await writer.write { db in
                        try db.execute(sql: "INSERT INTO item (n) VALUES (?)", arguments: [n])
                        return n
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(values) == Set(1...500))
        // Answered means committed: another connection sees every row.
        #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") } == 500)
    }

    /// Rule 3. The test controls the batch rather than waiting for one: a blocker holds the
    /// database's writer until both jobs are queued, so the writer's next batch takes both.
    @Test(.timeLimit(.minutes(10))) func aFailedCommitFailsEveryJobOfTheBatchAndWritesNothing() async throws {
        let pool = try Self.makePool()
        let writer = GroupCommitWriter(pool: pool)
        let answered = Mutex<[Bool]>([])
        @Sendable func submit(_ sql: String) async {
            let committed = (try? await writer.write { db in try db.execute(sql: sql) }) != nil
            answered.withLock { $0.append(committed) }
        }
        // A deferred foreign key violation only shows at COMMIT.
        try await Self.inOneBatch(
            pool, writer, [{ await submit("INSERT INTO item (n) VALUES (1)") }, { await submit("INSERT INTO item (n, parent) VALUES (2, 999)") }])
        #expect(answered.withLock { $0 } == [false, false])
        #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") } == 0)
        // The writer keeps working after a failed batch.
        #expect(try await writer.write { db in try Int.fetchOne(db, sql: "SELECT 7") } == 7)
    }

    /// Rule 5: once the pool is closed, waiting and later jobs get the error; none waits for ever.
    @Test(.timeLimit(.minutes(10))) func jobsAfterThePoolClosedFailInsteadOfWaiting() async throws {
        let pool = try Self.makePool()
        let writer = GroupCommitWriter(pool: pool)
        try await writer.write { db in try db.execute(sql: "INSERT INTO item (n) VALUES (1)") }
        try pool.close()
        let failures = await withTaskGroup(of: Bool.self) { group in
            for n in 0..<20 {
                group.addTask {
                    do {
                        try await writer.write { db in try db.execute(sql: "INSERT INTO item (n) VALUES (?)", arguments: [n]) }
                        return false
                    } catch {
                        return true
                    }
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(failures == 20)
        await #expect(throws: (any Error).self) { try await writer.write { _ in } }
    }

    /// Rule 6: deferred writes of a failed job go with it; the others are made after the last job,
    /// in order, in the batch's transaction; a failing apply fails the batch and leaves nothing.
    @Test(.timeLimit(.minutes(10))) func deferredWritesFollowTheirJobsAndCommitWithTheBatch() async throws {
        let pool = try Self.makePool()
        let log = ItemLog()
        let writer = GroupCommitWriter(pool: pool, deferred: log)
        try await Self.inOneBatch(
            pool, writer,
            jobs: [
                { db in log.items.append(1) },
                { db in
                    log.items.append(2); throw Refused()
                },
                { db in log.items.append(3) },
            ])
        #expect(try await pool.read { db in try Int.fetchAll(db, sql: "SELECT n FROM item ORDER BY rowid") } == [1, 3])

        log.failing = true
        try await Self.inOneBatch(
            pool, writer,
            jobs: [
                { db in
                    try db.execute(sql: "INSERT INTO item (n) VALUES (4)"); log.items.append(5)
                }
            ])
        #expect(try await pool.read { db in try Int.fetchAll(db, sql: "SELECT n FROM item ORDER BY rowid") } == [1, 3], "nothing of the failed batch")
        log.failing = false
        try await writer.write { _ in log.items.append(6) }
        #expect(try await pool.read { db in try Int.fetchAll(db, sql: "SELECT n FROM item ORDER BY rowid") } == [1, 3, 6], "the log was emptied")
    }

    /// Runs `jobs` as one batch, in their order: the database's writer is held until each of them
    /// is queued, one after the other.
    static func inOneBatch(_ pool: DatabasePool, _ writer: GroupCommitWriter, jobs: [@Sendable (Database) throws -> Void]) async throws {
        try await inOneBatch(pool, writer, jobs.map { job in { try await writer.write(job) } })
    }

    /// Runs `submissions` (each queueing one job on `writer`) so that their jobs form one batch, in order.
    static func inOneBatch(_ pool: DatabasePool, _ writer: GroupCommitWriter, _ submissions: [@Sendable () async throws -> Void]) async throws {
        let gate = DispatchSemaphore(value: 0)
        var blocker: Task<Void, any Error>?
        await withCheckedContinuation { (holding: CheckedContinuation<Void, Never>) in
            blocker = Task {
                try await pool.write { _ in
                    holding.resume(); gate.wait()
                }
            }
        }
        var tasks: [Task<Void, any Error>] = []
        for (queued, submit) in submissions.enumerated() {
            tasks.append(Task { try await submit() })
            while writer.waitingJobs <= queued { await Task.yield() }
        }
        gate.signal()
        for task in tasks { _ = await task.result }
        try await blocker?.value
    }
}

/// Numbers to insert into `item` after a batch's jobs; `failing` makes the apply throw.
private final class ItemLog: DeferredBatchWrites, @unchecked Sendable {
    var items: [Int] = []
    var failing = false
    var mark: Int { items.count }
    func rollBack(to mark: Int) { items.removeSubrange(mark...) }
    func apply(_ db: Database) throws {
        defer { items.removeAll() }
        if failing { throw GroupCommitWriterTests.Refused() }
        for n in items { try db.execute(sql: "INSERT INTO item (n) VALUES (?)", arguments: [n]) }
    }
}
