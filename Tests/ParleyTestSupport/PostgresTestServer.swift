import Foundation
import Logging
import ParleyBench
import ParleyPostgres

/// A real PostgreSQL server for the tests: started once per test process with `scripts/postgres`
/// (Debian's package, a temp directory, a non-root user) unless `PARLEY_TEST_POSTGRES_URL` names
/// one already, and stopped when the process exits. Each test takes a fresh database.
public enum PostgresTestServer {
    /// `postgres://…/parley` of the running server.
    public static func baseURL() throws -> String { try server.get() }

    /// Creates a database with every migration applied, copied from this process's template, and
    /// returns its URL.
    ///
    /// Why a template: each test migrating its own database (sixteen migrations, their functions
    /// compiled) kept PostgreSQL busy for a minute on two cores when the suite's database tests
    /// start together, and the timing-sensitive tests running beside it starved (a first run on a
    /// fresh machine failed so). A copy is one file-level `CREATE DATABASE … TEMPLATE`.
    static func freshDatabase(template: String) throws -> String {
        let base = try baseURL()
        let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        // One at a time: CREATE DATABASE copies the template and is heavy; a crowd of them at once
        // starves the timing-sensitive tests running beside.
        try creating.withLock { _ = try run(psql(), ["-d", base, "-qc", "CREATE DATABASE \(name) TEMPLATE \(template)"]) }
        return url(of: name, base: base)
    }

    /// `base` with its database name replaced by `name`.
    static func url(of name: String, base: String) -> String {
        String(base[..<base.lastIndex(of: "/")!]) + "/" + name
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

    static func psql() -> String {
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
    /// A fresh, migrated database (``freshDatabase(template:)``) without blocking a cooperative thread.
    public static func freshDatabaseAsync() async throws -> String {
        let template = try await MigratedTemplate.shared.name()
        return try await offCooperativePool { try freshDatabase(template: template) }
    }
}

/// The database every test database is copied from: made and migrated once per test process, by
/// the store's own migrations, and never connected to again (PostgreSQL copies a template only
/// while nobody is connected to it).
actor MigratedTemplate {
    static let shared = MigratedTemplate()
    private var made: Task<String, any Error>?

    func name() async throws -> String {
        let making = made ?? Task { try await Self.make() }
        made = making
        return try await making.value
    }

    private static func make() async throws -> String {
        let base = try await offCooperativePool { try PostgresTestServer.baseURL() }
        let name = "template_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        _ = try await offCooperativePool { try PostgresTestServer.run(PostgresTestServer.psql(), ["-d", base, "-qc", "CREATE DATABASE \(name)"]) }
        var logger = Logger(label: "test-template")
        logger.logLevel = .warning
        let store = try await PostgresStore.connect(try DatabaseURL(PostgresTestServer.url(of: name, base: base)), poolSize: 1, logger: logger)
        try await store.close()
        return name
    }
}
