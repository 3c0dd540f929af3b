import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore

/// The real `parley` binary running as a child process, for tests that must kill it like a crash.
final class ServerProcess: @unchecked Sendable {
    let process = Process()
    let port: Int

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
        port = try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                var log = ""
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { throw TestFailure("parley exited before listening: \(log)") }
                    log += String(decoding: chunk, as: UTF8.self)
                    if let range = log.range(of: #"url=http://127\.0\.0\.1:(\d+)"#, options: .regularExpression),
                       let port = Int(log[range].split(separator: ":").last ?? "") {
                        return port
                    }
                }
            }
            group.addTask {
                try await Task.sleep(for: .seconds(30))
                throw TestFailure("parley did not start listening within 30 s")
            }
            defer { group.cancelAll() }
            return try await group.next() ?? 0
        }
        // Keep draining the log so the child never blocks on a full pipe.
        Thread.detachNewThread { while !handle.availableData.isEmpty {} }
    }

    /// SIGKILL: no graceful shutdown, no flush — a crash.
    func crash() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

