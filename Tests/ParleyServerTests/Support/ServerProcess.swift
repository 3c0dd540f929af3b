import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Synchronization

/// The real `parley` binary running as a child process, for tests that must kill it like a crash.
final class ServerProcess: @unchecked Sendable {
    let process = Process()
    let port: Int
    private let log = LogBuffer()

    static let exitedMarker = "[parley exited]"

    /// Everything the server logged so far.
    var output: String { log.text }

    /// Starts `parley serve` on a free port and waits until it listens.
    init(database: String) async throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("parley")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw TestFailure("parley binary not found at \(binary.path); build it first (swift build)")
        }
        process.executableURL = binary
        process.arguments = ["serve", "--port", "0", "--database", database, "--bcrypt-cost", "4", "--public-dir", "",
                             "--durability", "full", "--sends-per-second", "100000"]
        let output = Pipe()
        process.standardError = output
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let handle = output.fileHandleForReading
        // Drain the log on a thread for the child's whole life, so it never blocks on a full pipe.
        Thread.detachNewThread { [log] in
            while case let chunk = handle.availableData, !chunk.isEmpty {
                log.append(String(decoding: chunk, as: UTF8.self))
            }
            log.append("\n" + Self.exitedMarker)
        }
        port = try await withThrowingTaskGroup(of: Int.self) { [log] group in
            group.addTask {
                while true {
                    let text = log.text
                    if let range = text.range(of: #"url=http://127\.0\.0\.1:(\d+)"#, options: .regularExpression),
                       let port = Int(text[range].split(separator: ":").last ?? "") {
                        return port
                    }
                    if text.contains(Self.exitedMarker) { throw TestFailure("parley exited before listening: \(text)") }
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            group.addTask {
                try await Task.sleep(for: .seconds(30))
                throw TestFailure("parley did not start listening within 30 s")
            }
            defer { group.cancelAll() }
            return try await group.next() ?? 0
        }
    }

    /// SIGKILL: no graceful shutdown, no flush — a crash.
    func crash() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGTERM, as an orchestrator stops a service; returns the exit status.
    @discardableResult
    func stop() -> Int32 {
        process.terminate()
        process.waitUntilExit()
        return process.terminationStatus
    }
}


/// Text appended by one thread and read by others.
final class LogBuffer: Sendable {
    private let storage = Mutex("")
    var text: String { storage.withLock { $0 } }
    func append(_ more: String) { storage.withLock { $0 += more } }
}
