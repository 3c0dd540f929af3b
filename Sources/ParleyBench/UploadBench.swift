import AsyncHTTPClient
import Foundation
import Histogram
import ParleyCore

/// The files workload (issue #36), three phases against one server:
/// 1. U users make N tus uploads of S bytes, C at a time (POST with the sha256 promise, then the
///    bytes streamed in one PATCH or in chunks); every upload must then say `complete: true`.
/// 2. One of them, attached to a message, is fetched D times through a signed link, 8 at a time
///    (the file is in the page cache: the server's serving path, not the disk).
/// 3. Memory (run first, on the fresh server): one upload and download of S bytes, then one of a
///    large file, each with the server's peak RSS of its own: a streaming server's peak does not
///    grow with the size.
/// MB and GB are 10^6 and 10^9 bytes (the units); CPU is per MiB.
public struct UploadBench: Sendable {
    public struct Options: Codable, Sendable {
        public var users = 10
        public var uploads = 100
        public var size: Int64 = 5 << 20
        public var concurrency = 100
        /// Bytes per PATCH; nil sends each file in one.
        public var chunk: Int64?
        public var downloads = 200
        public var downloadConcurrency = 8
        /// Phase 3's large file; 0 skips phase 3.
        public var large: Int64 = 500 << 20
        public var maxSeconds: Double = 600
        public init() {}

        /// What a server needs for this run: the per-user upload rate, quota and size limits lifted.
        public var serverArguments: [String] {
            ["--uploads-per-minute", "100000", "--upload-quota-bytes", String(Int64(1) << 40), "--max-upload-bytes", String(max(size, large))]
        }
    }

    public struct Report: Codable, Sendable {
        public var options: Options
        /// Phase 1: completed means answered and then `complete: true` with every byte.
        public var uploadsCompleted = 0, uploadsFailed = 0
        public var uploadSeconds = 0.0, uploadMBPerSecond = 0.0
        /// From the POST to the last PATCH's answer.
        public var uploadLatency: Percentiles?
        public var serverCPUMillisPerMiBUploaded: Double?, benchCPUMillisPerMiBUploaded: Double?
        /// What the server wrote to storage (/proc/<pid>/io) per MiB uploaded: staging, and the database.
        public var serverWrittenMiBPerMiBUploaded: Double?
        public var serverRSSBeforeKiB: Int?, serverPeakRSSUploadsKiB: Int?, serverRSSAfterUploadsKiB: Int?
        /// Phase 2.
        public var downloadsCompleted = 0, downloadsFailed = 0
        public var downloadSeconds = 0.0, downloadGBPerSecond = 0.0
        public var downloadLatency: Percentiles?
        public var serverCPUMillisPerMiBServed: Double?, benchCPUMillisPerMiBServed: Double?
        /// The first download (untimed: it also warms the cache) hashed to the uploaded sha256.
        public var downloadVerified = false
        /// Phase 3: whether the server's peak could be reset between phases (else peaks are since its start).
        public var peakIsPerPhase = false
        public var control: FileRun?, large: FileRun?
        /// The first failures, for the summary; `failures` counts them all.
        public var failureSamples: [String] = []
        public var failures = 0

        mutating func fail(_ what: String) {
            failures += 1
            if failureSamples.count < 10 { failureSamples.append(what) }
        }
    }

    /// One file uploaded and downloaded alone (phase 3), with the server's memory around it.
    public struct FileRun: Codable, Sendable {
        public var bytes: Int64
        public var uploadSeconds = 0.0, downloadSeconds = 0.0
        public var verified = false
        public var serverRSSBeforeKiB: Int?, serverPeakRSSKiB: Int?, serverRSSAfterKiB: Int?
    }

    /// Distance between the starts of two phase-1 files in their shared random pool: any shift of
    /// random bytes makes another file, and a small one keeps the pool near one file's size.
    static let stride = 64

    let target: BenchTarget
    public init(_ target: BenchTarget) { self.target = target }

    public func run(_ options: Options, log: @Sendable (String) -> Void = { _ in }) async throws -> Report {
        let client = TusClient.makeClient(connections: max(options.concurrency, options.downloadConcurrency) + 2)
        do {
            let report = try await run(options, tus: TusClient(client: client, baseURL: target.api.baseURL), log: log)
            try await client.shutdown()
            return report
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    func run(_ options: Options, tus: TusClient, log: @Sendable (String) -> Void) async throws -> Report {
        var report = Report(options: options)
        let deadline = ContinuousClock.now + .seconds(options.maxSeconds)
        log("registering \(options.users) users")
        let prefix = "u" + String(UInt32.random(in: 0...UInt32.max), radix: 36) + "_"
        let users = try await target.api.registerMany(prefix: prefix, count: options.users)
        let pid = target.serverPID
        report.peakIsPerPhase = pid != nil
        // Phase 3 first, on the fresh server: phase 1's 100 uploads at once leave the heap large (the
        // allocator keeps what they freed), and a later file could grow into it without raising RSS.
        if options.large > 0 {
            do {
                let sharing = Sharing(api: target.api, tus: tus, owner: users[0], reader: users[1], deadline: deadline)
                try await memory(options: options, sharing: sharing, into: &report, log: log)
            } catch {
                report.fail("phase 3: \(error)")
            }
        }
        let pool = RepeatingBytes.random(Int(options.size) + options.uploads * Self.stride)
        let files = (0..<options.uploads).map { RepeatingBytes(pattern: pool, start: $0 * Self.stride, length: options.size) }
        log("hashing \(options.uploads) files of \(options.size) bytes (their sha256 promises)")
        let digests = files.map { $0.sha256() }

        log("phase 1: \(options.uploads) uploads, \(options.concurrency) at a time")
        report.serverRSSBeforeKiB = pid.flatMap(ProcessMemory.residentKiB)
        if let pid { report.peakIsPerPhase = ProcessMemory.resetPeak(pid: pid) && report.peakIsPerPhase }
        let before = UsageSample(pid)
        let start = ContinuousClock.now
        let results = await Self.concurrently(options.uploads, width: options.concurrency) { index in
            let began = ContinuousClock.now
            do {
                let id = try await tus.upload(
                    files[index], sha256: digests[index], name: "bench-\(index).bin", token: users[index % users.count].token,
                    chunk: options.chunk, until: deadline)
                return Result<(UploadID, Duration), BenchAPI.Failure>.success((id, ContinuousClock.now - began))
            } catch {
                return .failure(BenchAPI.Failure(description: "upload \(index): \(error)"))
            }
        }
        report.uploadSeconds = (ContinuousClock.now - start).seconds
        let after = UsageSample(pid)
        report.serverPeakRSSUploadsKiB = pid.flatMap(ProcessMemory.peakResidentKiB)
        report.serverRSSAfterUploadsKiB = pid.flatMap(ProcessMemory.residentKiB)
        var latency = Histogram<UInt64>.microseconds()
        for case .success(let (_, took)) in results { latency.record(clamping: UInt64(max(0, took.seconds * 1_000_000))) }
        report.uploadLatency = Percentiles(latency)
        let mebibytes = Double(Int64(latency.totalCount) * options.size) / Double(1 << 20)
        report.uploadMBPerSecond = Double(Int64(latency.totalCount) * options.size) / 1e6 / max(report.uploadSeconds, 0.001)
        (report.serverCPUMillisPerMiBUploaded, report.benchCPUMillisPerMiBUploaded) = after.cpuMillis(since: before, per: mebibytes)
        if let written = after.written, let writtenBefore = before.written, mebibytes > 0 {
            report.serverWrittenMiBPerMiBUploaded = Double(written - writtenBefore) / Double(1 << 20) / mebibytes
        }

        log("checking every upload is complete")
        let checks = await Self.concurrently(options.uploads, width: 16) { index -> String? in
            guard case .success(let (id, _)) = results[index] else { return nil }
            do {
                let upload = try await tus.status(id, token: users[index % users.count].token, until: deadline)
                return upload.complete && upload.offset == options.size && upload.size == options.size
                    ? nil : "upload \(index): complete \(upload.complete), \(upload.offset) of \(upload.size) bytes"
            } catch {
                return "upload \(index): \(error)"
            }
        }
        for (result, check) in zip(results, checks) {
            if case .failure(let error) = result {
                report.fail(error.description)
            } else if let check {
                report.fail(check)
            } else {
                report.uploadsCompleted += 1
            }
        }
        report.uploadsFailed = options.uploads - report.uploadsCompleted
        let uploaded = results.enumerated().compactMap { index, result -> (index: Int, id: UploadID)? in
            guard case .success(let (id, _)) = result, checks[index] == nil else { return nil }
            return (index, id)
        }
        guard let served = uploaded.first else {
            report.fail("no upload completed: nothing to serve")
            return report
        }
        let sharing = Sharing(
            api: target.api, tus: tus, owner: users[served.index % users.count], reader: users[(served.index + 1) % users.count], deadline: deadline)
        do {
            try await serve(served.id, digest: digests[served.index], options: options, sharing: sharing, into: &report, log: log)
        } catch {
            report.fail("phase 2: \(error)")
        }
        return report
    }

    /// Runs `work` for 0..<`count`, `width` at a time; the results in index order.
    static func concurrently<T: Sendable>(_ count: Int, width: Int, _ work: @escaping @Sendable (Int) async -> T) async -> [T] {
        var results = [T?](repeating: nil, count: count)
        await withTaskGroup(of: (Int, T).self) { group in
            var next = 0
            for _ in 0..<min(max(1, width), count) {
                let index = next
                group.addTask { (index, await work(index)) }
                next += 1
            }
            while let (index, result) = await group.next() {
                results[index] = result
                guard next < count else { continue }
                let index = next
                group.addTask { (index, await work(index)) }
                next += 1
            }
        }
        return results.compactMap { $0 }
    }
}
