import Foundation
import ParleyBench
import ParleyTestSupport
import Testing

/// `parley serve` refuses bad configuration with a clear message instead of starting half-configured.
@Suite struct ServeCommandTests {
    /// Runs `parley` with `arguments` (posix_spawn and waitpid off the cooperative pool: Foundation's
    /// `Process.waitUntilExit` can miss an exit when several tests wait at once).
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> (status: Int32, output: String) {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("parley").path
        return try await offCooperativePool { try PostgresTestServer.runCapturing(binary, arguments, environment: environment) }
    }

    @Test(
        arguments: [
            (["serve", "--port", "70000"], [:], "port must be from 0 to 65535"),
            (["serve", "--log-level", "loud"], [:], "Unknown log level 'loud'"),
            (["serve", "--durability", "maybe"], [:], "Unknown durability 'maybe'"),
            (["serve", "--bcrypt-cost", "3"], [:], "bcrypt-cost must be from 4 to 31"),
            (["serve", "--log-format", "xml"], [:], "Unknown log format 'xml'"),
            (["serve"], ["PARLEY_PORT": "eighty"], "PARLEY_PORT must be a whole number"),
            (["serve", "--sends-per-second", "0"], [:], "sends-per-second must be more than 0"),
            (["serve", "--database", "mysql://db/parley"], [:], "Unsupported database 'mysql://…'"),
            (["serve", "--database", "postgres://db.example/parley"], [:], "The database URL has no user name."),
            (["serve"], ["PARLEY_DATABASE": "postgres://parley@localhost:5432"], "The database URL has no database name"),
        ] as [([String], [String: String], String)])
    func badSettingsAreRefused(arguments: [String], environment: [String: String], message: String) async throws {
        let (status, output) = try await Self.run(arguments, environment: environment)
        #expect(status != 0)
        #expect(output.contains(message), "\(output)")
    }

    /// A real PostgreSQL server refusing, or nobody listening: one line saying why, exit status 1,
    /// and the password never in the output.
    @Test func unusableDatabasesAreOneClearLine() async throws {
        let base = try await offCooperativePool { try PostgresTestServer.baseURL() }
        let port = try #require(URLComponents(string: base)?.port)
        let closed = try LoopbackPort.reservable()  // nothing listens there: no other test is given it
        let cases: [(String, String)] = [
            ("postgres://parley:wrong-secret@127.0.0.1:\(port)/parley", "the password or user name is wrong."),
            ("postgres://parley:parley@127.0.0.1:\(port)/no_such_database", "the database does not exist"),
            ("postgres://parley:parley@127.0.0.1:\(closed)/parley", "cannot connect (is PostgreSQL running on that host and port?)"),
        ]
        for (url, reason) in cases {
            let (status, output) = try await Self.run(["serve", "--port", "0", "--database", url])
            #expect(status == 1)
            let errorLines = output.split(separator: "\n").filter { $0.hasPrefix("Error:") }
            #expect(errorLines.count == 1 && errorLines[0].contains("Cannot use the database") && errorLines[0].contains(reason), "\(output)")
            #expect(!output.contains("wrong-secret"))
        }
    }
}
