import Foundation
import ParleyBench

/// A real PostgreSQL server for the tests: started once per test process with `scripts/postgres`
/// (Debian's package, a temp directory, a non-root user) unless `PARLEY_TEST_POSTGRES_URL` names
/// one already, and stopped when the process exits. Each test takes a fresh database.
public enum PostgresTestServer {
    /// `postgres://…/parley` of the running server.
    public static func baseURL() throws -> String { try server.get() }

    /// Creates an empty database and returns its URL.
    public static func freshDatabase() throws -> String {
        let base = try baseURL()
        let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        // One at a time: CREATE DATABASE copies the template and is heavy; a crowd of them at once
        // starves the timing-sensitive tests running beside.
        try creating.withLock { _ = try run(psql(), ["-d", base, "-qc", "CREATE DATABASE \(name)"]) }
        return String(base[..<base.lastIndex(of: "/")!]) + "/" + name
    }

    private static let server: Result<String, any Error> = Result {
        if let url = ProcessInfo.processInfo.environment["PARLEY_TEST_POSTGRES_URL"], !url.isEmpty { return url }
        let directory = "/tmp/parley-test-pg-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        startedDirectory = strdup(directory)
        // A port below the ephemeral range: one the kernel picks for `bind(0)` can be taken as a
        // client's source port before the server binds it (seen under load: "address in use").
        let url: String
        do {
            url = try run(script, ["start", directory, String(try LoopbackPort.reservable())]).trimmingCharacters(in: .whitespacesAndNewlines)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
        atexit {
            guard let pointer = PostgresTestServer.startedDirectory else { return }
            let directory = String(cString: pointer)
            _ = try? PostgresTestServer.run(PostgresTestServer.script, ["stop", directory])
            try? FileManager.default.removeItem(atPath: directory)
        }
        return url
    }

    private static let creating = NSLock()

    nonisolated(unsafe) private static var startedDirectory: UnsafeMutablePointer<CChar>?

    /// The repository's `scripts/postgres`.
    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/postgres").path

    private static func psql() -> String {
        for candidate in ["/usr/bin/psql", "/usr/local/bin/psql"] where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        return "psql"
    }

    /// A TCP port nobody listens on right now.
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = LoopbackSocketAddress()
        guard address.bind(fd) else { throw TestServerError(message: "no free port") }
        return address.port
    }

    /// Runs a program to completion; its standard output, or an error with its standard error.
    /// (posix_spawn and waitpid rather than Foundation's Process, whose waitUntilExit can hang on
    /// a cooperative thread while the others are blocked, as in a static initialiser.)
    @discardableResult
    static func run(_ program: String, _ arguments: [String]) throws -> String {
        let (status, output, errors) = try spawn(program, arguments, environment: [:])
        guard status == 0 else { throw TestServerError(message: "\(program) \(arguments.first ?? ""): \(errors)") }
        return output
    }

    /// Runs a program to completion with extra environment variables; its exit status and its
    /// standard output and error together.
    public static func runCapturing(_ program: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
        let (status, output, errors) = try spawn(program, arguments, environment: environment)
        return (status, output + errors)
    }

    private static func spawn(_ program: String, _ arguments: [String], environment: [String: String]) throws -> (Int32, String, String) {
        let scratch = NSTemporaryDirectory() + "parley-run-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: scratch + ".out"); try? FileManager.default.removeItem(atPath: scratch + ".err") }
        let quoted = ([program] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let assignments = environment.map { "\($0.key)='" + $0.value.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        // ChildProcess: the program gets none of our descriptors (a PostgreSQL server would keep
        // the test servers' listening sockets open while it runs).
        let command = "\(assignments.isEmpty ? "" : "env " + assignments + " ")\(quoted) </dev/null >'\(scratch).out' 2>'\(scratch).err'"
        let exitCode: Int32
        do {
            exitCode = ChildProcess.waitForExit(try ChildProcess.spawnShell(command))
        } catch {
            throw TestServerError(message: "cannot start \(program)")
        }
        let output = (try? String(contentsOfFile: scratch + ".out", encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOfFile: scratch + ".err", encoding: .utf8)) ?? ""
        return (exitCode, output, errors)
    }
}

struct TestServerError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// Runs blocking work (waiting for a child process, spawning psql) on a thread of its own, so it
/// never holds one of Swift concurrency's few cooperative threads: on a 2-core machine two blocked
/// ones stall every other test's timers and tasks.
public func offCooperativePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try work() })
        }
    }
}

extension PostgresTestServer {
    /// ``freshDatabase()`` without blocking a cooperative thread.
    public static func freshDatabaseAsync() async throws -> String {
        try await offCooperativePool { try freshDatabase() }
    }
}
