import Foundation
import Synchronization

/// Runs `parley serve` as a child process on a temporary database, so the bench measures the
/// server's memory apart from its own.
public final class ServerLauncher: Sendable {
    public let port: Int
    public let pid: Int32
    private let process: ProcessBox
    private let log: LogLines

    /// - Parameters:
    ///   - binary: the `parley` executable (usually this very process's).
    ///   - extraArguments: more `serve` options (e.g. `--durability normal`); later ones win.
    ///   - port: the port to listen on; 0 picks a free one (a restart passes the previous one).
    public init(binary: String, database: String, port: Int = 0, extraArguments: [String] = []) async throws {
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw BenchAPI.Failure(description: "parley binary not found at \(binary)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["serve", "--port", "\(port)", "--database", database, "--public-dir", "", "--bcrypt-cost", "4",
                             "--sends-per-second", "1000000", "--logins-per-minute", "1000000", "--log-level", "info",
                             // The bench opens its thousands of connections from one address.
                             "--max-connections-per-address", "1000000"] + extraArguments
        // Exit is awaited with a semaphore the termination handler signals, not waitUntilExit (which
        // runs a run loop and can miss the exit when several threads wait on processes at once).
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let log = LogLines()
        let handle = pipe.fileHandleForReading
        Thread.detachNewThread {
            while case let chunk = handle.availableData, !chunk.isEmpty { log.append(String(decoding: chunk, as: UTF8.self)) }
            log.append("\n[exited]")
        }
        let deadline = ContinuousClock.now.advanced(by: .seconds(60))
        var found: Int?
        while found == nil, ContinuousClock.now < deadline {
            let text = log.text
            if let range = text.range(of: #"url=http://127\.0\.0\.1:[0-9]+"#, options: .regularExpression) {
                found = Int(text[range].split(separator: ":").last ?? "")
            } else if text.contains("[exited]") {
                throw BenchAPI.Failure(description: "parley serve exited: \(text)")
            } else {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        guard let port = found else { throw BenchAPI.Failure(description: "parley serve did not start listening") }
        self.port = port
        self.pid = process.processIdentifier
        self.process = ProcessBox(process)
        self.exited = exited
        self.log = log
    }

    private let exited: DispatchSemaphore
    private let reaped = Mutex(false)

    /// Waits (once; later calls return at once) until the process has exited.
    private func waitForExit() {
        let first = reaped.withLock { done in defer { done = true }; return !done }
        if first { exited.wait() }
    }

    /// Everything the server logged so far.
    public var output: String { log.text }

    public var isRunning: Bool { process.value.isRunning }

    /// SIGTERM and wait (graceful shutdown); returns the exit status.
    @discardableResult
    public func stop() -> Int32 {
        process.value.terminate()
        waitForExit()
        return process.value.terminationStatus
    }

    /// SIGKILL: no graceful shutdown, no flush — a crash.
    public func crash() {
        kill(pid, SIGKILL)
        waitForExit()
    }

    /// The path of the running executable.
    public static var currentExecutable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }
}

/// A child process handle, touched only to stop it.
final class ProcessBox: @unchecked Sendable {
    let value: Process
    init(_ value: Process) { self.value = value }
}

final class LogLines: Sendable {
    private let storage = Mutex("")
    var text: String { storage.withLock { $0 } }
    func append(_ more: String) { storage.withLock { $0 += more } }
}
