import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import ParleyCore

/// A file the bench sends without holding it: byte p is `pattern[(start + p) % pattern.count]`.
/// Phase 1's files are slices of one random pool at different starts (so every file's bytes, and
/// sha256, differ: none is stored as a duplicate of another); phase 3's large file repeats a 1 MiB
/// random block, so its size never costs the bench memory.
struct RepeatingBytes: Sendable {
    let pattern: ByteBuffer
    let start: Int
    let length: Int64

    /// Up to `count` bytes from `position`, a slice of the pattern (no copy; shorter where it wraps).
    func slice(at position: Int64, count: Int) -> ByteBuffer {
        let within = Int((Int64(start) + position) % Int64(pattern.readableBytes))
        let length = min(count, pattern.readableBytes - within)
        return pattern.getSlice(at: pattern.readerIndex + within, length: length) ?? ByteBuffer()
    }

    /// The bytes of `range` as a request body, in pieces of at most `piece` bytes.
    func pieces(_ range: Range<Int64>, piece: Int = 256 << 10) -> Pieces { Pieces(bytes: self, range: range, piece: piece) }

    func sha256() -> [UInt8] {
        var hash = SHA256()
        var position: Int64 = 0
        // Bounded: each pass moves on by at least one byte (the pattern is never empty).
        while position < length {
            let chunk = slice(at: position, count: Int(min(Int64(1 << 20), length - position)))
            chunk.withUnsafeReadableBytes { hash.update(bufferPointer: $0) }
            position += Int64(max(1, chunk.readableBytes))
        }
        return Array(hash.finalize())
    }

    struct Pieces: AsyncSequence, Sendable {
        typealias Element = ByteBuffer
        let bytes: RepeatingBytes
        let range: Range<Int64>
        let piece: Int

        struct AsyncIterator: AsyncIteratorProtocol {
            let bytes: RepeatingBytes
            var position: Int64
            let end: Int64
            let piece: Int

            mutating func next() async -> ByteBuffer? {
                guard position < end else { return nil }
                let chunk = bytes.slice(at: position, count: Int(Swift.min(Int64(piece), end - position)))
                position += Int64(Swift.max(1, chunk.readableBytes))
                return chunk
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(bytes: bytes, position: range.lowerBound, end: range.upperBound, piece: piece) }
    }

    /// `count` random bytes.
    static func random(_ count: Int) -> ByteBuffer {
        var generator = SystemRandomNumberGenerator()
        var buffer = ByteBuffer()
        buffer.reserveCapacity(count + 8)
        for _ in 0..<((count + 7) / 8) { buffer.writeInteger(generator.next() as UInt64) }
        buffer.moveWriterIndex(to: count)
        return buffer
    }
}

/// tus 1.0 and file downloads over a client of the bench's own (AsyncHTTPClient's shared one
/// keeps 8 connections a host; phase 1 needs one per upload in flight).
struct TusClient: Sendable {
    let client: HTTPClient
    let baseURL: String

    /// Creates the upload (`Upload-Length`, `Upload-Metadata` with the name and the sha256 promise)
    /// and sends its bytes, streamed: one PATCH, or one per `chunk` bytes. Returns its id.
    func upload(_ bytes: RepeatingBytes, sha256: [UInt8], name: String, token: String, chunk: Int64?, until deadline: ContinuousClock.Instant)
        async throws -> UploadID
    {
        var create = request("/v1/uploads", .POST, token: token)
        create.headers.add(name: "Upload-Length", value: String(bytes.length))
        create.headers.add(
            name: "Upload-Metadata", value: "filename \(Data(name.utf8).base64EncodedString()),sha256 \(Data(sha256).base64EncodedString())")
        let created = try await client.execute(create, timeout: try Self.remaining(deadline))
        let answer = try await created.body.collect(upTo: 1 << 20)
        guard created.status == .created else { throw Self.refusal("POST /v1/uploads", created.status, answer) }
        let id = try JSONDecoder().decode(API.Upload.self, from: Data(answer.readableBytesView)).id
        let step = max(1, chunk ?? bytes.length)
        var offset: Int64 = 0
        // Bounded: each pass appends `step` bytes or the rest.
        while offset < bytes.length {
            let count = min(step, bytes.length - offset)
            var patch = request("/v1/uploads/\(id.rawValue)", .PATCH, token: token)
            patch.headers.add(name: "Content-Type", value: "application/offset+octet-stream")
            patch.headers.add(name: "Upload-Offset", value: String(offset))
            patch.body = .stream(bytes.pieces(offset..<(offset + count)), length: .known(count))
            let response = try await client.execute(patch, timeout: try Self.remaining(deadline))
            let body = try await response.body.collect(upTo: 1 << 20)
            guard response.status == .noContent, response.headers.first(name: "Upload-Offset") == String(offset + count) else {
                throw Self.refusal("PATCH at \(offset)", response.status, body)
            }
            offset += count
        }
        return id
    }

    /// `GET /v1/uploads/{id}`: whether the server has it all.
    func status(_ id: UploadID, token: String, until deadline: ContinuousClock.Instant) async throws -> API.Upload {
        let response = try await client.execute(request("/v1/uploads/\(id.rawValue)", .GET, token: token), timeout: try Self.remaining(deadline))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok else { throw Self.refusal("GET /v1/uploads/\(id.rawValue)", response.status, body) }
        return try JSONDecoder().decode(API.Upload.self, from: Data(body.readableBytesView))
    }

    /// GETs `path` (a signed link: no token), counting its bytes and hashing them when asked; they
    /// must be `expected` bytes. Returns the sha256 when hashing.
    func download(_ path: String, expected: Int64, hashing: Bool, until deadline: ContinuousClock.Instant) async throws -> [UInt8]? {
        let response = try await client.execute(HTTPClientRequest(url: baseURL + path), timeout: try Self.remaining(deadline))
        guard response.status == .ok else {
            throw Self.refusal("GET \(path.prefix(60))", response.status, try await response.body.collect(upTo: 1 << 20))
        }
        var hash = SHA256()
        var received: Int64 = 0
        // Bounded by the file's size and the deadline (the client's read timeout ends a stall).
        for try await chunk in response.body {
            received += Int64(chunk.readableBytes)
            guard received <= expected, ContinuousClock.now < deadline else {
                throw BenchAPI.Failure(description: "download: more than \(expected) bytes, or past the deadline")
            }
            if hashing { chunk.withUnsafeReadableBytes { hash.update(bufferPointer: $0) } }
        }
        guard received == expected else { throw BenchAPI.Failure(description: "download: \(received) bytes of \(expected)") }
        return hashing ? Array(hash.finalize()) : nil
    }

    func request(_ path: String, _ method: HTTPMethod, token: String) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Tus-Resumable", value: "1.0.0")
        return request
    }

    /// What is left until `deadline`, as AsyncHTTPClient's timeout. - Throws: when nothing is left.
    static func remaining(_ deadline: ContinuousClock.Instant) throws -> TimeAmount {
        let left = deadline - .now
        guard left > .zero else { throw BenchAPI.Failure(description: "past the bench's --duration") }
        return .nanoseconds(left.components.seconds * 1_000_000_000 + left.components.attoseconds / 1_000_000_000)
    }

    static func refusal(_ what: String, _ status: HTTPResponseStatus, _ body: ByteBuffer) -> BenchAPI.Failure {
        BenchAPI.Failure(description: "\(what): \(status.code) \(String(buffer: body).prefix(200))")
    }

    /// A client with a connection for each request in flight, read timeouts that end stalls.
    static func makeClient(connections: Int) -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.httpVersion = .http1Only
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(60))
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        return HTTPClient(configuration: configuration)
    }
}

extension ProcessMemory {
    /// The process's peak resident memory (VmHWM) since it started or since ``resetPeak(pid:)``, in KiB.
    static func peakResidentKiB(pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "")
        }
        return nil
    }

    /// Sets VmHWM back to the current RSS (Linux ≥ 4.0: `5` into /proc/<pid>/clear_refs, allowed to
    /// the process's owner), so each phase's peak is its own; false where refused.
    static func resetPeak(pid: Int32) -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/\(pid)/clear_refs") else { return false }
        defer { try? handle.close() }
        return (try? handle.write(contentsOf: Data("5".utf8))) != nil
    }
}
