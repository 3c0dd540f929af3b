import Foundation
import GRDB
@testable import ParleySQLite
import Testing

/// The statements of a group send and of a resume reach a group's messages through an index: their
/// cost does not grow with the group's history (a `MAX(pos)` without `pos IS NOT NULL` could not
/// use the partial index and read every message of the group, on every send).
@Suite struct SQLiteQueryPlanTests {
    static func plan(_ sql: String, _ arguments: StatementArguments) async throws -> String {
        let path = WALCheckpointerTests.temporaryPath()
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let store = try SQLiteStore(path: path, durability: .normal)
        let plan = try await store.pool.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String }.joined(separator: "\n")
        }
        try await store.close()
        return plan
    }

    @Test func theNewestGroupMessageIsFoundByTheIndex() async throws {
        let plan = try await Self.plan(WriterStatements.lastGroupPositionSQL, ["g"])
        #expect(plan.contains("COVERING INDEX messages_by_position"), "\(plan)")
    }

    @Test func aReplayReadsAMembersGroupMessagesByTheirSpansAndPositions() async throws {
        let plan = try await Self.plan(SQLiteStore.replaySQL, ["u", 0, 500])
        #expect(plan.contains("member_spans_by_user"), "\(plan)")
        #expect(plan.contains("messages_by_position (conversation_id=? AND pos>?"), "\(plan)")
        #expect(!plan.contains("SCAN m"), "\(plan)")
    }
}
