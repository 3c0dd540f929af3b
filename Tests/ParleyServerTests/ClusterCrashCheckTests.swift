import Foundation
import ParleyBench
import ParleyTestSupport
import Testing

/// A short run of `parley torture --cluster`'s checker against the real binary: three nodes on a
/// PostgreSQL of the test's own, two nodes killed, PostgreSQL restarted twice and a node frozen,
/// in random order, under load. Every message guarantee must hold, no node may stop by itself, and
/// nobody may stay online once every client has left (docs/guarantees.md).
@Suite struct ClusterCrashCheckTests {
    @Test(.timeLimit(.minutes(10))) func killsRestartsAndAFreezeBreakNoGuarantee() async throws {
        let database = try await offCooperativePool { try DedicatedPostgres() }
        defer { database.remove() }
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("parley").path
        var options = ClusterCrashCheck.Options(binary: binary, database: database.url) {
            try await offCooperativePool {
                try database.stop()
                try database.start()
            }
        }
        options.nodes = 3
        options.pairs = 3
        options.kills = 2
        options.databaseRestarts = 2
        options.freezeSeconds = 3
        options.gap = 0.5...1.5
        let report = try await ClusterCrashCheck(options: options).run()
        #expect(report.violations.isEmpty, "\(report.violations.prefix(10).joined(separator: "\n"))")
        #expect(report.kills == 2 && report.databaseRestarts == 2 && report.freezes == 1)
        #expect(report.messages > 50, "the clients wrote under load")
        #expect(report.groupMessages > 10, "the group members wrote too")
        #expect(report.receipts > 5, "and read as they went: \(report.receipts)")
    }
}
