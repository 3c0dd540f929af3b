import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open file descriptor, closed when the last reference goes. Blocking: call it off the event loops.
final class POSIXFile: @unchecked Sendable {
    let descriptor: Int32

    private init(_ descriptor: Int32) { self.descriptor = descriptor }
    deinit { close(descriptor) }

    static func openForAppend(_ path: String) throws -> POSIXFile {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw BlobStoreError.storage("open for writing: errno \(errno)") }
        return POSIXFile(fd)
    }

    static func openForReading(_ path: String) throws -> POSIXFile {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw BlobStoreError.storage("open for reading: errno \(errno)") }
        return POSIXFile(fd)
    }

    /// The size of the file at `path`, or nil when there is none.
    static func size(_ path: String) throws -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw BlobStoreError.storage("stat: errno \(errno)")
        }
        return Int64(info.st_size)
    }

    /// Last modification, seconds since 1970, or nil when there is no such file.
    static func modified(_ path: String) -> Double? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        #if canImport(Darwin)
        return Double(info.st_mtimespec.tv_sec)
        #else
        return Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
        #endif
    }

    static func names(in directory: String) throws -> [String] {
        guard let handle = opendir(directory) else {
            if errno == ENOENT { return [] }
            throw BlobStoreError.storage("opendir: errno \(errno)")
        }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    static func syncDirectory(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw BlobStoreError.storage("open directory: errno \(errno)") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw BlobStoreError.storage("fsync directory: errno \(errno)") }
    }

    func size() throws -> Int64 {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw BlobStoreError.storage("fstat: errno \(errno)") }
        return Int64(info.st_size)
    }

    func write(_ buffer: ByteBuffer) throws {
        try buffer.withUnsafeReadableBytes { bytes in
            var done = 0
            while done < bytes.count {
                let written = systemWrite(descriptor, bytes.baseAddress! + done, bytes.count - done)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw BlobStoreError.storage("write: errno \(errno)")
                }
                done += written
            }
        }
    }

    /// Writes the buffers in order, up to 64 in one `writev` (no gathering copy in between); a
    /// partial write goes on from where it stopped.
    func write(_ buffers: [ByteBuffer]) throws {
        var remaining = buffers.filter { $0.readableBytes > 0 }[...]
        while !remaining.isEmpty {
            let batch = remaining.prefix(64)
            var vectors: [iovec] = []
            vectors.reserveCapacity(batch.count)
            let written = Self.withVectors(batch, &vectors) { writev(descriptor, $0, Int32($1)) }
            if written < 0 {
                if errno == EINTR { continue }
                throw BlobStoreError.storage("write: errno \(errno)")
            }
            var left = written
            while left > 0, var first = remaining.first {
                let taken = min(left, first.readableBytes)
                first.moveReaderIndex(forwardBy: taken)
                left -= taken
                if first.readableBytes == 0 { remaining.removeFirst() } else { remaining[remaining.startIndex] = first }
            }
        }
    }

    /// Calls `body` with an iovec for each buffer's readable bytes, each pinned while it runs.
    private static func withVectors(
        _ buffers: ArraySlice<ByteBuffer>, _ vectors: inout [iovec], _ body: (UnsafePointer<iovec>, Int) -> Int
    ) -> Int {
        guard let first = buffers.first else { return vectors.withUnsafeBufferPointer { body($0.baseAddress!, $0.count) } }
        return first.withUnsafeReadableBytes { bytes in
            vectors.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress), iov_len: bytes.count))
            return withVectors(buffers.dropFirst(), &vectors, body)
        }
    }

    func sync() throws {
        guard fsync(descriptor) == 0 else { throw BlobStoreError.storage("fsync: errno \(errno)") }
    }

    func read(at offset: Int64, count: Int) throws -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(count)
        let read = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { target in
            var done = 0
            while done < count {
                let got = pread(descriptor, target.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if got < 0 {
                    if errno == EINTR { continue }
                    throw BlobStoreError.storage("read: errno \(errno)")
                }
                if got == 0 { break }
                done += got
            }
            return done
        }
        guard read == count else { throw BlobStoreError.storage("the file is shorter than it was") }
        return buffer
    }

    /// Calls `body` with each chunk of up to 1 MiB from `offset` (to the end when `count` is nil).
    func readChunks(from offset: Int64, count: Int64?, _ body: ([UInt8]) throws -> Void) throws {
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        var position = offset
        let end = count.map { offset + $0 }
        while end.map({ position < $0 }) ?? true {
            let want = end.map { Int(min($0 - position, Int64(chunk.count))) } ?? chunk.count
            let got = chunk.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress!, want, off_t(position)) }
            if got < 0 {
                if errno == EINTR { continue }
                throw BlobStoreError.storage("read: errno \(errno)")
            }
            if got == 0 { break }
            try body(got == chunk.count ? chunk : Array(chunk[0..<got]))
            position += Int64(got)
        }
    }
}

#if canImport(Glibc)
private let systemWrite = Glibc.write
#else
private let systemWrite = Darwin.write
#endif
