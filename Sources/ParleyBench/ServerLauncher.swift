import Foundation
import Synchronization

/// Runs `parley serve` as a child process on a temporary database, so the bench measures the
/// server's memory apart from its own.
public final class ServerLauncher: Sendable {
    public let port: Int
    public let pid: Int32
    private let log: LogLines

    /// - Parameters:
    ///   - binary: the `parley` executable (usually this very process's).
    ///   - extraArguments: more `serve` options (e.g. `--durability normal`); later ones win.
    ///   - port: the port to listen on; 0 picks a free one (a restart passes the previous one).
    public init(binary: String, database: String, port: Int = 0, extraArguments: [String] = []) async throws {
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw BenchAPI.Failure(description: "parley binary not found at \(binary)")
        }
        let arguments =
            [
                "serve", "--port", "\(port)", "--database", database, "--public-dir", "", "--bcrypt-cost", "4",
                "--sends-per-second", "1000000", "--logins-per-minute", "1000000", "--log-level", "info",
                // The bench opens its thousands of connections from one address.
                "--max-connections-per-address", "1000000",
            ] + extraArguments
        let (pid, standardError) = try Self.spawn(binary, arguments)
        let log = LogLines()
        Thread.detachNewThread {
            let handle = FileHandle(fileDescriptor: standardError, closeOnDealloc: true)
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
        guard let port = found else {
            kill(pid, SIGKILL)
            throw BenchAPI.Failure(description: "parley serve did not start listening")
        }
        self.port = port
        self.pid = pid
        self.log = log
    }

    /// Starts `binary` with `arguments` (``ChildProcess``): standard output to /dev/null, standard
    /// error to a pipe whose reading end is returned with the child's pid.
    static func spawn(_ binary: String, _ arguments: [String]) throws -> (pid: Int32, standardError: Int32) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw BenchAPI.Failure(description: "cannot make a pipe for parley serve") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, ends[1], 2)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        defer { close(ends[1]) }
        do {
            return (try ChildProcess.spawnShell(#"exec "$0" "$@""#, arguments: [binary] + arguments, actions: &actions), ends[0])
        } catch {
            close(ends[0])
            throw BenchAPI.Failure(description: "cannot start \(binary)")
        }
    }

    /// The exit status once the process has exited (`nil` before).
    private let exitStatus = Mutex<Int32?>(nil)

    /// Waits until the process has exited, reaps it and returns its status (its exit code, or
    /// 128 + the signal that ended it); later calls return at once.
    @discardableResult
    private func waitForExit() -> Int32 {
        if let status = exitStatus.withLock({ $0 }) { return status }
        var status: Int32?
        while status == nil {
            status = Self.exitedStatus(of: pid)
            if status == nil { usleep(20_000) }
        }
        _ = ChildProcess.waitForExit(pid)  // reaps it: the status was read above
        exitStatus.withLock { $0 = $0 ?? status }
        return exitStatus.withLock { $0 } ?? -1
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

    public var isRunning: Bool { exitStatus.withLock { $0 } == nil && Self.exitedStatus(of: pid) == nil }

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

final class LogLines: Sendable {
    private let storage = Mutex("")
    var text: String { storage.withLock { $0 } }
    func append(_ more: String) { storage.withLock { $0 += more } }
}
