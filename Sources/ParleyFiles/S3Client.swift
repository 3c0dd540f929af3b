import AsyncHTTPClient
import Crypto
import NIOCore
import NIOHTTP1
import ParleyCore

/// Signed requests to one bucket over async-http-client. A failure becomes
/// ``BlobStoreError/storage(_:)`` saying the operation, the status and S3's error code, and nothing
/// else: an error body can echo what was signed, and the message goes to logs.
struct S3Client: Sendable {
    let location: S3Location
    let signer: SigV4Signer
    let http: HTTPClient
    /// Until the answer's head arrives (a body streams on without a deadline): an 8 MiB part on a
    /// slow link takes a while.
    let timeout = TimeAmount.minutes(5)

    /// A whole answer: its status, headers and (small) body.
    struct Answer {
        var status: UInt
        var headers: HTTPHeaders
        var body: ByteBuffer
    }

    init(location: S3Location, http: HTTPClient) {
        self.location = location
        self.signer = SigV4Signer(accessKey: location.accessKey, secretKey: location.secretKey, region: location.region)
        self.http = http
    }

    var host: String { location.pathStyle ? location.authority : "\(location.bucket).\(location.authority)" }

    /// The encoded path of an object (the bucket itself when `key` is nil).
    func path(_ key: String?) -> String {
        let bucket = location.pathStyle ? "/\(location.bucket)" : ""
        guard let key else { return bucket.isEmpty ? "/" : bucket }
        return "\(bucket)/\(SigV4Signer.encode(key, keepingSlashes: true))"
    }

    /// Sends a signed request and returns the answer as it comes (the caller reads or drops its body).
    func open(
        _ method: HTTPMethod, _ key: String?, query: [(String, String)] = [], headers extra: [(String, String)] = [], body: ByteBuffer? = nil,
        op: String
    ) async throws -> HTTPClientResponse {
        let path = path(key)
        let timestamp = S3Time.amzDate(S3Time.now())
        // The real payload hash, not UNSIGNED-PAYLOAD: S3 then refuses a body damaged on the way,
        // which matters on a plain-HTTP endpoint.
        let payloadHash = body.map { bytes in
            var hash = SHA256()
            bytes.withUnsafeReadableBytes { hash.update(bufferPointer: $0) }
            return LowercaseHex.string(Array(hash.finalize()))
        }
        let headers = [("host", host), ("x-amz-content-sha256", payloadHash ?? SigV4Signer.emptyPayloadHash), ("x-amz-date", timestamp)] + extra
        let authorization = signer.authorization(
            method: method.rawValue, path: path, query: query, headers: headers, payloadHash: payloadHash ?? SigV4Signer.emptyPayloadHash,
            timestamp: timestamp)
        let queryString = SigV4Signer.canonicalQuery(query)
        var request = HTTPClientRequest(url: "\(location.scheme)://\(host)\(path)\(queryString.isEmpty ? "" : "?" + queryString)")
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.headers.add(name: "authorization", value: authorization)
        if let body {
            request.body = .bytes(body)
        } else if method == .PUT || method == .POST {
            request.body = .bytes(ByteBuffer())  // S3 wants a Content-Length on every upload, 0 included
        }
        do {
            return try await http.execute(request, timeout: timeout)
        } catch {
            throw BlobStoreError.storage("S3 \(op) failed: \(error)")
        }
    }

    /// Sends a signed request and reads the whole answer (at most 16 MiB: listings and small XML).
    /// - Throws: ``BlobStoreError/storage(_:)`` unless the status is 2xx or in `accepting`.
    func call(
        _ method: HTTPMethod, _ key: String?, query: [(String, String)] = [], headers: [(String, String)] = [], body: ByteBuffer? = nil,
        op: String, accepting: Set<UInt> = []
    ) async throws -> Answer {
        let response = try await open(method, key, query: query, headers: headers, body: body, op: op)
        let bytes: ByteBuffer
        do {
            bytes = try await response.body.collect(upTo: 16 << 20)
        } catch {
            throw BlobStoreError.storage("S3 \(op) failed while reading its answer: \(error)")
        }
        let answer = Answer(status: response.status.code, headers: response.headers, body: bytes)
        guard (200..<300).contains(answer.status) || accepting.contains(answer.status) else {
            throw Self.failure(op, status: answer.status, body: bytes)
        }
        return answer
    }

    /// `S3 <op> answered <status> <Code>`.
    static func failure(_ op: String, status: UInt, body: ByteBuffer) -> BlobStoreError {
        let code = errorCode(body)
        return .storage("S3 \(op) answered \(status)\(code.isEmpty ? "" : " " + code)")
    }

    /// S3's error code (`NoSuchKey`, `SignatureDoesNotMatch`…) from an error body; only letters and
    /// digits pass, whatever the server put there.
    static func errorCode(_ body: ByteBuffer) -> String {
        let xml = String(buffer: body)
        guard let code = S3XML.first("Code", in: xml[...]) else { return "" }
        let plain = code.utf8.filter { (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) }
        return String(decoding: plain.prefix(64), as: UTF8.self)
    }
}
