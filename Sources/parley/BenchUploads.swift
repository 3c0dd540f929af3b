import ArgumentParser
import Foundation
import ParleyBench

extension Bench {
    /// `parley bench uploads`: tus upload throughput and CPU, serving a cached file, memory against file size (issue #36).
    struct Uploads: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "N concurrent tus uploads; D downloads of one by its signed link; one large file, for the server's memory.",
            discussion: """
                Starts its own server with the upload limits lifted (or use --url with a server started with --uploads-per-minute \
                100000, a large --upload-quota-bytes and --max-upload-bytes of at least --large). An upload that is not complete \
                afterwards, a failed download or bytes that come back different fail the run (exit 2).
                """)
        @OptionGroup var target: Bench.Target
        @Option(help: "Users the uploads are spread over (at least 2: phase 2 sends a file from one to another).") var users = 10
        @Option(help: "Uploads in phase 1.") var uploads = 100
        @Option(help: "Bytes per upload (5MiB, 512KiB, 1GB, a number…).") var size = ByteSize(5 << 20)
        @Option(help: "Uploads in flight.") var concurrency = 100
        @Option(help: "Bytes per PATCH (default: each file in one).") var chunk: ByteSize?
        @Option(help: "Downloads of one cached file in phase 2.") var downloads = 200
        @Option(help: "Downloads in flight.") var downloadConcurrency = 8
        @Option(help: "The large file of phase 3 (0 skips it).") var large = ByteSize(500 << 20)
        @Option(help: "Stop after this many seconds.") var duration = 600.0

        func validate() throws {
            guard (2...1_000).contains(users), (1...100_000).contains(uploads), (1...1_000).contains(concurrency) else {
                throw ValidationError("--users 2–1000, --uploads 1–100,000, --concurrency 1–1000.")
            }
            // The bench holds one pool of --size bytes (its uploads are slices of it); a large file is generated.
            guard (1...(1 << 30)).contains(size.bytes), (0...(64 << 30)).contains(large.bytes), chunk.map({ $0.bytes >= 1 << 10 }) ?? true else {
                throw ValidationError("--size 1 B–1 GiB, --large 0–64 GiB, --chunk at least 1 KiB.")
            }
            // The bench hashes every file before sending it (the sha256 promise): this keeps that to a minute or so.
            guard Int64(uploads) * size.bytes <= 64 << 30 else { throw ValidationError("--uploads × --size must be at most 64 GiB.") }
            guard (1...100_000).contains(downloads), (1...1_000).contains(downloadConcurrency), duration > 0, duration <= 3600 else {
                throw ValidationError("--downloads 1–100,000, --download-concurrency 1–1000, --duration 0–3600 s.")
            }
        }

        func run() async throws {
            var options = UploadBench.Options()
            options.users = users
            options.uploads = uploads
            options.size = size.bytes
            options.concurrency = concurrency
            options.chunk = chunk?.bytes
            options.downloads = downloads
            options.downloadConcurrency = downloadConcurrency
            options.large = large.bytes
            options.maxSeconds = duration
            // SQLite keeps the files beside its temporary database (removed with it); PostgreSQL would use ./data/files.
            let files = target.database == nil ? nil : FileManager.default.temporaryDirectory.appendingPathComponent("parley-bench-files-\(UUID().uuidString)")
            defer { files.map { try? FileManager.default.removeItem(at: $0) } }
            let report = try await target.withDatabase(serverArguments: options.serverArguments + (files.map { ["--files", $0.path] } ?? [])) {
                api, ws, pid, _ in
                try await UploadBench(BenchTarget(api: api, webSocketURL: ws, serverPID: pid)).run(options) { print($0) }
            }
            ReportPrinter.print(Self.summary(report), report)
            if report.failures > 0 { throw ExitCode(2) }
        }

        static func summary(_ report: UploadBench.Report) -> [String] {
            let options = report.options
            func ms(_ value: Double?) -> String { value.map { String(format: "%.2f ms", $0) } ?? "- (needs the server's pid)" }
            func mib(_ kib: Int?) -> String { kib.map { String(format: "%.0f MiB", Double($0) / 1024) } ?? "?" }
            func file(_ run: UploadBench.FileRun?) -> String {
                guard let run else { return "skipped (--large 0, or it failed)" }
                return String(
                    format: "%@: up %.0f MB/s, down %.0f MB/s, bytes %@; server RSS %@ → peak %@ → %@ after", ByteSize(run.bytes).description,
                    Double(run.bytes) / 1e6 / max(run.uploadSeconds, 0.001), Double(run.bytes) / 1e6 / max(run.downloadSeconds, 0.001),
                    run.verified ? "verified" : "DIFFERENT", mib(run.serverRSSBeforeKiB), mib(run.serverPeakRSSKiB), mib(run.serverRSSAfterKiB))
            }
            return [
                "phase 1: \(options.uploads) uploads of \(ByteSize(options.size)) by \(options.users) users, \(options.concurrency) in flight, "
                    + (options.chunk.map { "PATCHes of \(ByteSize($0))" } ?? "one PATCH each")
                    + ": completed \(report.uploadsCompleted), failed \(report.uploadsFailed)",
                String(format: "  %.0f MB/s over %.2f s; per upload %@", report.uploadMBPerSecond, report.uploadSeconds, report.uploadLatency?.summary ?? "-"),
                "  server CPU per MiB: \(ms(report.serverCPUMillisPerMiBUploaded)); bench \(ms(report.benchCPUMillisPerMiBUploaded)); server wrote "
                    + (report.serverWrittenMiBPerMiBUploaded.map { String(format: "%.2f MiB per MiB", $0) } ?? "?"),
                "  server RSS \(mib(report.serverRSSBeforeKiB)) before → peak \(mib(report.serverPeakRSSUploadsKiB)) → \(mib(report.serverRSSAfterUploadsKiB)) after",
                "phase 2: \(options.downloads) downloads of one \(ByteSize(options.size)) file, \(options.downloadConcurrency) in flight: completed \(report.downloadsCompleted), failed \(report.downloadsFailed); bytes \(report.downloadVerified ? "verified (sha256)" : "NOT verified")",
                String(
                    format: "  %.2f GB/s over %.2f s; per download %@", report.downloadGBPerSecond, report.downloadSeconds,
                    report.downloadLatency?.summary ?? "-"),
                "  server CPU per MiB served: \(ms(report.serverCPUMillisPerMiBServed)); bench \(ms(report.benchCPUMillisPerMiBServed))",
                "phase 3 (run first, on the fresh server; peaks \(report.peakIsPerPhase ? "reset before each file" : "since the server started")): \(file(report.control))",
                "  \(file(report.large))",
            ] + report.failureSamples.map { "failure: \($0)" } + (report.failures > report.failureSamples.count ? ["… \(report.failures) failures in all"] : [])
        }
    }
}

/// A size option: a whole number with a unit, `KiB`, `MiB`, `GiB` (powers of 2), `kB`, `MB`, `GB`
/// (powers of 10) or `B`; a bare number is bytes.
struct ByteSize: ExpressibleByArgument, CustomStringConvertible {
    let bytes: Int64

    init(_ bytes: Int64) { self.bytes = bytes }

    init?(argument: String) {
        let text = argument.trimmingCharacters(in: .whitespaces)
        // Longest units first: "MiB" and "MB" also end in "B".
        let units: [(String, Int64)] = [("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("kB", 1000), ("MB", 1_000_000), ("GB", 1_000_000_000), ("B", 1)]
        let (digits, unit) = units.first { text.hasSuffix($0.0) }.map { (text.dropLast($0.0.count), $0.1) } ?? (Substring(text), 1)
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int64(digits), value <= Int64.max / unit else { return nil }
        bytes = value * unit
    }

    /// In the largest binary unit it is a whole number of (`5MiB`), else in bytes.
    var description: String {
        for (unit, size) in [("GiB", Int64(1) << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] where bytes >= size && bytes % size == 0 {
            return "\(bytes / size)\(unit)"
        }
        return "\(bytes)B"
    }
}
