#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where an ``S3BlobStore`` keeps its objects, from the URL the server is configured with:
/// `s3://BUCKET?endpoint=http://127.0.0.1:9000&region=us-east-1&path-style=true&prefix=parley/`.
///
/// Query items (percent-decoded; `+` is a plus sign, never a space, as secret keys contain it):
/// - `endpoint`: `http(s)://host[:port]`; without it, AWS's `https://s3.REGION.amazonaws.com`.
/// - `region` (default `us-east-1`), signed into every request.
/// - `path-style`: `true` for `endpoint/BUCKET/key` (the default with an `endpoint`: MinIO and
///   most self-hosted services want it), `false` for `BUCKET.endpoint/key` (AWS's default).
/// - `prefix`: put before every object key (a `/` is added when missing).
/// - `access-key`, `secret-key`: else `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`.
public struct S3Location: Sendable, Equatable, CustomStringConvertible {
    public var bucket: String
    /// `http` or `https`.
    public var scheme: String
    /// The endpoint's host and, when it is not the scheme's default, `:port`.
    public var authority: String
    public var region: String
    public var pathStyle: Bool
    /// Empty, or ending with `/`.
    public var prefix: String
    public var accessKey: String
    public var secretKey: String

    /// Parses `url`, taking missing credentials from `environment`.
    /// - Throws: ``S3LocationError``, whose messages never repeat a value from the URL.
    public init(_ url: String, environment: [String: String] = S3Location.environmentCredentials()) throws(S3LocationError) {
        guard url.utf8.starts(with: "s3://".utf8) else { throw .notS3URL }
        let rest = url.dropFirst(5)
        let bucketPart = rest.prefix { $0 != "?" }
        let name = bucketPart.hasSuffix("/") ? bucketPart.dropLast() : bucketPart
        guard !name.contains("/") else { throw .pathAfterBucket }
        guard Self.isBucketName(name) else { throw .invalidBucket }
        bucket = String(name)

        var items: [String: String] = [:]
        let query = rest.dropFirst(bucketPart.count + 1)
        for item in query.split(separator: "&", omittingEmptySubsequences: true) {
            guard let equals = item.firstIndex(of: "="), let key = Self.percentDecoded(item[..<equals]) else {
                throw .malformedQuery
            }
            guard Self.parameters.contains(key) else { throw .unknownParameter(Self.safeName(key)) }
            guard items[key] == nil else { throw .duplicateParameter(key) }
            guard let value = Self.percentDecoded(item[item.index(after: equals)...]) else { throw .invalidValue(key) }
            items[key] = value
        }

        region = items["region"] ?? "us-east-1"
        guard (1...32).contains(region.utf8.count), region.utf8.allSatisfy({ Self.isLowerAlphanumeric($0) || $0 == UInt8(ascii: "-") }) else {
            throw .invalidValue("region")
        }
        if let endpoint = items["endpoint"] {
            guard let (scheme, authority) = Self.endpoint(endpoint) else { throw .invalidValue("endpoint") }
            (self.scheme, self.authority) = (scheme, authority)
        } else {
            (scheme, authority) = ("https", "s3.\(region).amazonaws.com")
        }
        switch items["path-style"] {
        case nil: pathStyle = items["endpoint"] != nil
        case "true": pathStyle = true
        case "false": pathStyle = false
        default: throw .invalidValue("path-style")
        }
        prefix = items["prefix"] ?? ""
        guard Self.isPrefix(prefix) else { throw .invalidValue("prefix") }
        if !prefix.isEmpty && !prefix.hasSuffix("/") { prefix += "/" }
        guard let accessKey = items["access-key"] ?? environment["AWS_ACCESS_KEY_ID"], !accessKey.isEmpty,
            let secretKey = items["secret-key"] ?? environment["AWS_SECRET_ACCESS_KEY"], !secretKey.isEmpty
        else { throw .missingCredentials }
        // The access key goes into the Authorization header as it is: no line breaks or separators.
        guard accessKey.utf8.allSatisfy({ (33...126).contains($0) && $0 != UInt8(ascii: ",") && $0 != UInt8(ascii: "/") }) else {
            throw .invalidValue("access-key")
        }
        self.accessKey = accessKey
        self.secretKey = secretKey
    }

    /// Never the secret key.
    public var description: String {
        "s3://\(bucket) at \(scheme)://\(authority) (\(region), \(pathStyle ? "path-style" : "virtual-hosted"), prefix \"\(prefix)\")"
    }

    /// `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` of this process, those that are set.
    public static func environmentCredentials() -> [String: String] {
        var found: [String: String] = [:]
        for name in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"] {
            if let value = getenv(name) { found[name] = String(cString: value) }
        }
        return found
    }

    static let parameters: Set<String> = ["endpoint", "region", "path-style", "prefix", "access-key", "secret-key"]

    /// AWS's rules for new buckets: 3–63 of `a-z 0-9 . -`, a letter or digit at each end.
    static func isBucketName(_ name: Substring) -> Bool {
        let bytes = Array(name.utf8)
        guard (3...63).contains(bytes.count), bytes.first.map(isLowerAlphanumeric) == true, bytes.last.map(isLowerAlphanumeric) == true else { return false }
        return bytes.allSatisfy { isLowerAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }
    }

    /// S3's "safe" key characters (letters, digits, `!-_.*'()`) and `/` between non-empty segments
    /// that are not `.` or `..`, so a prefix never needs a thought about encoding or paths.
    static func isPrefix(_ prefix: String) -> Bool {
        let safe = Set("!-_.*'()".utf8)
        guard prefix.utf8.count <= 256, prefix.utf8.allSatisfy({ isAlphanumeric($0) || safe.contains($0) || $0 == UInt8(ascii: "/") })
        else { return false }
        let segments = prefix.split(separator: "/", omittingEmptySubsequences: false)
        let body = prefix.hasSuffix("/") ? segments.dropLast() : segments[...]
        return prefix.isEmpty || body.allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." }
    }

    /// `http(s)://host[:port][/]`: the scheme and the authority as a Host header says it.
    static func endpoint(_ text: String) -> (String, String)? {
        let scheme = text.hasPrefix("https://") ? "https" : text.hasPrefix("http://") ? "http" : nil
        guard let scheme else { return nil }
        var rest = text.dropFirst(scheme.count + 3)
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        // An IPv6 address is in brackets; the port follows the last colon after them.
        let hostEnd = rest.hasPrefix("[") ? rest.firstIndex(of: "]").map(rest.index(after:)) : rest.firstIndex(of: ":") ?? rest.endIndex
        guard let hostEnd else { return nil }
        let host = rest[..<hostEnd]
        let hostBytes = host.hasPrefix("[") ? host.dropFirst().dropLast().utf8 : host.utf8
        let allowed = host.hasPrefix("[") ? Set(":.".utf8) : Set(".-".utf8)
        guard !hostBytes.isEmpty, hostBytes.allSatisfy({ isAlphanumeric($0) || allowed.contains($0) }) else { return nil }
        let portText = rest[hostEnd...]
        guard !portText.isEmpty else { return (scheme, String(host)) }
        guard portText.hasPrefix(":"), let port = Int(portText.dropFirst()), (1...65_535).contains(port), portText.count <= 6 else { return nil }
        return (scheme, port == (scheme == "https" ? 443 : 80) ? String(host) : "\(host):\(port)")
    }

    static func percentDecoded(_ text: Substring) -> String? {
        var out: [UInt8] = []
        var bytes = text.utf8[...]
        while let byte = bytes.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                out.append(byte)
                continue
            }
            guard bytes.count >= 2, let high = hexValue(bytes.popFirst()!), let low = hexValue(bytes.popFirst()!) else { return nil }
            out.append(high << 4 | low)
        }
        return String(validating: out, as: UTF8.self)
    }

    /// A parameter name for an error message: itself when it looks like one, never a pasted secret.
    private static func safeName(_ name: String) -> String {
        name.utf8.count <= 20 && name.utf8.allSatisfy({ isLowerAlphanumeric($0) || $0 == UInt8(ascii: "-") }) ? name : "(not shown)"
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 48...57: byte - 48
        case 65...70: byte - 55
        case 97...102: byte - 87
        default: nil
        }
    }

    private static func isLowerAlphanumeric(_ byte: UInt8) -> Bool { (97...122).contains(byte) || (48...57).contains(byte) }
    private static func isAlphanumeric(_ byte: UInt8) -> Bool { isLowerAlphanumeric(byte) || (65...90).contains(byte) }
}
