import ArgumentParser
import Foundation
import ParleyBench
import ParleySQLite

/// `parley torture`: the crash checker. Runs this binary's server under retrying, resuming clients,
/// SIGKILLs it at random moments, restarts it on the same database, and checks the guarantees.
struct Torture: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Kill the server under load again and again, then check that no guarantee broke.",
        discussion: """
            Every acknowledged message stored exactly once; every clientId written stored exactly once after the \
            drain; seq gapless; each sender's order kept; every receiver got every message once with gapless \
            stream positions (or an explicit resync); every restart came up without repair, and \
            PRAGMA integrity_check is ok at the end. Exits 1 when anything broke. Loopback only.
            """)

    @Option(help: "How many times to SIGKILL the server.")
    var kills = 20
    @Option(help: "Pairs of users chatting (each user writes every 15 ms).")
    var pairs = 4
    @Option(help: "Shortest time between kills, in seconds.")
    var minGap = 0.3
    @Option(help: "Longest time between kills, in seconds.")
    var maxGap = 1.5
    @Option(help: "Server durability: full or normal.")
    var durability = "full"
    @Option(help: "Folder for the database (e.g. on disk or tmpfs). Default: a new temporary folder.")
    var directory: String?

    func validate() throws {
        guard (1...10_000).contains(kills) else { throw ValidationError("--kills must be 1…10000.") }
        guard (1...100).contains(pairs) else { throw ValidationError("--pairs must be 1…100.") }
        guard minGap > 0, maxGap >= minGap, maxGap <= 60 else { throw ValidationError("Need 0 < --min-gap ≤ --max-gap ≤ 60.") }
        guard ["full", "normal"].contains(durability) else { throw ValidationError("--durability must be full or normal.") }
    }

    func run() async throws {
        FileLimits.raise()
        let folder = URL(fileURLWithPath: directory ?? FileManager.default.temporaryDirectory.path)
            .appendingPathComponent("parley-torture-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("torture.sqlite").path
        var options = CrashCheck.Options(binary: ServerLauncher.currentExecutable, database: database)
        options.kills = kills
        options.pairs = pairs
        options.gap = minGap...maxGap
        options.serveArguments = ["--durability", durability]
        var report = try await CrashCheck(options: options).run { say($0) }
        let integrity = try await SQLiteStore(path: database).integrityCheck()
        if integrity != ["ok"] { report.violations.append("integrity_check: \(integrity.joined(separator: "; "))") }

        let restarts = report.restartSeconds.sorted()
        say(
            """
            \(report.kills) kills, \(report.messages) messages written, \(report.reconnects) reconnects, \(report.resyncs) resyncs; \
            restarts \(String(format: "%.2f", restarts.first ?? 0))–\(String(format: "%.2f", restarts.last ?? 0)) s; \
            integrity_check: \(integrity.joined(separator: "; "))
            """)
        say(report.violations.isEmpty ? "OK: every guarantee held." : "VIOLATIONS (\(report.violations.count)):")
        for violation in report.violations.prefix(50) { say("  - \(violation)") }
        say(String(decoding: try JSONEncoder().encode(report), as: UTF8.self))
        if !report.violations.isEmpty { throw ExitCode(1) }
    }
}
