import Crypto
import ParleyCore

/// AWS Signature Version 4 in an `Authorization` header, as S3 checks it
/// (docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html), with swift-crypto.
///
/// The caller encodes the path (``encode(_:keepingSlashes:)``) and puts ``canonicalQuery(_:)`` in
/// the URL itself, so the query the server receives is byte for byte the one that was signed.
struct SigV4Signer: Sendable, CustomStringConvertible {
    let accessKey: String
    /// `AWS4` + the secret key: the start of every signing key.
    private let secret: [UInt8]
    let region: String
    let service: String

    init(accessKey: String, secretKey: String, region: String, service: String = "s3") {
        self.accessKey = accessKey
        self.secret = Array(("AWS4" + secretKey).utf8)
        self.region = region
        self.service = service
    }

    /// Never the secret (a signer printed in a log or a failed test).
    var description: String { "SigV4Signer(\(accessKey), \(region), \(service))" }

    /// The hex sha256 of no bytes: the payload hash of a request without a body.
    static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// The `Authorization` header's value.
    /// - Parameters:
    ///   - path: the request's path, URI-encoded already.
    ///   - query: the query items, not encoded.
    ///   - headers: the headers to sign, `host` and `x-amz-date` among them (names in any case).
    ///   - payloadHash: the `x-amz-content-sha256` value (hex sha256 of the body, or `UNSIGNED-PAYLOAD`).
    ///   - timestamp: the `x-amz-date` value, `yyyyMMdd'T'HHmmss'Z'`.
    func authorization(
        method: String, path: String, query: [(String, String)], headers: [(String, String)], payloadHash: String, timestamp: String
    ) -> String {
        let canonical = canonicalRequest(method: method, path: path, query: query, headers: headers, payloadHash: payloadHash)
        let signature = HMAC<SHA256>.authenticationCode(for: Array(stringToSign(canonical, timestamp: timestamp).utf8), using: signingKey(timestamp))
        return "AWS4-HMAC-SHA256 Credential=\(accessKey)/\(scope(timestamp)),SignedHeaders=\(canonical.signedHeaders),"
            + "Signature=\(LowercaseHex.string(Array(signature)))"
    }

    /// The canonical request (the text that is hashed and signed) and its signed header names.
    func canonicalRequest(
        method: String, path: String, query: [(String, String)], headers: [(String, String)], payloadHash: String
    ) -> (text: String, signedHeaders: String) {
        // Names lowercase and sorted; values trimmed, inner runs of spaces made one.
        let sorted = headers.map { ($0.0.lowercased(), Self.trimmed($0.1)) }.sorted { $0.0 < $1.0 }
        let lines = sorted.map { "\($0.0):\($0.1)\n" }.joined()
        let signed = sorted.map(\.0).joined(separator: ";")
        let text = [method, path, Self.canonicalQuery(query), lines, signed, payloadHash].joined(separator: "\n")
        return (text, signed)
    }

    func stringToSign(_ canonical: (text: String, signedHeaders: String), timestamp: String) -> String {
        let hash = LowercaseHex.string(Array(SHA256.hash(data: Array(canonical.text.utf8))))
        return "AWS4-HMAC-SHA256\n\(timestamp)\n\(scope(timestamp))\n\(hash)"
    }

    private func scope(_ timestamp: String) -> String { "\(timestamp.prefix(8))/\(region)/\(service)/aws4_request" }

    /// HMAC of the day, then the region, the service and `aws4_request`, starting from the secret.
    private func signingKey(_ timestamp: String) -> SymmetricKey {
        var key = SymmetricKey(data: secret)
        for part in [String(timestamp.prefix(8)), region, service, "aws4_request"] {
            key = SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key)))
        }
        return key
    }

    /// Percent-encoding as SigV4 wants it: every byte but `A-Z a-z 0-9 - . _ ~` as `%XX` (uppercase
    /// hex), and `/` too unless `keepingSlashes` (an object key in a path keeps its slashes).
    static func encode(_ text: String, keepingSlashes: Bool = false) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            let unreserved =
                (65...90).contains(byte) || (97...122).contains(byte) || (48...57).contains(byte)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
            if unreserved || (keepingSlashes && byte == UInt8(ascii: "/")) {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `name=value` pairs, both encoded, sorted by name then value and joined with `&` (a name
    /// without a value, like `uploads`, is `uploads=`). The URL carries this very string.
    static func canonicalQuery(_ items: [(String, String)]) -> String {
        items.map { (encode($0.0), encode($0.1)) }
            .sorted { $0.0 == $1.0 ? $0.1 < $1.1 : $0.0 < $1.0 }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }

    private static func trimmed(_ value: String) -> String {
        value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    }
}
