import Logging
import ParleyCore
@testable import ParleyPostgres
import ParleyStore
import ParleyTestSupport
import PostgresNIO
import Testing

/// ``PostgresSendQueue`` rule 3's stall clause on a real PostgreSQL: a batch waiting on a row lock
/// held elsewhere does not hold up the node's sends to other conversations.
@Suite struct SendQueueLockTests {
    @Test func aBatchWaitingOnALockDoesNotHoldUpSendsToOtherConversations() async throws {
        let logger = {
            var logger = Logger(label: "send-queue-lock-test")
            logger.logLevel = .critical
            return logger
        }()
        let store = try await PostgresStore.connect(try DatabaseURL(try await PostgresTestServer.freshDatabaseAsync()), poolSize: 6, logger: logger)
        let users = try await ["ada", "bob", "cy", "dee"].asyncMap { try await store.makeUser($0).id }
        let locked = try await store.send("hi", from: users[0], to: .user(users[1])).message.conversationId
        let free = try await store.send("hi", from: users[2], to: .user(users[3])).message.conversationId

        // Another transaction holds the first conversation's row until the test lets it go.
        let (held, holding) = AsyncStream.makeStream(of: Void.self)
        let (release, releasing) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            try await store.read { db in
                try await db.query("BEGIN", logger: logger)
                try await db.query("SELECT 1 FROM conversations WHERE id = \(locked.rawValue) FOR UPDATE", logger: logger)
                holding.yield()
                for await _ in release { break }
                try await db.query("ROLLBACK", logger: logger)
            }
        }
        for await _ in held { break }
        let blocked = Task { try await store.send("waits for the lock", from: users[0], to: .conversation(locked)) }
        // The queue's one runner is in that batch once PostgreSQL shows a send waiting on the lock;
        // past the stall time after that, a send to another conversation starts another runner.
        _ = try await eventuallyTrue("a send waits on the lock") {
            try await store.read { db in
                try await db.value(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'", as: Int64.self, logger)
            } == 1
        }
        try await Task.sleep(for: PostgresSendQueue.stalledAfter + .milliseconds(10))  // at least that long, whatever the machine
        let other = try await store.send("goes on", from: users[2], to: .conversation(free))
        #expect(other.message.seq == 2)
        let stillWaiting = try await store.read { db in
            try await db.value(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'", as: Int64.self, logger)
        }
        #expect(stillWaiting == 1, "answered while the first send still waited on the lock")

        releasing.yield()
        try await holder.value
        #expect(try await blocked.value.message.seq == 2, "and the first send is written once the lock goes")
        try await store.close()
    }
}
