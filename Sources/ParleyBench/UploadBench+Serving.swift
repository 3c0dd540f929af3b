import Foundation
import Histogram
import ParleyCore

extension UploadBench {
    /// Phase 2: one upload attached to a message, then fetched `downloads` times through its signed link.
    func serve(
        _ id: UploadID, digest: [UInt8], options: Options, sharing: Sharing, into report: inout Report, log: @Sendable (String) -> Void
    ) async throws {
        log("phase 2: one upload attached to a message, \(options.downloads) downloads by its signed link, \(options.downloadConcurrency) at a time")
        let path = try await sharing.share(id)
        // Untimed: checks the bytes, and leaves the file in the page cache (the "cached file").
        report.downloadVerified = try await sharing.tus.download(path, expected: options.size, hashing: true, until: sharing.deadline) == digest
        if !report.downloadVerified { report.fail("phase 2: the downloaded bytes' sha256 is not the uploaded one") }
        let before = UsageSample(target.serverPID)
        let start = ContinuousClock.now
        let results = await Self.concurrently(options.downloads, width: options.downloadConcurrency) { index in
            let began = ContinuousClock.now
            do {
                _ = try await sharing.tus.download(path, expected: options.size, hashing: false, until: sharing.deadline)
                return Result<Duration, BenchAPI.Failure>.success(ContinuousClock.now - began)
            } catch {
                return .failure(BenchAPI.Failure(description: "download \(index): \(error)"))
            }
        }
        report.downloadSeconds = (ContinuousClock.now - start).seconds
        let after = UsageSample(target.serverPID)
        var latency = Histogram<UInt64>.microseconds()
        for result in results {
            switch result {
            case .success(let took): latency.record(clamping: UInt64(max(0, took.seconds * 1_000_000)))
            case .failure(let error): report.fail(error.description)
            }
        }
        report.downloadLatency = Percentiles(latency)
        report.downloadsCompleted = Int(latency.totalCount)
        report.downloadsFailed = options.downloads - report.downloadsCompleted
        let bytes = Double(Int64(report.downloadsCompleted) * options.size)
        report.downloadGBPerSecond = bytes / 1e9 / max(report.downloadSeconds, 0.001)
        (report.serverCPUMillisPerMiBServed, report.benchCPUMillisPerMiBServed) = after.cpuMillis(since: before, per: bytes / Double(1 << 20))
    }

    /// Phase 3: a file of `size` bytes, then one of `large`, each uploaded, attached and downloaded
    /// alone, with the server's peak RSS reset before each: a streaming server's peak is the same.
    func memory(options: Options, sharing: Sharing, into report: inout Report, log: @Sendable (String) -> Void) async throws {
        // The large file repeats this block: the bench never holds it (nor its download) whole.
        let block = RepeatingBytes.random(1 << 20)
        let pid = target.serverPID
        for (index, bytes) in [options.size, options.large].enumerated() {
            log("phase 3 (first, on the fresh server): one file of \(bytes) bytes uploaded, attached and downloaded alone")
            var run = FileRun(bytes: bytes)
            if let pid { report.peakIsPerPhase = report.peakIsPerPhase && ProcessMemory.resetPeak(pid: pid) }
            run.serverRSSBeforeKiB = pid.flatMap(ProcessMemory.residentKiB)
            let file = RepeatingBytes(pattern: block, start: 0, length: bytes)
            let digest = file.sha256()
            let uploadStart = ContinuousClock.now
            let id = try await sharing.tus.upload(
                file, sha256: digest, name: "bench-large-\(index).bin", token: sharing.owner.token, chunk: options.chunk, until: sharing.deadline)
            run.uploadSeconds = (ContinuousClock.now - uploadStart).seconds
            let path = try await sharing.share(id)
            let downloadStart = ContinuousClock.now
            run.verified = try await sharing.tus.download(path, expected: bytes, hashing: true, until: sharing.deadline) == digest
            run.downloadSeconds = (ContinuousClock.now - downloadStart).seconds
            if !run.verified { report.fail("phase 3: the \(bytes)-byte file came back with another sha256") }
            run.serverPeakRSSKiB = pid.flatMap(ProcessMemory.peakResidentKiB)
            run.serverRSSAfterKiB = pid.flatMap(ProcessMemory.residentKiB)
            if index == 0 { report.control = run } else { report.large = run }
        }
    }

    /// Attaching and reading: `owner` sends its uploads to `reader`, who fetches them by signed links.
    struct Sharing: Sendable {
        let api: BenchAPI
        let tus: TusClient
        let owner: BenchAPI.Session
        let reader: BenchAPI.Session
        let deadline: ContinuousClock.Instant

        /// Attaches the upload to a message from owner to reader; returns reader's signed link to it.
        func share(_ id: UploadID) async throws -> String {
            let conversation = try await api.startConversation(owner, with: reader.user.id)
            let _: API.SendResponse = try await api.post(
                "/v1/messages",
                SendRequest(clientId: .random(), conversationId: conversation.id, text: "upload bench", attachments: [AttachmentRequest(uploadId: id)]),
                token: owner.token)
            let links: API.FileLinks = try await api.post("/v1/files/links", API.FileLinksRequest(ids: [id]), token: reader.token)
            guard let link = links.links.first(where: { $0.id == id }) else { throw BenchAPI.Failure(description: "no link to the attachment") }
            return link.url
        }
    }
}

/// The server's CPU and storage writes and the bench's own CPU at one moment (/proc).
struct UsageSample {
    let server: Int?
    let bench: Int?
    let written: Int?

    init(_ pid: Int32?) {
        server = pid.flatMap(ProcessCPU.microseconds)
        bench = ProcessCPU.microseconds(pid: getpid())
        written = pid.flatMap(ProcessIO.writtenBytes)
    }

    /// The server's and the bench's CPU since `before`, in ms per one of `units` (nil without a count).
    func cpuMillis(since before: UsageSample, per units: Double) -> (server: Double?, bench: Double?) {
        guard units > 0 else { return (nil, nil) }
        func per(_ now: Int?, _ then: Int?) -> Double? { now.flatMap { now in then.map { Double(now - $0) / 1000 / units } } }
        return (per(server, before.server), per(bench, before.bench))
    }
}
