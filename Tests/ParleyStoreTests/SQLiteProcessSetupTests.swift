import GRDBSQLite
import ParleyCore
import ParleyStore
@testable import ParleySQLite
import Testing

/// SQLite's process-wide set-up (`SQLiteProcessSetup`) is in force in a process that uses the store.
@Suite struct SQLiteProcessSetupTests {
    /// It ran before SQLite's first use (SQLite refuses it after), and SQLite then counts no memory:
    /// with statistics on, every allocation inside SQLite takes a process-wide mutex.
    @Test func memoryStatisticsAreOffBeforeTheFirstConnection() async throws {
        #expect(SQLiteStore.processSetupApplied)
        let store = try SQLiteStore(path: WALCheckpointerTests.temporaryPath(), durability: .normal)
        let alice = try await store.makeUser("alice"), bob = try await store.makeUser("bob")
        _ = try await store.send("counted?", from: alice.id, to: .user(bob.id))
        #expect(sqlite3_memory_used() == 0)
        try await store.close()
    }
}
