import Crypto
import Foundation
import ParleyCore

/// Photos and files (docs/protocol.md "Files"): tus uploads, signed links, downloads by range.
extension HTTPParleyAPI {
    /// Creates an upload of `length` bytes; `sha256` (hex) is the promise the server checks at the
    /// end; `original` sends the file as it was (a photo keeps its metadata).
    public func createUpload(length: Int64, name: String, sha256: String?, original: Bool = false, token: String) async throws -> API.Upload {
        var metadata = ["filename \(Data(name.utf8).base64EncodedString())"]
        if let sha256, let digest = Data(hex: sha256) { metadata.append("sha256 \(digest.base64EncodedString())") }
        if original { metadata.append("original") }
        let data = try await tus(
            "POST", "/v1/uploads", token: token, headers: ["Upload-Length": String(length), "Upload-Metadata": metadata.joined(separator: ",")])
        return try JSONDecoder().decode(API.Upload.self, from: data)
    }

    /// The upload as the server has it (its offset: where to go on).
    public func upload(_ id: UploadID, token: String) async throws -> API.Upload {
        try await call(.GET, "/v1/uploads/\(id)", token: token)
    }

    /// Appends `bytes` at `offset`, with their SHA-256 for the server to check.
    public func appendUpload(_ id: UploadID, offset: Int64, bytes: Data, token: String) async throws {
        let checksum = Data(SHA256.hash(data: bytes)).base64EncodedString()
        _ = try await tus(
            "PATCH", "/v1/uploads/\(id)", token: token,
            headers: ["Upload-Offset": String(offset), "Content-Type": "application/offset+octet-stream", "Upload-Checksum": "sha256 \(checksum)"],
            body: bytes)
    }

    /// Gives up an upload no message carries.
    public func deleteUpload(_ id: UploadID, token: String) async throws {
        _ = try await tus("DELETE", "/v1/uploads/\(id)", token: token, headers: [:])
    }

    /// Signed links to the attachments I can see.
    public func fileLinks(_ ids: [UploadID], token: String) async throws -> [API.FileLink] {
        let links: API.FileLinks = try await call(.POST, "/v1/files/links", token: token, body: API.FileLinksRequest(ids: ids))
        return links.links
    }

    /// `length` bytes of a file from `offset` (a `Range` request with the bearer token).
    public func fileBytes(_ id: UploadID, offset: Int64, length: Int64, token: String) async throws -> Data {
        try await tus("GET", "/v1/files/\(id)/content", token: token, headers: ["Range": "bytes=\(offset)-\(offset + length - 1)"], versioned: false)
    }

    /// A tus request: `Tus-Resumable` and the token added.
    func tus(_ method: String, _ path: String, token: String, headers: [String: String], body: Data? = nil, versioned: Bool = true) async throws -> Data {
        var headers = headers
        headers["Authorization"] = "Bearer \(token)"
        if versioned { headers["Tus-Resumable"] = "1.0.0" }
        return try await perform(method, path, headers: headers, body: body)
    }
}

extension Data {
    /// Bytes from lowercase or uppercase hex; nil for anything else.
    init?(hex: String) {
        guard hex.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        self.init(bytes)
    }
}
