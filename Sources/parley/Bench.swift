import ArgumentParser
import Foundation
import ParleyBench

/// `parley bench`: load and latency measurements over the real protocol, on loopback only.
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure delivery latency, throughput, connection memory and history speed.",
        discussion: """
            Without --url, starts `parley serve` as a child process on a temporary database (bcrypt cost 4, \
            rate limits lifted) and stops it afterwards. With --url, drives that server (loopback addresses only).
            Prints a human summary, then one JSON line.
            """,
        subcommands: [Messages.self, Groups.self, Connections.self, History.self, Search.self, Push.self, Uploads.self])

    struct Target: ParsableArguments {
        @Option(
            help:
                "A running server, e.g. http://127.0.0.1:8080 (loopback only; start it with high --sends-per-second, --logins-per-minute and --max-connections-per-address). Default: start one."
        )
        var url: String?
        @Option(help: "PID of the server given by --url, to report its memory.")
        var serverPid: Int32?
        @Option(help: "Durability of the server the bench starts: full or normal.")
        var durability = "full"
        @Option(help: "Database of the server the bench starts (e.g. postgres://user:password@127.0.0.1:5432/db). Default: a temporary SQLite file.")
        var database: String?

        /// Runs `body` against the target server, starting and stopping one if needed.
        func with<T>(_ body: (BenchAPI, String, Int32?) async throws -> T) async throws -> T {
            try await withDatabase { api, ws, pid, _ in try await body(api, ws, pid) }
        }

        /// As ``with(_:)``, also giving the SQLite file of a server the bench started (to measure what a run wrote).
        func withDatabase<T>(serverArguments: [String] = [], _ body: (BenchAPI, String, Int32?, String?) async throws -> T) async throws -> T {
            if let url {
                guard let host = URL(string: url)?.host, host == "localhost" || host == "::1" || host.hasPrefix("127.") else {
                    throw ValidationError("--url must be a loopback address (127.0.0.0/8, ::1 or localhost).")
                }
                let ws = url.replacingOccurrences(of: "http", with: "ws", options: .anchored) + "/v1/ws"
                let api = BenchAPI(baseURL: url)
                try await api.checkReachable()
                return try await body(api, ws, serverPid, nil)
            }
            FileLimits.raise()
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-bench-\(UUID().uuidString)")
            let sqliteFile = database == nil ? directory.appendingPathComponent("bench.sqlite").path : nil
            let server = try await ServerLauncher(
                binary: ServerLauncher.currentExecutable, database: database ?? directory.appendingPathComponent("bench.sqlite").path,
                extraArguments: ["--durability", durability] + serverArguments)
            // The server is a child in its own process group: stop it if the bench is interrupted too.
            let interrupts = [SIGINT, SIGTERM].map { signal in
                Foundation.signal(signal, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signal)
                source.setEventHandler {
                    server.stop()
                    try? FileManager.default.removeItem(at: directory)
                    Foundation.exit(128 + signal)
                }
                source.resume()
                return source
            }
            defer {
                interrupts.forEach { $0.cancel() }
                server.stop()
                try? FileManager.default.removeItem(at: directory)
            }
            return try await body(
                BenchAPI(baseURL: "http://127.0.0.1:\(server.port)"), "ws://127.0.0.1:\(server.port)/v1/ws", server.pid, sqliteFile)
        }
    }

    struct Messages: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "P pairs; each sender sends M messages to its partner.")
        @OptionGroup var target: Target
        @Option(
            help:
                "A recorded rung, the one definition the scripts and docs/benchmarks.md use: 1k, 5k, 20k or max. Sets --pairs, --messages, --rate and --window (given ones are ignored)."
        )
        var rung: MessageRung?
        @Option(help: "Sender/receiver pairs.") var pairs = 50
        @Option(help: "Messages per sender.") var messages = 200
        @Option(help: "Aggregate messages per second; 0 = as fast as possible.") var rate = 1000.0
        @Option(help: "Sends in flight per sender when --rate 0.") var window = 16
        @Option(help: "Stop sending after this many seconds.") var duration = 60.0
        @Option(help: "Connect the receivers to this server instead (another node of a cluster, loopback only), to measure cross-node delivery.")
        var receiverUrl: String?
        @Option(help: "Write each delivery's send time and latency (µs since sending began, a line each) to this file: when the slow ones happened.")
        var latencyLog: String?
        @Flag(help: "The mixed workload: of each 100 numbers a sender sends, 10 are reactions, 5 edits and 1 a delete (on its latest message).")
        var mix = false
        @Option(help: "With --rate: send at the rate for this many seconds first, not measured (a server just started answers its first sends slowly).")
        var warmUp = 0.0

        func validate() throws {
            guard (1...5000).contains(pairs), (1...1_000_000).contains(messages), rate >= 0, (1...1024).contains(window),
                duration > 0, duration <= 600
            else { throw ValidationError("pairs 1–5000, messages 1–1,000,000, rate ≥ 0, window 1–1024, duration 0–600 s.") }
            guard (0...60).contains(warmUp), warmUp == 0 || (rung?.shape.rate ?? rate) > 0 else {
                throw ValidationError("--warm-up is 0–60 s, and needs a --rate above 0.")
            }
        }

        func run() async throws {
            var options = MessageBench.Options()
            let (pairs, messages, rate, window) = rung?.shape ?? (pairs, messages, rate, window)
            options.pairs = pairs
            options.messagesPerSender = messages
            options.rate = rate > 0 ? rate : nil
            options.window = window
            options.maxSeconds = duration
            options.mix = mix
            options.warmUpSeconds = warmUp
            if let latencyLog {
                // Refused before the run, not after it: a run can take minutes.
                guard FileManager.default.createFile(atPath: latencyLog, contents: nil) else {
                    throw ValidationError("--latency-log: cannot write \(latencyLog).")
                }
                options.latencyLog = latencyLog
            }
            if let receiverUrl {
                guard let host = URL(string: receiverUrl)?.host, host == "localhost" || host == "::1" || host.hasPrefix("127.") else {
                    throw ValidationError("--receiver-url must be a loopback address (127.0.0.0/8, ::1 or localhost).")
                }
            }
            let receivers = receiverUrl.map { $0.replacingOccurrences(of: "http", with: "ws", options: .anchored) + "/v1/ws" }
            let report = try await target.with { api, ws, pid in
                try await MessageBench(BenchTarget(api: api, webSocketURL: ws, serverPID: pid, receiverWebSocketURL: receivers)).run(options) { print($0) }
            }
            ReportPrinter.print(
                [
                    "sent \(report.sent), acknowledged \(report.acknowledged), delivered \(report.delivered), errors \(report.errors), unanswered \(report.unanswered)",
                    "lost \(report.lost), duplicated \(report.duplicated), out of order \(report.outOfOrder)",
                    String(format: "throughput %.0f msgs/s over %.2f s (connect %.2f s)", report.throughput, report.seconds, report.connectSeconds),
                    "delivery \(report.delivery?.summary ?? "-")",
                    "ack      \(report.ack?.summary ?? "-")",
                    options.mix
                        ? "actions sent \(report.actionsSent), acknowledged \(report.actionsAcknowledged); action ack \(report.actionAck?.summary ?? "-")"
                        : "no actions (add --mix for the mixed workload)",
                    String(format: "durable operations (sends and actions acknowledged) %.0f/s", report.durablePerSecond),
                    "server CPU per durable operation: \(report.serverCPUMicrosPerOperation.map { String(format: "%.1f µs", $0) } ?? "-")",
                    "server CPU per delivered message: \(report.serverCPUMicrosPerMessage.map { String(format: "%.1f µs", $0) } ?? "- (needs the server's pid)")",
                    "bench (load generator) CPU per delivered message: \(report.benchCPUMicrosPerMessage.map { String(format: "%.1f µs", $0) } ?? "-")",
                    "sends left late (the load generator's own delays) \(report.sendLateness?.summary ?? "- (paced runs only)")",
                    "server RSS \(report.serverRSSBeforeKiB.map { "\($0 / 1024) MiB" } ?? "?") → \(report.serverRSSAfterKiB.map { "\($0 / 1024) MiB" } ?? "?")",
                ], report)
            if report.lost + report.duplicated + report.outOfOrder > 0 { throw ExitCode(2) }
        }
    }

    /// The rungs every recorded figure is measured on (`scripts/bench-ladder`, `scripts/bench-compare`).
    enum MessageRung: String, ExpressibleByArgument, CaseIterable {
        case oneK = "1k", fiveK = "5k", twentyK = "20k", max

        /// Pairs, messages per sender, aggregate rate (0: as fast as possible) and window.
        var shape: (pairs: Int, messages: Int, rate: Double, window: Int) {
            switch self {
            case .oneK: (50, 200, 1000, 16)
            case .fiveK: (100, 300, 5000, 16)
            case .twentyK: (200, 500, 20000, 16)
            case .max: (100, 300, 0, 16)
            }
        }
    }

    struct Connections: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Open C idle authenticated WebSockets and measure server memory.")
        @OptionGroup var target: Target
        @Option(help: "Connections to open.") var count = 10_000
        @Option(help: "Users the connections belong to.") var users = 100
        @Option(help: "Seconds to hold them open.") var hold = 5.0

        func validate() throws {
            guard (1...200_000).contains(count), (1...10_000).contains(users), (0...600).contains(hold) else {
                throw ValidationError("count 1–200,000, users 1–10,000, hold 0–600 s.")
            }
        }

        func run() async throws {
            var options = ConnectionBench.Options()
            options.connections = count
            options.users = users
            options.holdSeconds = hold
            let report = try await target.with { api, ws, pid in
                try await ConnectionBench(BenchTarget(api: api, webSocketURL: ws, serverPID: pid)).run(options) { print($0) }
            }
            ReportPrinter.print(
                [
                    String(format: "opened %d (failed %d) in %.2f s", report.opened, report.failed, report.connectSeconds),
                    "server RSS \(report.serverRSSBeforeKiB ?? 0) KiB → \(report.serverRSSOpenKiB ?? 0) KiB open → \(report.serverRSSClosedKiB ?? 0) KiB closed",
                    "per connection: \(report.bytesPerConnection.map { "\($0) bytes" } ?? "?")",
                    "server CPU per connect: \(report.serverCPUMicrosPerConnect.map { String(format: "%.1f µs", $0) } ?? "- (needs the server's pid)")",
                ], report)
        }
    }

    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Pages of 50 from a large conversation, and cold chat opens.")
        @OptionGroup var target: Target
        @Option(help: "Messages in the conversation.") var messages = 100_000
        @Option(help: "Pages to fetch.") var pages = 500
        @Option(help: "Cold opens (connect, hello, latest 50).") var coldOpens = 100

        func validate() throws {
            guard (51...2_000_000).contains(messages), (1...100_000).contains(pages), (0...10_000).contains(coldOpens) else {
                throw ValidationError("messages 51–2,000,000, pages 1–100,000, cold-opens 0–10,000.")
            }
        }

        func run() async throws {
            var options = HistoryBench.Options()
            options.messages = messages
            options.pages = pages
            options.coldOpens = coldOpens
            let report = try await target.with { api, ws, _ in
                try await HistoryBench(BenchTarget(api: api, webSocketURL: ws, serverPID: nil)).run(options) { print($0) }
            }
            ReportPrinter.print(
                [
                    String(format: "filled %d messages in %.1f s", messages, report.fillSeconds),
                    "page of 50  \(report.page?.summary ?? "-")",
                    "cold open   \(report.coldOpen?.summary ?? "-")",
                ], report)
        }
    }
}

/// Raises the open-files limit to its hard maximum (each connection is a file descriptor).
enum FileLimits {
    static func raise() {
        #if os(Linux)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(resource, &limit)
    }
}
