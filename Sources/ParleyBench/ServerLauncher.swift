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
        process.arguments =
            [
                "serve", "--port", "\(port)", "--database", database, "--public-dir", "", "--bcrypt-cost", "4",
                "--sends-per-second", "1000000", "--logins-per-minute", "1000000", "--log-level", "info",
                // The bench opens its thousands of connections from one address.
                "--max-connections-per-address", "1000000",
            ] + extraArguments
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
    /// The exit status once the process has exited (`nil` before).
    private let exitStatus = Mutex<Int32?>(nil)

    /// Waits until the process has exited and returns its status (its exit code, or 128 + the
    /// signal that ended it); later calls return at once.
    ///
    /// Foundation hears of a child's exit through SIGCHLD, and a thread that does not block the
    /// signal can take it instead: then the termination handler never runs, the child stays a
    /// zombie and a wait on the handler alone waits for ever (a full test run hung on it). So the
    /// exit is also polled with `waitid(WNOWAIT)`, which reads the status and leaves the reaping to
    /// Foundation.
    @discardableResult
    private func waitForExit() -> Int32 {
        if let status = exitStatus.withLock({ $0 }) { return status }
        var status: Int32?
        while status == nil {
            if exited.wait(timeout: .now() + .milliseconds(50)) == .success {
                exited.signal()  // for any other waiter
                let code = process.value.terminationStatus
                status = process.value.terminationReason == .uncaughtSignal ? 128 + code : code
            } else {
                status = Self.exitedStatus(of: pid)
            }
        }
        exitStatus.withLock { $0 = $0 ?? status }
        return status ?? -1
    }

    /// The status of `pid` if it has exited (its zombie is left in place), else `nil`.
    static func exitedStatus(of pid: Int32) -> Int32? {
        var info = siginfo_t()
        guard waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0, info._sifields._sigchld.si_pid == pid else { return nil }
        let value = info._sifields._sigchld.si_status
        return info.si_code == CLD_EXITED ? value : 128 + value
    }

    /// Everything the server logged so far.
    public var output: String { log.text }

    public var isRunning: Bool { exitStatus.withLock { $0 } == nil && process.value.isRunning && Self.exitedStatus(of: pid) == nil }

    /// SIGTERM and wait (graceful shutdown); returns the exit status.
    @discardableResult
    public func stop() -> Int32 {
        if isRunning { kill(pid, SIGTERM) }
        return waitForExit()
    }

    /// SIGKILL: no graceful shutdown, no flush — a crash.
    public func crash() {
        if isRunning { kill(pid, SIGKILL) }
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
