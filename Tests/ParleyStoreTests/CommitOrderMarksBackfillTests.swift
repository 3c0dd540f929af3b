import GRDB
import Logging
import ParleyCore
@testable import ParleyPostgres
@testable import ParleySQLite
import ParleyStore
import ParleyTestSupport
import PostgresNIO
import Testing

/// A database from before the marks (every mark 0, as the migration's new columns start) gets them
/// from the times its rows have: a former member keeps what the time cut showed her.
@Suite struct CommitOrderMarksBackfillTests {
    struct View: Equatable {
        let text: String, reactions: [String], versions: [String]
    }

    /// Grace sees "v2" and her 👍; after her removal Ada edits to "v3" and reacts 🎉.
    static func scenario(_ store: any ParleyStore) async throws -> (UserID, ConversationID, Int64) {
        let (ada, grace, group) = try await store.adaAndGraceInAGroup(titled: "Old")
        let start = Timestamp.now().milliseconds
        let at = { (offset: Int64) in Timestamp(milliseconds: start + offset) }
        let seq = try await store.send("v1", from: ada.id, to: .conversation(group), at: at(0)).message.seq
        func act(_ user: User, _ change: NewMessageAction.Change, _ offset: Int64) async throws {
            _ = try await store.act(NewMessageAction(actor: user.id, clientId: .random(), conversation: group, seq: seq, change: change), now: at(offset))
        }
        try await act(ada, .edit("v2"), 100)
        try await act(grace, .react("👍"), 110)
        _ = try await store.changeGroup(
            MembershipChange(actor: ada.id, clientId: .random(), conversation: group, action: .remove(grace.id), maxMembers: 256), now: at(200))
        try await act(ada, .edit("v3"), 300)
        try await act(ada, .react("🎉"), 310)
        return (grace.id, group, seq)
    }

    static func view(_ store: any ParleyStore, _ grace: UserID, _ group: ConversationID, _ seq: Int64) async throws -> View {
        let page = try await store.messages(in: group, as: grace, query: HistoryQuery(limit: 50)).messages
        let message = try #require(page.first { $0.seq == seq })
        let versions = try await store.versions(in: group, seq: seq, as: grace)
        return View(text: message.text, reactions: message.reactions?.map(\.emoji) ?? [], versions: versions.map(\.text))
    }

    static let expected = View(text: "v2", reactions: ["👍"], versions: ["v1"])

    @Test func sqlite() async throws {
        let path = WALCheckpointerTests.temporaryPath()
        let store = try SQLiteStore(path: path, durability: .normal)
        let (grace, group, seq) = try await Self.scenario(store)
        #expect(try await Self.view(store, grace, group, seq) == Self.expected)
        try await store.close()
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            try db.execute(sql: "UPDATE message_versions SET replaced_mark = 0; UPDATE reactions SET mark = 0")
        }
        let zeroed = try SQLiteStore(path: path, durability: .normal)
        #expect(try await Self.view(zeroed, grace, group, seq) != Self.expected, "without the backfill the marks say nothing")
        try await zeroed.close()
        try await queue.write { db in try db.execute(sql: CommitOrderMarks.backfill) }
        try queue.close()
        let migrated = try SQLiteStore(path: path, durability: .normal)
        #expect(try await Self.view(migrated, grace, group, seq) == Self.expected)
        try await migrated.close()
    }

    @Test func postgres() async throws {
        let store = try await PostgresStore.connect(
            DatabaseURL(try await PostgresTestServer.freshDatabaseAsync()), poolSize: 2, logger: Logger(label: "backfill-test"))
        let (grace, group, seq) = try await Self.scenario(store)
        #expect(try await Self.view(store, grace, group, seq) == Self.expected)
        try await store.transaction { db in
            try await db.query("UPDATE message_versions SET replaced_mark = 0", logger: store.logger)
            try await db.query("UPDATE reactions SET mark = 0", logger: store.logger)
        }
        #expect(try await Self.view(store, grace, group, seq) != Self.expected, "without the backfill the marks say nothing")
        try await store.transaction { db in
            for statement in PostgresCommitOrderMarks.backfill { try await db.query(PostgresQuery(unsafeSQL: statement), logger: store.logger) }
        }
        #expect(try await Self.view(store, grace, group, seq) == Self.expected)
        try await store.close()
    }
}
