import Foundation
import Logging
import ParleyTestSupport
import Synchronization

/// A small tmpfs the test mounts (the tests run as root, as CI does), to fill up for real.
struct SmallDisk {
    let path: String
    private var filler: String { path + "/filler" }

    /// Mounts it, on a thread of its own: a process is waited for off the cooperative pool.
    static func mount(megabytes: Int) async throws -> SmallDisk {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("parley-disk-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try await offCooperativePool { try Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path]) }
        return SmallDisk(path: path)
    }

    /// Writes a filler file until the disk says it is full.
    func fill() throws {
        _ = FileManager.default.createFile(atPath: filler, contents: nil)
        guard let handle = FileHandle(forWritingAtPath: filler) else { throw TestFailure("cannot open the filler") }
        defer { try? handle.close() }
        let chunk = Data(count: 16 * 1024)
        while (try? handle.write(contentsOf: chunk)) != nil {}
    }

    func makeRoom() throws { try FileManager.default.removeItem(atPath: filler) }

    func unmount() { try? Self.run("/bin/umount", ["-l", path]) }

    /// posix_spawn and waitpid (`PostgresTestServer.runCapturing`), not Foundation's Process, whose
    /// `waitUntilExit` can miss an exit and hang the whole run.
    private static func run(_ tool: String, _ arguments: [String]) throws {
        let (status, output) = try PostgresTestServer.runCapturing(tool, arguments)
        guard status == 0 else {
            throw TestFailure("\(tool) \(arguments.joined(separator: " ")) failed (\(status)): \(output); these tests mount a tmpfs and need root")
        }
    }
}

/// A logger whose lines the test can read.
final class CapturedLog: Sendable {
    private let storage = Mutex<[String]>([])
    var lines: [String] { storage.withLock { $0 } }

    var logger: Logger {
        var logger = Logger(label: "captured") { _ in Handler(log: self) }
        logger.logLevel = .info
        return logger
    }

    fileprivate func append(_ line: String) { storage.withLock { $0.append(line) } }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            log.append("\(event.level) \(event.message) \(event.metadata ?? [:])")
        }
    }
}
