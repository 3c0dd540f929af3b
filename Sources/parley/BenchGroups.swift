import ArgumentParser
import Foundation
import ParleyBench

extension Bench {
    /// `parley bench groups`: G groups of M members; a sender per group; copies per second, CPU per copy.
    struct Groups: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "G groups of M connected members; each group's owner sends N messages to it.",
            discussion: "Counts copies (one message reaching one member): lost, duplicated and out-of-order copies fail the run (exit 2).")
        @OptionGroup var target: Bench.Target
        @Option(help: "Groups.") var groups = 50
        @Option(help: "Members per group, the sender included (2–1024).") var members = 100
        @Option(help: "Messages per group.") var messages = 100
        @Option(help: "Aggregate group messages per second; 0 = as fast as possible.") var rate = 200.0
        @Option(help: "Sends in flight per group when --rate 0.") var window = 8
        @Option(help: "Stop sending after this many seconds.") var duration = 60.0

        func run() async throws {
            guard (1...1_000).contains(groups), (2...1_024).contains(members), groups * members <= 200_000 else {
                throw ValidationError("--groups must be 1–1000 and --members 2–1024, at most 200,000 members in all.")
            }
            guard messages >= 1, rate >= 0, window >= 1, duration > 0 else {
                throw ValidationError("--messages and --window must be at least 1, --rate at least 0, --duration more than 0.")
            }
            var options = GroupBench.Options()
            options.groups = groups
            options.members = members
            options.messagesPerSender = messages
            options.rate = rate > 0 ? rate : nil
            options.window = window
            options.maxSeconds = duration
            let report = try await target.withDatabase { api, ws, pid, file in
                try await GroupBench(BenchTarget(api: api, webSocketURL: ws, serverPID: pid)).run(options, databaseFile: file) { print($0) }
            }
            func micros(_ value: Double?) -> String { value.map { String(format: "%.2f µs", $0) } ?? "- (needs the server's pid)" }
            ReportPrinter.print(
                [
                    "sent \(report.sent), acknowledged \(report.acknowledged), errors \(report.errors)",
                    "copies expected \(report.expectedCopies), delivered \(report.delivered): lost \(report.lost), duplicated \(report.duplicated), out of order \(report.outOfOrder)",
                    String(format: "%.0f copies/s over %.2f s (set-up %.1f s)", report.copiesPerSecond, report.seconds, report.setupSeconds),
                    "delivery \(report.delivery?.summary ?? "-")",
                    "server CPU per copy: \(micros(report.serverCPUMicrosPerCopy)), per group message: \(micros(report.serverCPUMicrosPerMessage))",
                    "bench (load generator) CPU per copy: \(micros(report.benchCPUMicrosPerCopy))",
                    "database grew per group message: \(report.databaseBytesPerMessage.map { String(format: "%.0f bytes", $0) } ?? "- (SQLite started by the bench only)")",
                    "server wrote per group message: \(report.serverWrittenBytesPerMessage.map { String(format: "%.0f bytes", $0) } ?? "- (needs the server's pid)")",
                ], report)
            if report.lost + report.duplicated + report.outOfOrder > 0 { throw ExitCode(2) }
        }
    }
}
