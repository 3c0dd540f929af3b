import Crypto
import Foundation
import HTTPTypes
import NIOCore
import ParleyCore

/// tus 1.0 requests for the tests, through ``TestAPI`` (every answer held to openapi.yaml).
extension TestAPI {
    static let tusResumable = HTTPField.Name("Tus-Resumable")!
    static let uploadLength = HTTPField.Name("Upload-Length")!
    static let uploadOffset = HTTPField.Name("Upload-Offset")!
    static let uploadMetadata = HTTPField.Name("Upload-Metadata")!
    static let uploadChecksum = HTTPField.Name("Upload-Checksum")!

    static func metadata(name: String, sha256 promise: [UInt8]? = nil) -> String {
        var pairs = ["filename \(Data(name.utf8).base64EncodedString())", "filetype \(Data("image/png".utf8).base64EncodedString())"]
        if let promise { pairs.append("sha256 \(Data(promise).base64EncodedString())") }
        return pairs.joined(separator: ",")
    }

    static func sha256(_ bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }

    /// `POST /v1/uploads`, with the first bytes when `body` is given (creation-with-upload).
    func createUpload(
        _ account: Account, length: Int, name: String = "photo.png", promise: [UInt8]? = nil, body: [UInt8]? = nil, extra: HTTPFields = [:]
    ) async throws -> APIResponse {
        var headers = extra
        headers[Self.tusResumable] = headers[Self.tusResumable] ?? "1.0.0"
        headers[Self.uploadLength] = String(length)
        headers[Self.uploadMetadata] = Self.metadata(name: name, sha256: promise)
        if body != nil { headers[.contentType] = "application/offset+octet-stream" }
        return try await request(.post, "/v1/uploads", token: account.token, body: body.map { ByteBuffer(bytes: $0) }, headers: headers)
    }

    func patchUpload(
        _ account: Account, _ location: String, offset: Int, _ bytes: [UInt8], checksum: [UInt8]? = nil, algorithm: String = "sha256"
    ) async throws -> APIResponse {
        var headers: HTTPFields = [Self.tusResumable: "1.0.0", Self.uploadOffset: String(offset), .contentType: "application/offset+octet-stream"]
        if let checksum { headers[Self.uploadChecksum] = "\(algorithm) \(Data(checksum).base64EncodedString())" }
        return try await request(.patch, location, token: account.token, body: ByteBuffer(bytes: bytes), headers: headers)
    }

    func headUpload(_ account: Account, _ location: String) async throws -> APIResponse {
        try await request(.head, location, token: account.token, headers: [Self.tusResumable: "1.0.0"])
    }

    /// Uploads `bytes` in one request and returns the complete upload.
    func upload(_ bytes: [UInt8], by account: Account, name: String = "photo.png") async throws -> API.Upload {
        let response = try await createUpload(account, length: bytes.count, name: name, promise: Self.sha256(bytes), body: bytes)
        guard response.status == .created else { throw TestFailure("upload: \(response.status) \(String(buffer: response.body))") }
        return try response.decode(API.Upload.self)
    }

    /// Sends a message carrying `uploads` and returns the stored message.
    func send(_ caption: String, attaching uploads: [UploadID], from account: Account, in conversation: ConversationID) async throws -> APIResponse {
        try await request(
            .post, "/v1/messages", token: account.token,
            encoding: SendRequest(
                clientId: .random(), conversationId: conversation, text: caption, attachments: uploads.map { AttachmentRequest(uploadId: $0) }))
    }
}

/// Small real files made in code.
enum TestFiles {
    /// A valid PNG of `width` x `height` (one grey row repeated; the IDAT is a stored zlib block).
    static func png(width: Int, height: Int) -> [UInt8] {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return be32(data.count) + body + be32(Int(crc32(body)))
        }
        let row = [UInt8(0)] + [UInt8](repeating: 0x80, count: width)
        let raw = (0..<height).flatMap { _ in row }
        var zlib: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let size = min(65_535, raw.count - offset)
            let last: UInt8 = offset + size == raw.count ? 1 : 0
            zlib += [last, UInt8(size & 0xFF), UInt8(size >> 8), UInt8(~size & 0xFF), UInt8((~size >> 8) & 0xFF)] + raw[offset..<offset + size]
            offset += size
        } while offset < raw.count
        zlib += be32(Int(adler32(raw)))
        let header = be32(width) + be32(height) + [8, 0, 0, 0, 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IDAT", zlib) + chunk("IEND", [])
    }

    static func be32(_ value: Int) -> [UInt8] { [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return b << 16 | a
    }
}
