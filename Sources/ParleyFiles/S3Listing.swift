import NIOCore
import NIOHTTP1

/// An object of a listing.
struct S3Object: Sendable, Equatable {
    /// The whole key, the location's prefix included.
    var key: String
    var size: Int64
    /// Seconds since 1970; infinity when S3's date could not be read (so the collector never
    /// takes it for old).
    var lastModified: Double
}

extension S3Client {
    /// Every object whose key starts with `prefix`, page after page (ListObjectsV2).
    /// - Parameters:
    ///   - pageSize: `max-keys` (nil: the service's default, 1000); tests set it low to page.
    ///   - startAfter: list only the keys after this one.
    func list(_ prefix: String, pageSize: Int? = nil, startAfter: String? = nil) async throws -> [S3Object] {
        var objects: [S3Object] = []
        var token: String?
        repeat {
            var query = [("list-type", "2"), ("prefix", prefix)]
            if let pageSize { query.append(("max-keys", String(pageSize))) }
            if let token {
                query.append(("continuation-token", token))
            } else if let startAfter {
                query.append(("start-after", startAfter))
            }
            let answer = try await call(.GET, nil, query: query, op: "ListObjectsV2")
            let page = try S3XML.listing(String(buffer: answer.body))
            objects += page.objects
            token = page.next
        } while token != nil
        return objects
    }
}

/// Just enough XML for S3's answers: the text of named elements, entities decoded. S3's elements
/// carry no attributes and the ones read here never nest in themselves.
enum S3XML {
    /// The raw text of each `<name>…</name>` in `xml`, in order.
    static func elements(_ name: String, in xml: Substring) -> [Substring] {
        let open = "<\(name)>"
        let close = "</\(name)>"
        var found: [Substring] = []
        var rest = xml
        while let start = rest.firstRange(of: open), let end = rest[start.upperBound...].firstRange(of: close) {
            found.append(rest[start.upperBound..<end.lowerBound])
            rest = rest[end.upperBound...]
        }
        return found
    }

    /// The decoded text of the first `<name>…</name>`.
    static func first(_ name: String, in xml: Substring) -> String? {
        let open = "<\(name)>"
        guard let start = xml.firstRange(of: open), let end = xml[start.upperBound...].firstRange(of: "</\(name)>") else { return nil }
        return decoded(xml[start.upperBound..<end.lowerBound])
    }

    /// One ListObjectsV2 page: its objects and the continuation token when it is truncated.
    static func listing(_ xml: String) throws -> (objects: [S3Object], next: String?) {
        guard xml.contains("<ListBucketResult") else { throw BlobStoreError.storage("S3 ListObjectsV2 answered something else than a listing") }
        var objects: [S3Object] = []
        for entry in elements("Contents", in: xml[...]) {
            guard let key = first("Key", in: entry), let size = first("Size", in: entry).flatMap({ Int64($0) }) else {
                throw BlobStoreError.storage("S3 ListObjectsV2 answered an entry without a key or size")
            }
            let modified = first("LastModified", in: entry).flatMap { S3Time.parseISO8601($0) } ?? .infinity
            objects.append(S3Object(key: key, size: size, lastModified: modified))
        }
        // The top-level fields, read outside the entries (whatever order the server writes them in).
        let before = xml[..<(xml.firstRange(of: "<Contents>")?.lowerBound ?? xml.endIndex)]
        let top = before + xml[(xml.ranges(of: "</Contents>").last?.upperBound ?? xml.endIndex)...]
        guard first("IsTruncated", in: top[...]) == "true" else { return (objects, nil) }
        guard let next = first("NextContinuationToken", in: top[...]), !next.isEmpty else {
            throw BlobStoreError.storage("S3 ListObjectsV2 answered a truncated listing without a continuation token")
        }
        return (objects, next)
    }

    /// `&amp; &lt; &gt; &quot; &apos;` and numeric references replaced by their characters.
    static func decoded(_ text: Substring) -> String {
        guard text.contains("&") else { return String(text) }
        var out = ""
        var rest = text
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            guard let semicolon = rest[amp...].prefix(12).firstIndex(of: ";") else {
                out += rest[amp...]
                return out
            }
            let entity = rest[rest.index(after: amp)..<semicolon]
            if let character = character(for: entity) {
                out.append(character)
            } else {
                out += rest[amp...semicolon]
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return out + rest
    }

    private static func character(for entity: Substring) -> Character? {
        switch entity {
        case "amp": return "&"
        case "lt": return "<"
        case "gt": return ">"
        case "quot": return "\""
        case "apos": return "'"
        default:
            let number = entity.hasPrefix("#x") ? UInt32(entity.dropFirst(2), radix: 16) : entity.hasPrefix("#") ? UInt32(entity.dropFirst()) : nil
            return number.flatMap(Unicode.Scalar.init).map(Character.init)
        }
    }
}
