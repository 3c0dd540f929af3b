import AsyncHTTPClient
import Crypto
import NIOCore
import NIOHTTP1
import ParleyCore

extension S3BlobStore {
    /// A blob's key is the hash of all its bytes, and a multipart upload must name its key when it
    /// starts: so a staging of more than one part is read twice, once to hash it and once to upload
    /// it (once when the caller hashed it as it arrived; not at all when the blob exists: then its
    /// time is refreshed instead). One part's worth is read once, held, and PUT.
    public func commitStaged(_ upload: String, hashed: StoredBlob?) async throws -> StoredBlob {
        try BlobStoreError.check(upload)
        let parts = try await parts(upload)
        guard !parts.isEmpty else { throw BlobStoreError.nothingStaged }
        let size = parts.reduce(0) { $0 + $1.size }
        if let hashed, hashed.size != size { throw BlobStoreError.storage("the staging is not the size that was hashed") }
        let key: BlobKey
        if size <= Int64(partSize) {
            var bytes = ByteBuffer()
            bytes.reserveCapacity(Int(size))
            var hash = SHA256()
            try await forEachChunk(of: parts) { chunk in
                chunk.withUnsafeReadableBytes { hash.update(bufferPointer: $0) }
                bytes.writeImmutableBuffer(chunk)
            }
            key = BlobKey(sha256: LowercaseHex.string(Array(hash.finalize())))!
            if let hashed, hashed.key != key { throw BlobStoreError.storage("the staging is not what was hashed") }
            // Stored again if it exists: the new LastModified gives the collector's grace (rule 4).
            _ = try await client.call(.PUT, objectKey(key), body: bytes, op: "PutObject")
        } else {
            if let hashed {
                key = hashed.key  // the multipart upload below still checks the bytes against it
            } else {
                var hash = SHA256()
                try await forEachChunk(of: parts) { chunk in chunk.withUnsafeReadableBytes { hash.update(bufferPointer: $0) } }
                key = BlobKey(sha256: LowercaseHex.string(Array(hash.finalize())))!
            }
            // CopyObject handles up to 5 GiB; a larger blob is uploaded again.
            if size <= 5 << 30, try await self.size(of: key) != nil {
                try await refresh(key)
            } else {
                try await uploadMultipart(parts, as: key, size: size, upload: upload)
            }
        }
        return StoredBlob(key: key, size: size)  // the parts stay until deleteStaged (rule 2)
    }

    /// Copies the blob onto itself, which S3 allows when the metadata is replaced: a new
    /// LastModified without sending the bytes again.
    func refresh(_ key: BlobKey) async throws {
        let source = "/\(location.bucket)/\(SigV4Signer.encode(objectKey(key), keepingSlashes: true))"
        let answer = try await client.call(
            .PUT, objectKey(key), headers: [("x-amz-copy-source", source), ("x-amz-metadata-directive", "REPLACE")], op: "CopyObject")
        // A copy can fail after its 200 has been sent: the error is then in the body.
        if String(buffer: answer.body).contains("<Error>") { throw S3Client.failure("CopyObject", status: answer.status, body: answer.body) }
    }

    /// Uploads the staged bytes under `key` in parts of at least `partSize` bytes, checking that they
    /// still hash to `key` before completing (a staging changed since it was hashed never lands
    /// under the wrong key); aborts the upload on any failure, as an open one keeps its parts.
    func uploadMultipart(_ parts: [Part], as key: BlobKey, size: Int64, upload: String) async throws {
        let target = objectKey(key)
        let created = try await client.call(.POST, target, query: [("uploads", "")], op: "CreateMultipartUpload")
        guard let uploadID = S3XML.first("UploadId", in: String(buffer: created.body)[...]) else {
            throw BlobStoreError.storage("S3 CreateMultipartUpload answered without an UploadId")
        }
        do {
            // At most 10,000 parts per upload.
            let chunkSize = Int(max(Int64(partSize), (size + 9_999) / 10_000))
            var etags: [String] = []
            var pending = ByteBuffer()
            var hash = SHA256()
            func send(_ bytes: ByteBuffer) async throws {
                let answer = try await client.call(
                    .PUT, target, query: [("partNumber", String(etags.count + 1)), ("uploadId", uploadID)], body: bytes, op: "UploadPart")
                guard let etag = answer.headers.first(name: "etag") else { throw BlobStoreError.storage("S3 UploadPart answered without an ETag") }
                etags.append(etag)
            }
            try await forEachChunk(of: parts) { chunk in
                chunk.withUnsafeReadableBytes { hash.update(bufferPointer: $0) }
                pending.writeImmutableBuffer(chunk)
                while pending.readableBytes >= chunkSize {
                    try await send(pending.readSlice(length: chunkSize)!)
                    pending.discardReadBytes()
                }
            }
            if pending.readableBytes > 0 { try await send(pending) }
            guard LowercaseHex.string(Array(hash.finalize())) == key.sha256 else {
                throw BlobStoreError.storage("S3 staging of \(upload) changed while it was committed")
            }
            let list = etags.enumerated().map { "<Part><PartNumber>\($0.offset + 1)</PartNumber><ETag>\(Self.escaped($0.element))</ETag></Part>" }
            let body = ByteBuffer(string: "<CompleteMultipartUpload>\(list.joined())</CompleteMultipartUpload>")
            let answer = try await client.call(.POST, target, query: [("uploadId", uploadID)], body: body, op: "CompleteMultipartUpload")
            if String(buffer: answer.body).contains("<Error>") {
                throw S3Client.failure("CompleteMultipartUpload", status: answer.status, body: answer.body)
            }
        } catch {
            _ = try? await client.call(.DELETE, target, query: [("uploadId", uploadID)], op: "AbortMultipartUpload")
            throw error
        }
    }

    /// Streams the parts in order, each checked to be as long as the listing said (`leading`: only
    /// the first `size` bytes of each, with a Range).
    func forEachChunk(of parts: [Part], leading: Bool = false, _ body: (ByteBuffer) async throws -> Void) async throws {
        for part in parts where part.size > 0 {
            let range = leading ? [("range", "bytes=0-\(part.size - 1)")] : []
            let response = try await client.open(.GET, part.key, headers: range, op: "GetObject")
            guard response.status.code == (leading ? 206 : 200) else {
                throw S3Client.failure("GetObject", status: response.status.code, body: (try? await response.body.collect(upTo: 1 << 20)) ?? ByteBuffer())
            }
            var read: Int64 = 0
            do {
                for try await chunk in response.body {
                    read += Int64(chunk.readableBytes)
                    try await body(chunk)
                }
            } catch let error as BlobStoreError {
                throw error
            } catch {
                throw BlobStoreError.storage("S3 GetObject failed while reading: \(error)")
            }
            guard read == part.size else { throw BlobStoreError.storage("S3 staging part \(part.key) changed while it was read") }
        }
    }

    static func escaped(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
    }
}
