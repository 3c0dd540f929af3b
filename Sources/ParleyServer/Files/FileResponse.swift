import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ParleyCore
import ParleyFiles
import ParleyStore

/// A file's bytes as a response that no browser can turn into a page: `nosniff`, a sandboxing
/// policy, and `Content-Disposition: attachment` for anything but the inline image allowlist (JPEG,
/// PNG, GIF, WebP: never SVG or HTML); `ETag` and single `Range` requests for large files and video.
enum FileResponse {
    static let inlineTypes: Set<String> = ["image/jpeg", "image/png", "image/gif", "image/webp"]

    /// Whether an `If-None-Match` list names this representation: `*`, or the tag compared weakly
    /// (RFC 9110 13.1.2: `W/"x"` matches `"x"`).
    static func noneMatchHolds(_ header: String, etag: String) -> Bool {
        header.split(separator: ",").contains { item in
            let tag = item.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }

    /// The file's response; for `HEAD` (`headOnly`), its status and headers without reading the blob.
    static func make(
        _ access: FileAccess, key: BlobKey, blobs: any BlobStore, request: Request, download: Bool, maxAge: Int, headOnly: Bool = false
    ) async throws -> Response {
        let inline = !download && access.kind == .image && inlineTypes.contains(access.mimeType)
        var headers = HTTPFields()
        headers[.contentType] = inline || access.kind != .file ? access.mimeType : "application/octet-stream"
        headers[.xContentTypeOptions] = "nosniff"
        headers[.contentSecurityPolicy] = "sandbox; default-src 'none'"
        headers[.contentDisposition] = disposition(access.name, inline: inline)
        headers[.eTag] = "\"\(key.sha256)\""
        headers[.acceptRanges] = "bytes"
        headers[.cacheControl] = maxAge > 0 ? "private, max-age=\(maxAge)" : "private, no-cache"
        if let match = request.headers[.ifNoneMatch], Self.noneMatchHolds(match, etag: "\"\(key.sha256)\"") {
            return Response(status: .notModified, headers: headers)
        }
        let size = access.size
        var range: Range<Int64>? = nil
        if let header = request.headers[.range], request.headers[.ifRange].map({ $0 == headers[.eTag] }) ?? true {
            switch ByteRange.parse(header, size: size) {
            case .whole: break
            case .unsatisfiable:
                var error = ParleyError(.rangeNotSatisfiable, "The file has \(size) bytes.")
                error.headers[.contentRange] = "bytes */\(size)"
                throw error
            case .part(let part): range = part
            }
        }
        if headOnly {
            headers[.contentLength] = String(range?.count ?? Int(size))
            if let range { headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)" }
            return Response(status: range == nil ? .ok : .partialContent, headers: headers)
        }
        let body: BlobBody
        do {
            body = try await blobs.read(key, range: range)
        } catch BlobStoreError.notFound {
            throw ParleyError(.fileNotFound, "No such file.")
        }
        headers[.contentLength] = String(body.size)
        if let range { headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)" }
        let chunks = body.chunks
        let responseBody = ResponseBody(contentLength: Int(body.size)) { writer in
            for try await chunk in chunks { try await writer.write(chunk) }
            try await writer.finish(nil)
        }
        return Response(status: range == nil ? .ok : .partialContent, headers: headers, body: responseBody)
    }

    /// `inline` or `attachment`, with an ASCII fallback name and the real one in RFC 5987 form.
    static func disposition(_ name: String, inline: Bool) -> String {
        let ascii = String(name.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0 != "\"" && $0 != "\\" ? Character($0) : "_" })
        let encoded = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? "file"
        return "\(inline ? "inline" : "attachment"); filename=\"\(ascii)\"; filename*=UTF-8''\(encoded)"
    }
}

/// A `Range: bytes=…` header, single ranges only (several ranges get the whole file, as RFC 9110 allows).
enum ByteRange: Equatable {
    case whole
    case part(Range<Int64>)
    case unsatisfiable

    static func parse(_ header: String, size: Int64) -> ByteRange {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return .whole }
        let spec = header.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let sides = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard sides.count == 2 else { return .whole }
        switch (Int64(sides[0]), Int64(sides[1])) {
        case (let start?, let end?) where start <= end && start >= 0:
            return start < size ? .part(start..<(end >= size ? size : end + 1)) : .unsatisfiable
        case (let start?, nil) where sides[1].isEmpty && start >= 0:
            return start < size ? .part(start..<size) : .unsatisfiable
        case (nil, let suffix?) where sides[0].isEmpty && suffix >= 0:
            return suffix > 0 && size > 0 ? .part(max(0, size - suffix)..<size) : .unsatisfiable
        default:
            return .whole
        }
    }
}
