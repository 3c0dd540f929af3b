import Foundation
import GRDB
@testable import ParleySQLite
import Testing

/// `--durability full` means every commit is synced before it is acknowledged (guarantee 3).
@Suite struct SQLiteDurabilityTests {
    /// GRDB's pool sets `synchronous = NORMAL` on its writer when it turns WAL on, after the store's
    /// own connection setup; the writer, which makes every commit, must end with what was asked.
    @Test(arguments: [(SQLiteStore.Durability.full, 2), (.normal, 1)])
    func theWriterCommitsWithTheAskedSynchronousLevel(durability: SQLiteStore.Durability, level: Int) async throws {
        let path = WALCheckpointerTests.temporaryPath()
        let store = try SQLiteStore(path: path, durability: durability)
        let writers = try await store.batchedWrite { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        #expect(writers == level, "the group commit's connection")
        let direct = try await store.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        #expect(direct == level, "the store's other writes")
        try await store.close()
    }

    /// The store's writer gathers each commit's WAL frames into one write (`WriteShapingVFS.c`)
    /// with durability `full`, whose commits sync; with `normal` it cannot, and does not.
    @Test(arguments: [(SQLiteStore.Durability.full, "1"), (.normal, "0")])
    func theWriterGathersItsWALWritesWhenItsCommitsSync(durability: SQLiteStore.Durability, gathering: String) async throws {
        let store = try SQLiteStore(path: WALCheckpointerTests.temporaryPath(), durability: durability)
        let writers = try await store.batchedWrite { db in try String.fetchOne(db, sql: "PRAGMA parley_gather_wal") }
        #expect(writers == gathering)
        try await store.close()
    }

    /// ``WALCheckpointer`` rule 3: the writer's own checkpoint waits for `writerThreshold` pages
    /// (SQLite's default of 1,000 made the commit path do the copying at thousands of sends a second),
    /// and GRDB's setup of the pool does not put the default back.
    @Test func theWriterLeavesCheckpointsToTheCheckpointerUpToTheThreshold() async throws {
        let store = try SQLiteStore(path: WALCheckpointerTests.temporaryPath())
        let pages = try await store.batchedWrite { db in try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") }
        #expect(pages == WALCheckpointer.writerThreshold)
        try await store.close()
    }
}
