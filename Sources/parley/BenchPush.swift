import ArgumentParser
import Foundation
import ParleyBench

extension Bench {
    /// `parley bench push`: the server's CPU per push (Web Push encryption, VAPID, the request), and push delay.
    struct Push: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A group of R offline members with Web Push subscriptions on a local push service; one group message a round.",
            discussion:
                "Starts its own server with --push-allow-loopback (or use --url with a server started so). Every message must arrive as one push: a missing one fails the run (exit 2)."
        )
        @OptionGroup var target: Bench.Target
        @Option(help: "Group members besides the sender (each gets one push a round).") var recipients = 100
        @Option(help: "Rounds.") var rounds = 20
        @Option(help: "Stop after this many seconds.") var duration = 120.0

        func run() async throws {
            guard (1...255).contains(recipients), (1...1_000).contains(rounds), duration > 0 else {
                throw ValidationError("--recipients must be 1–255 (a group of 256), --rounds 1–1000, --duration more than 0.")
            }
            var options = PushBench.Options()
            options.recipients = recipients
            options.rounds = rounds
            options.maxSeconds = duration
            let report = try await target.withDatabase(serverArguments: ["--push-allow-loopback"]) { api, ws, pid, _ in
                try await PushBench(BenchTarget(api: api, webSocketURL: ws, serverPID: pid)).run(options) { print($0) }
            }
            func micros(_ value: Double?) -> String { value.map { String(format: "%.1f µs", $0) } ?? "- (needs the server's pid)" }
            ReportPrinter.print(
                [
                    "messages \(report.messages), pushes received \(report.pushes), missing \(report.missing)",
                    "server CPU per group message: \(micros(report.serverCPUMicrosPerPlainMessage)) unsubscribed, \(micros(report.serverCPUMicrosPerPushedMessage)) subscribed",
                    "server CPU per push: \(micros(report.serverCPUMicrosPerPush))",
                    String(format: "%.0f pushes/s", report.pushesPerSecond),
                    "push delay (send answered → push service) \(report.pushDelay?.summary ?? "-")",
                ], report)
            if report.missing != 0 { throw ExitCode(2) }
        }
    }
}
