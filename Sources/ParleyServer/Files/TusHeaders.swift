import Foundation
import HTTPTypes
import ParleyCore

/// The tus 1.0 header fields Parley reads and writes (https://tus.io/protocols/resumable-upload).
enum TusHeaders {
    static let version = "1.0.0"
    static let extensions = "creation,creation-with-upload,termination,checksum,expiration"
    static let offsetContentType = "application/offset+octet-stream"

    static let tusResumable = HTTPField.Name("Tus-Resumable")!
    static let tusVersion = HTTPField.Name("Tus-Version")!
    static let tusExtension = HTTPField.Name("Tus-Extension")!
    static let tusMaxSize = HTTPField.Name("Tus-Max-Size")!
    static let tusChecksumAlgorithm = HTTPField.Name("Tus-Checksum-Algorithm")!
    static let uploadLength = HTTPField.Name("Upload-Length")!
    static let uploadOffset = HTTPField.Name("Upload-Offset")!
    static let uploadMetadata = HTTPField.Name("Upload-Metadata")!
    static let uploadChecksum = HTTPField.Name("Upload-Checksum")!
    static let uploadExpires = HTTPField.Name("Upload-Expires")!
    static let uploadDeferLength = HTTPField.Name("Upload-Defer-Length")!

    /// What `Upload-Metadata` says: the file name, the client's type (a hint only), the promised
    /// sha256, and whether the file goes as it was (`original`: a photo keeps its metadata).
    struct Metadata: Equatable {
        var filename: String?
        var filetype: String?
        /// Lowercase hex of the 32 promised bytes.
        var sha256: String?
        var original = false
    }

    /// Refuses a request without `Tus-Resumable` (400: it is malformed) or with another version than
    /// 1.0.0 (412, with the versions this server speaks, as tus says).
    static func requireVersion(_ fields: HTTPFields) throws {
        guard fields[tusResumable] != nil else {
            throw ParleyError(.invalidUpload, "Send 'Tus-Resumable: 1.0.0' with every tus request.")
        }
        guard fields[tusResumable] == version else {
            var error = ParleyError(.unsupportedTusVersion, "Send 'Tus-Resumable: 1.0.0': this server speaks tus 1.0.0.")
            error.headers[tusVersion] = version
            error.headers[tusResumable] = version
            throw error
        }
    }

    /// A non-negative integer header, at most `maximum`. - Throws: 400 `invalid_upload`.
    static func integer(_ fields: HTTPFields, _ name: HTTPField.Name) throws -> Int64? {
        guard let text = fields[name] else { return nil }
        guard !text.isEmpty, text.count <= 19, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber), let value = Int64(text) else {
            throw ParleyError(.invalidUpload, "'\(name)' must be a whole number of bytes.")
        }
        return value
    }

    /// `key base64,key base64,key`: the keys Parley knows; others are ignored (tus clients add their own).
    static func metadata(_ text: String?) throws -> Metadata {
        var metadata = Metadata()
        guard let text, !text.isEmpty else { return metadata }
        guard text.utf8.count <= 4096 else { throw ParleyError(.invalidUpload, "'Upload-Metadata' is too long.") }
        for pair in text.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: " ", omittingEmptySubsequences: true)
            guard (1...2).contains(parts.count), !parts[0].isEmpty else { throw ParleyError(.invalidUpload, "'Upload-Metadata' is malformed.") }
            let value: Data? = parts.count == 2 ? Data(base64Encoded: String(parts[1])) : Data()
            guard let value else { throw ParleyError(.invalidUpload, "A value of 'Upload-Metadata' is not base64.") }
            switch parts[0] {
            case "filename", "name":
                guard let name = String(data: value, encoding: .utf8) else { throw ParleyError(.invalidUpload, "The file name is not UTF-8.") }
                metadata.filename = name
            case "filetype", "type":
                metadata.filetype = String(data: value, encoding: .utf8)
            case "original":
                metadata.original = true
            case "sha256":
                guard value.count == 32 else { throw ParleyError(.invalidUpload, "'sha256' must be the 32 bytes of the file's SHA-256, in base64.") }
                metadata.sha256 = LowercaseHex.string(Array(value))
            default: continue
            }
        }
        return metadata
    }

    /// An HTTP date (RFC 9110: `Sun, 06 Nov 1994 08:49:37 GMT`).
    static func httpDate(_ time: Timestamp) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: Date(timeIntervalSince1970: Double(time.milliseconds) / 1000))
    }
}
