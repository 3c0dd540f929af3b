import NIOCore
import NIOHTTP1

/// A staging is a run of part objects `staging/<upload>/<offset>`: S3 cannot append to an object,
/// so each append adds parts of up to `partSize` bytes, and the staged size is the sum of theirs.
extension S3BlobStore {
    /// A part object of a staging.
    struct Part: Sendable {
        var key: String
        var offset: Int64
        var size: Int64
    }

    /// The parts of `upload` in order. - Throws: ``BlobStoreError/storage(_:)`` when they do not
    /// follow each other (a gap or an overlap: a commit would store the wrong bytes).
    func parts(_ upload: String) async throws -> [Part] {
        let prefix = partsPrefix(upload)
        let parts = try await client.list(prefix, pageSize: listPageSize).compactMap { object -> Part? in
            let name = object.key.dropFirst(prefix.count)
            guard name.utf8.count == 20, let offset = Int64(name) else { return nil }
            return Part(key: object.key, offset: offset, size: object.size)
        }.sorted { $0.offset < $1.offset }
        var end: Int64 = 0
        for part in parts {
            guard part.offset == end else { throw BlobStoreError.storage("S3 staging of \(upload) is broken at byte \(end)") }
            end += part.size
        }
        return parts
    }

    public func stagedSize(_ upload: String) async throws -> Int64 {
        try BlobStoreError.check(upload)
        return try await parts(upload).reduce(0) { $0 + $1.size }
    }

    /// Parts are created with `If-None-Match: *`: of two appends at the same offset (two nodes),
    /// the one whose part comes second is refused with ``BlobStoreError/busy`` instead of replacing
    /// the other's bytes. (A service without conditional writes lets the last one win.)
    public func appendStaged<Body: AsyncSequence>(_ upload: String, at offset: Int64, limit: Int64, body: Body) async throws -> Int64
    where Body.Element == ByteBuffer {
        try BlobStoreError.check(upload)
        let existing = try await parts(upload)
        let staged = existing.reduce(0) { $0 + $1.size }
        guard staged == offset else { throw BlobStoreError.offsetMismatch(staged: staged) }
        // An empty part at the end (an empty first append) holds nothing: the next part replaces it.
        var writer = PartWriter(store: self, upload: upload, written: staged, replacing: existing.last?.size == 0)
        do {
            for try await chunk in body {
                guard writer.total + Int64(chunk.readableBytes) <= limit else {
                    try await writer.flush()  // what fit is kept
                    throw BlobStoreError.tooLarge(limit: limit)
                }
                try await writer.append(chunk)
            }
            try await writer.flush()
            // An empty first append still makes the staging exist (as the local store's empty file).
            if existing.isEmpty && writer.total == 0 { try await writer.put(ByteBuffer()) }
        } catch {
            // What arrived before the body failed stays staged (a resumed upload goes on from there).
            try? await writer.flush()
            throw error
        }
        return writer.total
    }

    /// Gathers a body into part objects of `partSize` bytes (the last one shorter).
    struct PartWriter {
        let store: S3BlobStore
        let upload: String
        /// Bytes stored in part objects.
        var written: Int64
        /// Whether the next part may replace an object at its key.
        var replacing: Bool
        var pending = ByteBuffer()

        init(store: S3BlobStore, upload: String, written: Int64, replacing: Bool) {
            self.store = store
            self.upload = upload
            self.written = written
            self.replacing = replacing
        }

        var total: Int64 { written + Int64(pending.readableBytes) }

        mutating func append(_ chunk: ByteBuffer) async throws {
            pending.writeImmutableBuffer(chunk)
            while pending.readableBytes >= store.partSize {
                try await put(pending.getSlice(at: pending.readerIndex, length: store.partSize)!)
                pending.moveReaderIndex(forwardBy: store.partSize)
                pending.discardReadBytes()
            }
        }

        mutating func flush() async throws {
            guard pending.readableBytes > 0 else { return }
            try await put(pending)
            pending.clear()
        }

        /// Stores `bytes` as the part at the written size (the pending bytes stay until it is stored).
        mutating func put(_ bytes: ByteBuffer) async throws {
            let condition = replacing ? [] : [("if-none-match", "*")]
            let key = store.partKey(upload, at: written)
            let answer = try await store.client.call(.PUT, key, headers: condition, body: bytes, op: "PutObject", accepting: [412])
            guard answer.status != 412 else { throw BlobStoreError.busy }
            written += Int64(bytes.readableBytes)
            replacing = false
        }
    }

    /// Deletes the parts past `size` from the last one back, then shortens the part `size` falls
    /// in: the staging stays a run of parts from 0 whenever this stops. Nothing when `size` is
    /// the staged size or more.
    public func truncateStaged(_ upload: String, to size: Int64) async throws {
        try BlobStoreError.check(upload)
        let parts = try await parts(upload)
        for part in parts.reversed() where part.offset >= size && part.offset > 0 {
            try await deleteObject(part.key)
        }
        if let first = parts.first, size <= 0 {
            // The staging stays, empty (as a file truncated to 0 does).
            _ = try await client.call(.PUT, first.key, body: ByteBuffer(), op: "PutObject")
        } else if let cut = parts.last(where: { $0.offset < size && $0.offset + $0.size > size }) {
            let length = size - cut.offset
            var bytes = ByteBuffer()
            try await forEachChunk(of: [Part(key: cut.key, offset: cut.offset, size: length)], leading: true) { bytes.writeImmutableBuffer($0) }
            _ = try await client.call(.PUT, cut.key, body: bytes, op: "PutObject")
        }
    }

    public func deleteStaged(_ upload: String) async throws {
        try BlobStoreError.check(upload)
        // Every object under the staging, parts in order or not.
        for object in try await client.list(partsPrefix(upload), pageSize: listPageSize) {
            try await deleteObject(object.key)
        }
    }
}
