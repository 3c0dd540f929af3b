import Crypto
import NIOCore
import NIOPosix
import ParleyCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Blobs in a local directory (the default): `blobs/ab/<sha256>` and `staging/<upload id>`, files
/// 0600 in directories 0700. A blob is written under its staging name, synced, then linked into
/// place (and the directory synced), so a crash leaves either no blob or the whole one. Blocking
/// file calls run on a thread pool of their own (``ioPool``); a request body's chunks are written
/// together (`writev`) once they reach 1 MiB.
public struct LocalBlobStore: BlobStore {
    public let root: String
    let pool: NIOThreadPool

    /// The threads file writes wait on: a pool of their own, so a burst of uploads waiting for the
    /// disk (an fsync can take a second on a busy disk) never delays what else runs on NIO's shared
    /// blocking pool (name resolution, static files).
    public static let ioPool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 4)
        pool.start()
        return pool
    }()

    /// Creates the directories when missing. - Throws: ``BlobStoreError/storage(_:)``.
    public init(directory: String, pool: NIOThreadPool = LocalBlobStore.ioPool) throws {
        self.root = directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory
        self.pool = pool
        // The parents too (`data/files` on a first start), as `mkdir -p` would.
        var path = root.hasPrefix("/") ? "" : "."
        for component in root.split(separator: "/") {
            path += "/" + component
            guard mkdir(path, 0o700) == 0 || errno == EEXIST else { throw BlobStoreError.storage("cannot create \(path): errno \(errno)") }
        }
        // The 256 directories blobs go in, made now rather than by the first upload to land in each
        // (a new directory is an inode and a directory sync: a tenth of a fresh server's upload CPU).
        let prefixes = (0..<256).map { "\(root)/blobs/\(LowercaseHex.string([UInt8($0)]))" }
        for path in ["\(root)/blobs", "\(root)/staging"] + prefixes {
            guard mkdir(path, 0o700) == 0 || errno == EEXIST else { throw BlobStoreError.storage("cannot create \(path): errno \(errno)") }
        }
    }

    func stagingPath(_ upload: String) -> String { "\(root)/staging/\(upload)" }
    func blobPath(_ key: BlobKey) -> String { "\(root)/blobs/\(key.sha256.prefix(2))/\(key.sha256)" }

    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await pool.runIfActive(work)
    }

    public func stagedSize(_ upload: String) async throws -> Int64 {
        try BlobStoreError.check(upload)
        let path = stagingPath(upload)
        return try await run { try POSIXFile.size(path) ?? 0 }
    }

    public func appendStaged<Body: AsyncSequence>(_ upload: String, at offset: Int64, limit: Int64, body: Body) async throws -> Int64
    where Body.Element == ByteBuffer {
        try BlobStoreError.check(upload)
        let path = stagingPath(upload)
        let file = try await run { () throws -> POSIXFile in
            let file = try POSIXFile.openForAppend(path)
            // One append at a time, across processes too (two nodes sharing the directory).
            guard flock(file.descriptor, LOCK_EX | LOCK_NB) == 0 else { throw BlobStoreError.busy }
            return file
        }
        // Unlocked on every way out, not when the descriptor is closed: the thread pool may hold the
        // last reference to it a moment after this returns, and the next append would find it locked.
        defer { flock(file.descriptor, LOCK_UN) }
        var staged = try await run { try file.size() }
        guard staged == offset else { throw BlobStoreError.offsetMismatch(staged: staged) }
        // The chunks as they came (no copy into one buffer), written together once they reach 1 MiB.
        var pending: [ByteBuffer] = []
        var pendingBytes = 0
        let flushAt = 1 << 20
        func flush() async throws {
            guard pendingBytes > 0 else { return }
            let buffers = pending
            pending.removeAll(keepingCapacity: true)
            pendingBytes = 0
            try await run { try file.write(buffers) }
        }
        do {
            for try await chunk in body {
                guard staged + Int64(chunk.readableBytes) <= limit else {
                    try await flush()
                    throw BlobStoreError.tooLarge(limit: limit)
                }
                staged += Int64(chunk.readableBytes)
                pending.append(chunk)
                pendingBytes += chunk.readableBytes
                if pendingBytes >= flushAt { try await flush() }
            }
            try await flush()
        } catch {
            // What arrived before the body failed stays staged (a resumed upload goes on from there).
            try? await flush()
            try? await run { try file.sync() }
            throw error
        }
        try await run { try file.sync() }
        return staged
    }

    public func truncateStaged(_ upload: String, to size: Int64) async throws {
        try BlobStoreError.check(upload)
        let path = stagingPath(upload)
        try await run {
            guard truncate(path, off_t(size)) == 0 || errno == ENOENT else { throw BlobStoreError.storage("truncate: errno \(errno)") }
        }
    }

    public func commitStaged(_ upload: String, hashed: StoredBlob?) async throws -> StoredBlob {
        try BlobStoreError.check(upload)
        let staging = stagingPath(upload)
        let root = self.root
        return try await run {
            guard let file = try? POSIXFile.openForReading(staging) else { throw BlobStoreError.nothingStaged }
            // Hashed here, the staging may be one a crash left: synced before it is named (the
            // appends that the caller hashed synced it as they ended).
            let (key, size) =
                try hashed.map { hashed in
                    guard try file.size() == hashed.size else { throw BlobStoreError.storage("the staging is not the size that was hashed") }
                    return (hashed.key, hashed.size)
                } ?? Self.syncedAndHashed(file)
            let hex = key.sha256
            let directory = "\(root)/blobs/\(hex.prefix(2))"
            // Made at start; again here only if someone removed it since.
            guard mkdir(directory, 0o700) == 0 || errno == EEXIST else { throw BlobStoreError.storage("mkdir: errno \(errno)") }
            let target = "\(directory)/\(hex)"
            // A second name for the staged file (synced already), the staging left for the caller
            // to remove (rule 2). The staging is never written again once it is whole: appends stop
            // at the upload's length, and a chunk failing its checksum is cut before any commit.
            if link(staging, target) == 0 {
                // Its time is now (the staging's may be a day old): the collector's grace starts here.
                utimes(target, nil)
                try POSIXFile.syncDirectory(directory)
            } else if errno == EEXIST {
                // The same bytes again: one blob, whose time says it was stored again (the collector's grace).
                utimes(target, nil)
            } else {
                throw BlobStoreError.storage("link: errno \(errno)")
            }
            return StoredBlob(key: key, size: size)
        }
    }

    /// Syncs the file, then reads it through and hashes it.
    static func syncedAndHashed(_ file: POSIXFile) throws -> (BlobKey, Int64) {
        try file.sync()
        var hash = SHA256()
        var size: Int64 = 0
        try file.readChunks(from: 0, count: nil) { chunk in
            hash.update(data: chunk)
            size += Int64(chunk.count)
        }
        guard let key = BlobKey(sha256: LowercaseHex.string(Array(hash.finalize()))) else {
            throw BlobStoreError.storage("a digest that is not 64 hex digits")
        }
        return (key, size)
    }

    public func deleteStaged(_ upload: String) async throws {
        try BlobStoreError.check(upload)
        let path = stagingPath(upload)
        try await run { guard unlink(path) == 0 || errno == ENOENT else { throw BlobStoreError.storage("unlink: errno \(errno)") } }
    }

    public func size(of key: BlobKey) async throws -> Int64? {
        let path = blobPath(key)
        return try await run { try POSIXFile.size(path) }
    }

    public func modified(_ key: BlobKey) async throws -> Double? {
        let path = blobPath(key)
        return try await run { POSIXFile.modified(path) }
    }

    public func read(_ key: BlobKey, range: Range<Int64>?) async throws -> BlobBody {
        let path = blobPath(key)
        let file = try await run { () throws -> POSIXFile in
            do { return try POSIXFile.openForReading(path) } catch { throw BlobStoreError.notFound }
        }
        let total = try await run { try file.size() }
        let range = range ?? 0..<total
        guard range.lowerBound >= 0, range.upperBound <= total else { throw BlobStoreError.notFound }
        let pool = self.pool
        let cursor = ReadCursor(file: file, next: range.lowerBound, end: range.upperBound)
        let chunks = AsyncThrowingStream<ByteBuffer, any Error> {
            try await pool.runIfActive { try cursor.nextChunk() }
        }
        return BlobBody(size: Int64(range.count), chunks: chunks)
    }

    public func delete(_ key: BlobKey) async throws {
        let path = blobPath(key)
        try await run { guard unlink(path) == 0 || errno == ENOENT else { throw BlobStoreError.storage("unlink: errno \(errno)") } }
    }

    public func blobs(olderThan date: Double) async throws -> [BlobKey] {
        let root = self.root
        return try await run {
            var keys: [BlobKey] = []
            for directory in try POSIXFile.names(in: "\(root)/blobs") where directory.utf8.count == 2 {
                for name in try POSIXFile.names(in: "\(root)/blobs/\(directory)") {
                    guard let key = BlobKey(sha256: name), let modified = POSIXFile.modified("\(root)/blobs/\(directory)/\(name)"),
                        modified < date
                    else { continue }
                    keys.append(key)
                }
            }
            return keys
        }
    }

    public func staged(olderThan date: Double) async throws -> [String] {
        let root = self.root
        return try await run {
            try POSIXFile.names(in: "\(root)/staging").filter { name in
                (try? BlobStoreError.check(name)) != nil && (POSIXFile.modified("\(root)/staging/\(name)") ?? date) < date
            }
        }
    }
}

/// Reads a range of an open file in chunks of 256 KiB, one chunk per call.
final class ReadCursor: @unchecked Sendable {
    let file: POSIXFile
    var next: Int64
    let end: Int64

    init(file: POSIXFile, next: Int64, end: Int64) {
        self.file = file
        self.next = next
        self.end = end
    }

    func nextChunk() throws -> ByteBuffer? {
        guard next < end else { return nil }
        let count = Int(min(end - next, 256 << 10))
        let buffer = try file.read(at: next, count: count)
        next += Int64(buffer.readableBytes)
        return buffer
    }
}
