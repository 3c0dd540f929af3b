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
            drain; seq gapless; each sender's order kept; every receiver got every message once with stream \
            positions in order (gapless for pairs; a group message skips positions) or an explicit resync; \
            every restart came up without repair, and PRAGMA integrity_check is ok at the end; each group's offline member was pushed its newest \
            message (a push service on loopback). Exits 1 when anything broke. Loopback only.
            """)

    @Option(help: "How many times to SIGKILL the server.")
    var kills = 20
    @Option(help: "Pairs of users chatting (each user writes every 15 ms).")
    var pairs = 4
    @Option(help: "Groups of three users writing to their group (each every 15 ms), beside the pairs.")
    var groups = 2
    @Option(help: "Users sending files (resumable uploads) to a partner each, beside the pairs.")
    var uploaders = 1
    @Option(help: "Shortest time between kills, in seconds.")
    var minGap = 0.3
    @Option(help: "Longest time between kills, in seconds.")
    var maxGap = 1.5
    @Option(help: "Server durability: full or normal.")
    var durability = "full"
    @Option(help: "Folder for the database (e.g. on disk or tmpfs). Default: a new temporary folder.")
    var directory: String?
    @Flag(help: "Check a cluster instead: nodes on the PostgreSQL given by --database, killed, frozen, the database restarted.")
    var cluster = false
    @Option(help: "With --cluster: the PostgreSQL database the nodes share (postgres://…; its tables are used as they are).")
    var database: String?
    @Option(help: "With --cluster: how many nodes.")
    var nodes = 3
    @Option(help: "With --cluster: how many times to restart PostgreSQL, with --restart-database.")
    var databaseRestarts = 3
    @Option(help: "With --cluster: a shell command that restarts PostgreSQL (stop fast, then start), e.g. 'scripts/postgres restart DIR PORT'.")
    var restartDatabase: String?
    @Option(help: "With --cluster: seconds one node stays frozen (SIGSTOP); 0 for none.")
    var freezeSeconds = 20.0

    func validate() throws {
        guard (1...10_000).contains(kills) else { throw ValidationError("--kills must be 1…10000.") }
        guard (1...100).contains(pairs) else { throw ValidationError("--pairs must be 1…100.") }
        guard (0...100).contains(groups) else { throw ValidationError("--groups must be 0…100.") }
        guard (0...20).contains(uploaders) else { throw ValidationError("--uploaders must be 0…20.") }
        guard minGap > 0, maxGap >= minGap, maxGap <= 60 else { throw ValidationError("Need 0 < --min-gap ≤ --max-gap ≤ 60.") }
        guard ["full", "normal"].contains(durability) else { throw ValidationError("--durability must be full or normal.") }
        if cluster {
            guard let database, database.hasPrefix("postgres://") || database.hasPrefix("postgresql://") else {
                throw ValidationError("--cluster needs --database postgres://… (the nodes share it).")
            }
            guard (1...16).contains(nodes) else { throw ValidationError("--nodes must be 1…16.") }
            guard (0...1000).contains(databaseRestarts) else { throw ValidationError("--database-restarts must be 0…1000.") }
            guard databaseRestarts == 0 || restartDatabase != nil else {
                throw ValidationError("--database-restarts needs --restart-database 'COMMAND' (or --database-restarts 0).")
            }
            guard (0...600).contains(freezeSeconds) else { throw ValidationError("--freeze-seconds must be 0…600.") }
        }
    }

    func run() async throws {
        FileLimits.raise()
        if cluster { return try await runCluster() }
        let folder = URL(fileURLWithPath: directory ?? FileManager.default.temporaryDirectory.path)
            .appendingPathComponent("parley-torture-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("torture.sqlite").path
        var options = CrashCheck.Options(binary: ServerLauncher.currentExecutable, database: database)
        options.kills = kills
        options.pairs = pairs
        options.groups = groups
        options.uploaders = uploaders
        options.gap = minGap...maxGap
        options.serveArguments = ["--durability", durability]
        options.checkpoint = { path in try await SQLiteStore(path: path).checkpointTruncatingWAL() }
        var report = try await CrashCheck(options: options).run { say($0) }
        let integrity = try await SQLiteStore(path: database).integrityCheck()
        if integrity != ["ok"] { report.violations.append("integrity_check: \(integrity.joined(separator: "; "))") }

        let restarts = report.restartSeconds.sorted()
        say(
            """
            \(report.kills) kills, \(report.messages) messages, \(report.actions) actions and \(report.receipts) read receipts written, \(report.reconnects) reconnects, \(report.resyncs) resyncs; \
            \(report.files) files sent (\(report.uploadResumes) uploads resumed); \
            restarts \(String(format: "%.2f", restarts.first ?? 0))–\(String(format: "%.2f", restarts.last ?? 0)) s; \
            integrity_check: \(integrity.joined(separator: "; "))
            """)
        try conclude(report)
    }

    private func conclude(_ report: CrashCheckReport) throws {
        say(report.violations.isEmpty ? "OK: every guarantee held." : "VIOLATIONS (\(report.violations.count)):")
        for violation in report.violations.prefix(50) { say("  - \(violation)") }
        say(String(decoding: try JSONEncoder().encode(report), as: UTF8.self))
        if !report.violations.isEmpty { throw ExitCode(1) }
    }

    private func runCluster() async throws {
        let command = restartDatabase
        var options = ClusterCrashCheck.Options(binary: ServerLauncher.currentExecutable, database: database ?? "") {
            guard let command else { return }
            // ChildProcess: a PostgreSQL server it starts keeps none of this process's sockets.
            let status = try await ChildProcess.run(command)
            guard status == 0 else { throw ValidationError("--restart-database exited with status \(status).") }
        }
        options.nodes = nodes
        options.pairs = pairs
        options.groups = groups
        options.kills = kills
        options.databaseRestarts = databaseRestarts
        options.freezeSeconds = freezeSeconds
        options.gap = minGap...maxGap
        let report = try await ClusterCrashCheck(options: options).run { say($0) }
        say(
            """
            \(nodes) nodes: \(report.kills) kills, \(report.databaseRestarts) PostgreSQL restarts, \(report.freezes) freezes; \
            \(report.messages) messages, \(report.actions) actions and \(report.receipts) read receipts written, \(report.reconnects) reconnects, \(report.resyncs) resyncs
            """)
        try conclude(report)
    }
}
