import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import ParleyCore
import Synchronization

/// Rule 10 of the crash check: files uploaded while the server is killed. Each uploader sends file
/// after file to its partner as a tus client that survives crashes would: it creates the upload
/// (with the sha256 promise), PATCHes 256 KiB chunks with an `Upload-Checksum`, and after any failure
/// asks the server where the upload stands (HEAD) and goes on from there; once the file is
/// complete it sends one message carrying it, by one clientId, again until answered.
///
/// It records a violation when an offset the server acknowledged is lost (HEAD answers less after
/// a restart), when a complete upload is refused as an attachment, or when any answer is one a
/// correct server never gives. ``check(api:)`` then reads the conversation: each file sent is in
/// exactly one message, and the partner downloads exactly its bytes.
final class CrashCheckUploader: Sendable {
    struct SentFile: Sendable {
        var upload: UploadID
        var clientId: ClientMessageID
        var size: Int64
        var sha256: [UInt8]
    }

    private struct State {
        var sent: [SentFile] = []
        var violations: [String] = []
        var resumes = 0
        var unfinished = 0
    }

    let owner: BenchAPI.Session
    let reader: BenchAPI.Session
    let tus: TusClient
    static let chunk = 256 << 10
    static let fileLimit = Duration.seconds(120)
    private let state = Mutex(State())

    init(owner: BenchAPI.Session, reader: BenchAPI.Session, tus: TusClient) {
        self.owner = owner
        self.reader = reader
        self.tus = tus
    }

    var sent: [SentFile] { state.withLock { $0.sent } }
    var resumes: Int { state.withLock { $0.resumes } }
    var violations: [String] { state.withLock { $0.violations } }

    private func violation(_ text: String) { state.withLock { $0.violations.append("uploads of \(owner.user.username): \(text)") } }

    /// Sends files until `stop` (or `until`), then finishes the one under way. Each file has
    /// ``fileLimit`` from its start: a file the server cannot take in that long, through kills
    /// that last a fraction of a second, is a failure in itself.
    func run(stop: Flag, until end: ContinuousClock.Instant) async {
        var index = 0
        while !stop.isSet, ContinuousClock.now < end {
            index += 1
            // Random bytes (so no two files are one blob), 64 KiB to 1.5 MiB: several chunks each.
            let size = Int.random(in: (64 << 10)...(3 << 19))
            let bytes = RepeatingBytes(pattern: RepeatingBytes.random(size), start: 0, length: Int64(size))
            if await !send(bytes, name: "crash-\(index).bin", until: ContinuousClock.now.advanced(by: Self.fileLimit)) {
                state.withLock { $0.unfinished += 1 }
                return
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// One file from creation to its message; false if the deadline came first.
    private func send(_ bytes: RepeatingBytes, name: String, until deadline: ContinuousClock.Instant) async -> Bool {
        let digest = bytes.sha256()
        guard let id = await create(bytes.length, name: name, sha256: digest, until: deadline) else { return false }
        var acknowledged: Int64 = 0
        var offset: Int64 = 0
        while offset < bytes.length {
            guard ContinuousClock.now < deadline else { return false }
            let count = min(Int64(Self.chunk), bytes.length - offset)
            let answer = await patch(id, bytes, at: offset, count: count, until: deadline)
            if answer?.status == .noContent, let reached = answer?.offset {
                if reached != offset + count { violation("upload \(id): a PATCH of \(count) bytes at \(offset) answered offset \(reached)") }
                acknowledged = reached
                offset = reached
                continue
            }
            if answer?.status == .conflict, let stored = answer?.offset, stored < acknowledged {
                violation("upload \(id): the server acknowledged \(acknowledged) bytes, then said (409) it had \(stored)")
            }
            if let answer, ![.conflict, .locked, .serviceUnavailable, .tooManyRequests].contains(answer.status) {
                violation("PATCH at \(offset) answered \(answer.status.code) \(answer.body.prefix(120))")
                return false
            }
            // Failed, cut off, or refused for a passing reason: ask where it stands.
            state.withLock { $0.resumes += 1 }
            guard let stored = await head(id, until: deadline) else { return false }
            if stored < acknowledged { violation("upload \(id): the server acknowledged \(acknowledged) bytes, then had \(stored)") }
            offset = stored
        }
        let clientId = ClientMessageID.random()
        guard await attach(id, clientId: clientId, until: deadline) else { return false }
        state.withLock { $0.sent.append(SentFile(upload: id, clientId: clientId, size: bytes.length, sha256: digest)) }
        return true
    }

    private func create(_ length: Int64, name: String, sha256: [UInt8], until deadline: ContinuousClock.Instant) async -> UploadID? {
        var request = tus.request("/v1/uploads", .POST, token: owner.token)
        request.headers.add(name: "Upload-Length", value: String(length))
        request.headers.add(name: "Upload-Metadata", value: "filename \(Data(name.utf8).base64EncodedString()),sha256 \(Data(sha256).base64EncodedString())")
        // An answer lost in a crash leaves an upload nobody finishes: the server removes it after a day.
        return await retrying(until: deadline) { () async throws -> UploadID? in
            let answer = try await self.execute(request, deadline)
            guard answer.status == .created else { return try self.passing(answer, "POST /v1/uploads") }
            return try JSONDecoder().decode(API.Upload.self, from: Data(answer.body.utf8)).id
        }
    }

    private func patch(_ id: UploadID, _ bytes: RepeatingBytes, at offset: Int64, count: Int64, until deadline: ContinuousClock.Instant) async
        -> (status: HTTPResponseStatus, offset: Int64?, body: String)?
    {
        var request = tus.request("/v1/uploads/\(id.rawValue)", .PATCH, token: owner.token)
        request.headers.add(name: "Content-Type", value: "application/offset+octet-stream")
        request.headers.add(name: "Upload-Offset", value: String(offset))
        var hash = SHA256()
        bytes.slice(at: offset, count: Int(count)).withUnsafeReadableBytes { hash.update(bufferPointer: $0) }
        request.headers.add(name: "Upload-Checksum", value: "sha256 \(Data(hash.finalize()).base64EncodedString())")
        request.body = .bytes(bytes.slice(at: offset, count: Int(count)))
        guard let answer = try? await execute(request, deadline) else { return nil }
        return (answer.status, answer.headers.first(name: "Upload-Offset").flatMap { Int64($0) }, answer.body)
    }

    /// The server's offset, asked until it answers.
    private func head(_ id: UploadID, until deadline: ContinuousClock.Instant) async -> Int64? {
        let request = tus.request("/v1/uploads/\(id.rawValue)", .HEAD, token: owner.token)
        return await retrying(until: deadline) { () async throws -> Int64? in
            let answer = try await self.execute(request, deadline)
            guard answer.status == .ok, let offset = answer.headers.first(name: "Upload-Offset").flatMap({ Int64($0) }) else {
                return try self.passing(answer, "HEAD \(id)")
            }
            return offset
        }
    }

    /// Sends the message with the file, by one clientId, until answered (a retry is a duplicate).
    private func attach(_ id: UploadID, clientId: ClientMessageID, until deadline: ContinuousClock.Instant) async -> Bool {
        let send = SendRequest(clientId: clientId, recipientId: reader.user.id, text: "", attachments: [AttachmentRequest(uploadId: id)])
        var request = tus.request("/v1/messages", .POST, token: owner.token)
        request.headers.add(name: "Content-Type", value: "application/json")
        guard let body = try? JSONEncoder().encode(send) else { return false }
        request.body = .bytes(ByteBuffer(bytes: Array(body)))
        return await retrying(until: deadline) { () async throws -> Bool? in
            let answer = try await self.execute(request, deadline)
            guard answer.status == .created || answer.status == .ok else { return try self.passing(answer, "sending upload \(id)") }
            return true
        } ?? false
    }

    /// Runs `attempt` until it returns a value or the deadline passes; a thrown error or nil tries
    /// again 100 ms later (the server restarting), except a ``Refused`` (recorded, ends it).
    private func retrying<T>(until deadline: ContinuousClock.Instant, _ attempt: @escaping () async throws -> T?) async -> T? {
        while ContinuousClock.now < deadline {
            do {
                if let value = try await attempt() { return value }
            } catch let refused as Refused {
                violation(refused.description)
                return nil
            } catch {}
            try? await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    struct Refused: Error, CustomStringConvertible { let description: String }

    /// nil for the answers a restarting server may give; a ``Refused`` for any other.
    private func passing<T>(_ answer: (status: HTTPResponseStatus, headers: HTTPHeaders, body: String), _ what: String) throws -> T? {
        guard [.serviceUnavailable, .tooManyRequests, .locked].contains(answer.status) else {
            throw Refused(description: "\(what) answered \(answer.status.code) \(answer.body.prefix(160))")
        }
        return nil
    }

    private func execute(_ request: HTTPClientRequest, _ deadline: ContinuousClock.Instant) async throws
        -> (status: HTTPResponseStatus, headers: HTTPHeaders, body: String)
    {
        let response = try await tus.client.execute(request, timeout: min(.seconds(10), try TusClient.remaining(deadline)))
        let body = try await response.body.collect(upTo: 1 << 20)
        return (response.status, response.headers, String(buffer: body))
    }
}

extension CrashCheckUploader {
    /// Rule 10, read back: each file sent is in exactly one message of the conversation, by its
    /// clientId, and the partner downloads exactly its bytes through a signed link.
    func check(api: BenchAPI, within limit: Duration) async throws -> [String] {
        var problems = violations
        let unfinished = state.withLock { $0.unfinished }
        if unfinished > 0 { problems.append("uploads of \(owner.user.username): a file was still unsent at the drain's end") }
        let stored = try await api.fullHistory(reader, .direct(owner.user.id, reader.user.id))
        let files = sent
        for file in files {
            let carrying = stored.filter { $0.attachments?.contains { $0.id == file.upload } == true }
            if carrying.count != 1 || carrying.first?.clientId != file.clientId {
                problems.append("upload \(file.upload): in \(carrying.count) messages, expected one by clientId \(file.clientId)")
            }
        }
        let deadline = ContinuousClock.now.advanced(by: limit)
        for batch in stride(from: 0, to: files.count, by: API.maxFileLinks).map({ files[$0..<min($0 + API.maxFileLinks, files.count)] }) {
            let links: API.FileLinks = try await api.post("/v1/files/links", API.FileLinksRequest(ids: batch.map(\.upload)), token: reader.token)
            for file in batch {
                guard let link = links.links.first(where: { $0.id == file.upload }) else {
                    problems.append("upload \(file.upload): no link for its reader")
                    continue
                }
                do {
                    let digest = try await tus.download(link.url, expected: file.size, hashing: true, until: deadline)
                    if digest != file.sha256 { problems.append("upload \(file.upload): the reader downloaded other bytes") }
                } catch {
                    problems.append("upload \(file.upload): its download failed: \(error)")
                }
            }
        }
        return problems
    }
}

/// The uploaders of a crash check (rule 10), each sending files to a partner of its own.
struct UploadLoad {
    let uploaders: [CrashCheckUploader]
    let tus: TusClient
    private let stop = Flag()
    private let tasks: [Task<Void, Never>]

    /// Registers `<names><n>a` / `b` for each uploader and starts them.
    init(uploaders count: Int, api: BenchAPI, names: String) async throws {
        tus = TusClient(client: TusClient.makeClient(connections: max(1, count) * 2), baseURL: api.baseURL)
        var uploaders: [CrashCheckUploader] = []
        for index in 0..<count {
            let owner = try await api.register("\(names)\(index)a"), reader = try await api.register("\(names)\(index)b")
            uploaders.append(CrashCheckUploader(owner: owner, reader: reader, tus: tus))
        }
        self.uploaders = uploaders
        // Bounded: until the check stops them (each file by its own limit), and a day at most.
        let stop = stop, end = ContinuousClock.now.advanced(by: .seconds(86_400))
        tasks = uploaders.map { uploader in Task { await uploader.run(stop: stop, until: end) } }
    }

    /// Stops starting files and waits for the ones under way.
    func finish() async {
        stop.set()
        for task in tasks { await task.value }
    }

    /// Rule 10 for every uploader; the client is shut down whatever happens (AsyncHTTPClient requires it).
    func judge(_ report: inout CrashCheckReport, api: BenchAPI) async throws {
        do {
            for uploader in uploaders {
                report.violations += try await uploader.check(api: api, within: .seconds(120))
                report.files += uploader.sent.count
                report.uploadResumes += uploader.resumes
            }
        } catch {
            try? await tus.client.shutdown()
            throw error
        }
        try await tus.client.shutdown()
    }
}
