import Foundation
import ParleyCore
@testable import ParleySQLite
import Synchronization
import Testing

/// ``SQLiteStore/lookup(_:)``: reads by key on the caller's thread, and a store closing under them.
@Suite struct SQLiteLookupTests {
    final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    static let answersBeforeClose = 12

    /// Lookups that race with `close()` either finish or throw; none may touch a closed connection
    /// (GRDB's synchronous read then dereferences a null SQLite handle and the process crashes).
    @Test func lookupsRacingCloseFinishOrThrow() async throws {
        for _ in 0..<5 {
            let store = try SQLiteStore(path: WALCheckpointerTests.temporaryPath(), durability: .normal)
            let user = UserID.random()
            let answered = Counter(), refused = Counter()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<6 {
                    group.addTask {
                        // Until the store refuses (bounded): a lookup does not suspend, so each
                        // round yields, or these tasks would keep the closing one off the pool.
                        for _ in 0..<200_000 {
                            do {
                                #expect(try await store.streamHead(of: user) == 0)
                                answered.value.add(1, ordering: .relaxed)
                            } catch {
                                refused.value.add(1, ordering: .relaxed)
                                return
                            }
                            await Task.yield()
                        }
                    }
                }
                // Close while the lookups are in full swing: two answers per task on average. (A
                // hundred once took more than 10 s while the rest of the suite loaded both cores.)
                let deadline = ContinuousClock.now + .seconds(60)
                while answered.value.load(ordering: .relaxed) < Self.answersBeforeClose, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(1))
                }
                try await store.close()
                try await group.waitForAll()
            }
            #expect(answered.value.load(ordering: .relaxed) >= Self.answersBeforeClose, "lookups ran before the close")
            #expect(refused.value.load(ordering: .relaxed) == 6, "and every task was refused once the store closed")
        }
    }
}
