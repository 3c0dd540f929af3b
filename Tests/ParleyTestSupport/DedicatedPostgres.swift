import Foundation
import ParleyBench

/// A PostgreSQL server of one test's own, for tests that stop and start it (the shared
/// ``PostgresTestServer`` serves every other test of the process and must stay up). Debian's
/// package through `scripts/postgres`, in a temporary directory, on a loopback port.
public final class DedicatedPostgres: Sendable {
    /// `postgres://…/parley` of this server.
    public let url: String
    private let directory: String
    private let port: Int

    public init() throws {
        directory = "/tmp/parley-test-pg-dedicated-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        port = try LoopbackPort.reservable()
        do {
            url = try PostgresTestServer.run(PostgresTestServer.script, ["start", directory, String(port)])
                .trimmingCharacters(in: .whitespacesAndNewlines)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    /// `pg_ctl stop -m fast`: every session is terminated ("terminating connection due to
    /// administrator command") and open transactions are rolled back.
    public func stop() throws { try PostgresTestServer.run(PostgresTestServer.script, ["stop", directory]) }

    /// Starts it again on the same port and data directory.
    public func start() throws { try PostgresTestServer.run(PostgresTestServer.script, ["start", directory, String(port)]) }

    /// Stops the server and removes its files.
    public func remove() {
        try? stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
