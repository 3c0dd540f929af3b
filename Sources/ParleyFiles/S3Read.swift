import AsyncHTTPClient
import NIOCore
import NIOHTTP1

extension S3BlobStore {
    /// A GET (with `Range: bytes=a-b` for a range) whose body is handed on as it arrives.
    public func read(_ key: BlobKey, range: Range<Int64>?) async throws -> BlobBody {
        if let range {
            guard range.lowerBound >= 0 else { throw BlobStoreError.notFound }
            // HTTP has no empty byte range: the blob's size says whether this one is inside it.
            if range.isEmpty {
                guard let total = try await size(of: key), range.upperBound <= total else { throw BlobStoreError.notFound }
                return BlobBody(size: 0, chunks: AsyncThrowingStream { $0.finish() })
            }
        }
        let headers = range.map { [("range", "bytes=\($0.lowerBound)-\($0.upperBound - 1)")] } ?? []
        let response = try await client.open(.GET, objectKey(key), headers: headers, op: "GetObject")
        let status = response.status.code
        if status == 404 || status == 416 {
            let body = (try? await response.body.collect(upTo: 1 << 20)) ?? ByteBuffer()
            // A missing bucket is a broken store, not a missing blob.
            guard S3Client.errorCode(body) != "NoSuchBucket" else { throw S3Client.failure("GetObject", status: status, body: body) }
            throw BlobStoreError.notFound
        }
        let size: Int64
        switch (status, range) {
        case (200, nil):
            guard let length = response.headers.first(name: "content-length").flatMap({ Int64($0) }) else {
                throw BlobStoreError.storage("S3 GetObject answered without a Content-Length")
            }
            size = length
        case (206, let range?):
            // S3 shortens a range that runs past the end: the blob must hold all of it, as locally.
            guard Self.contentRange(response.headers) == range else { throw BlobStoreError.notFound }
            size = Int64(range.count)
        default:
            throw S3Client.failure("GetObject", status: status, body: (try? await response.body.collect(upTo: 1 << 20)) ?? ByteBuffer())
        }
        let cursor = BodyCursor(iterator: response.body.makeAsyncIterator(), remaining: size)
        return BlobBody(size: size, chunks: AsyncThrowingStream { try await cursor.next() })
    }

    /// `Content-Range: bytes a-b/total` as `a..<b+1`.
    static func contentRange(_ headers: HTTPHeaders) -> Range<Int64>? {
        guard let value = headers.first(name: "content-range"), value.hasPrefix("bytes ") else { return nil }
        let bounds = value.dropFirst(6).prefix { $0 != "/" }.split(separator: "-")
        guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]), first <= last else { return nil }
        return first..<(last + 1)
    }
}

/// Hands on a response body chunk by chunk (the stream asks for one at a time, so a slow reader
/// holds the download back instead of buffering it), and fails if it ends short.
final class BodyCursor: @unchecked Sendable {
    // Only the stream's unfolding closure touches these, one call at a time.
    private var iterator: HTTPClientResponse.Body.AsyncIterator
    private var remaining: Int64

    init(iterator: HTTPClientResponse.Body.AsyncIterator, remaining: Int64) {
        self.iterator = iterator
        self.remaining = remaining
    }

    func next() async throws -> ByteBuffer? {
        let chunk: ByteBuffer?
        do {
            chunk = try await iterator.next()
        } catch {
            throw BlobStoreError.storage("S3 GetObject failed while reading: \(error)")
        }
        guard let chunk else {
            guard remaining == 0 else { throw BlobStoreError.storage("S3 GetObject ended \(remaining) bytes short") }
            return nil
        }
        remaining -= Int64(chunk.readableBytes)
        return chunk
    }
}
