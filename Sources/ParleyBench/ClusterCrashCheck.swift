import Foundation
import ParleyCore
import Synchronization

/// The crash checker over a cluster (`parley torture --cluster`): several `parley serve` nodes on
/// one PostgreSQL, clients that connect to a random node each time (and send as the SDK's outbox
/// does, one message at a time), and meanwhile, in random order: nodes SIGKILLed and restarted,
/// PostgreSQL restarted, a node frozen (SIGSTOP) and resumed. Then the checks of ``CrashCheck``
/// (rules 1–5), and:
///
/// 6. No node stopped except those it killed (a database restart must never take a node down).
/// 7. Once every client has disconnected, nobody stays online for their partner (presence).
/// 8. Every send is answered: the drain (every message acknowledged and delivered) finishes, no
///    client waiting a minute without anything acknowledged or delivered (a backlog that keeps
///    draining is pace, not a broken promise; 10 minutes at most).
/// 9. No push owed is lost, whichever node was killed while pushing (``PushWatchers``).
public struct ClusterCrashCheck: Sendable {
    public struct Options: Sendable {
        public var binary: String
        /// `postgres://…` of a database the nodes share.
        public var database: String
        public var nodes = 3
        public var pairs = 4
        /// Groups of three writing to their group, beside the pairs.
        public var groups = 2
        public var kills = 3
        public var databaseRestarts = 2
        /// How long the one freeze lasts (0: no freeze). Past the heartbeat expiry (10 s), the
        /// other nodes take the frozen one for dead.
        public var freezeSeconds: Double = 20
        /// Seconds between events, drawn uniformly from this range.
        public var gap: ClosedRange<Double> = 1...3
        public var writeInterval: Duration = .milliseconds(30)
        /// Restarts PostgreSQL (stop fast, start); returns once it accepts connections again.
        public var restartDatabase: @Sendable () async throws -> Void
        public init(binary: String, database: String, restartDatabase: @escaping @Sendable () async throws -> Void) {
            self.binary = binary
            self.database = database
            self.restartDatabase = restartDatabase
        }
    }

    enum Event: CaseIterable { case kill, databaseRestart, freeze }

    /// How a rule-7 (presence) violation begins.
    public static let presenceViolation = "presence:"

    public let options: Options
    public init(options: Options) { self.options = options }

    public func run(progress: @Sendable (String) -> Void = { _ in }) async throws -> CrashCheckReport {
        let nodes = try await ClusterNodes(options: options)
        defer { nodes.stopAll() }
        let api = BenchAPI(baseURL: nodes.url(0))
        // Names of this run's own: the database may hold an earlier run's users.
        let run = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        let watchers = try await PushWatchers()
        defer { Task { await watchers.sink.close() } }
        let clients = try await CrashCheck.register(
            pairs: options.pairs, groups: options.groups, api: api, names: "crash_\(run)_", oneInFlight: true, watchers: watchers)
        let load = ClientLoad(clients, every: options.writeInterval) { nodes.webSocketURL(Int.random(in: 0..<nodes.count)) }
        var events = Array(repeating: Event.kill, count: options.kills) + Array(repeating: .databaseRestart, count: options.databaseRestarts)
        if options.freezeSeconds > 0 { events.append(.freeze) }
        var restarts: [Double] = [], unexpected: [String] = [], databaseRestarts = 0, freezes = 0
        for (number, event) in events.shuffled().enumerated() {
            try await Task.sleep(for: .milliseconds(Int(Double.random(in: options.gap) * 1000)))
            let node = Int.random(in: 0..<nodes.count)
            switch event {
            case .kill:
                restarts.append(try await nodes.killAndRestart(node))
                progress("event \(number + 1)/\(events.count): node \(node) killed, back in \(String(format: "%.2f", restarts.last ?? 0)) s")
            case .databaseRestart:
                try await options.restartDatabase()
                databaseRestarts += 1
                progress("event \(number + 1)/\(events.count): PostgreSQL restarted")
            case .freeze:
                try await nodes.freeze(node, for: options.freezeSeconds)
                freezes += 1
                progress("event \(number + 1)/\(events.count): node \(node) frozen for \(options.freezeSeconds) s")
            }
            unexpected += try await nodes.restartTheStopped()
        }
        // Past the 30 s bound on an unanswered frame: a send nobody answers stalls its client.
        let drained = await load.finish(drainingWithin: .seconds(600), stalledAfter: .seconds(60))
        unexpected += try await nodes.restartTheStopped()

        var report = try await CrashCheck.judge(clients, api: api, restarts: restarts, drained: drained)
        report.violations += await watchers.check(api: api, within: .seconds(60))
        report.databaseRestarts = databaseRestarts
        report.freezes = freezes
        report.violations += unexpected
        let online = await stillOnline(clients, api: api)
        if !online.isEmpty {
            // Where they are counted: sockets a node still holds, or counts without a socket.
            var sockets: [String] = []
            for node in 0..<nodes.count { sockets.append(await BenchAPI(baseURL: nodes.url(node)).openWebSockets().map(String.init) ?? "?") }
            report.violations += online.map { $0 + " (open WebSockets per node: \(sockets.joined(separator: ", ")))" }
        }
        return report
    }

    /// Rule 7: the users still shown online to their partner once every client is gone, after the
    /// heartbeat expiry has had time to pass (a killed node's counts go when it expires).
    private func stillOnline(_ clients: [CrashCheckClient], api: BenchAPI) async -> [String] {
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        var online: [String] = []
        repeat {
            online = []
            for client in clients {
                let summaries = (try? await api.conversations(client.session)) ?? []
                for member in summaries.flatMap(\.members) where client.partner != nil && member.userId == client.partner && member.online == true {
                    online.append("\(Self.presenceViolation) \(member.userId) still online for \(client.session.user.id) after every client left")
                }
            }
            if online.isEmpty { return [] }
            try? await Task.sleep(for: .milliseconds(500))
        } while ContinuousClock.now < deadline
        return online
    }
}

/// The nodes of a cluster check, on fixed loopback ports so a restarted node is found again.
final class ClusterNodes: Sendable {
    private let options: ClusterCrashCheck.Options
    private let ports: [Int]
    private let servers: Mutex<[ServerLauncher]>
    var count: Int { ports.count }

    init(options: ClusterCrashCheck.Options) async throws {
        self.options = options
        var ports: [Int] = [], servers: [ServerLauncher] = []
        for _ in 0..<max(1, options.nodes) {
            let server = try await ServerLauncher(
                binary: options.binary, database: options.database, port: try LoopbackPort.reservable(), extraArguments: ["--push-allow-loopback"])
            ports.append(server.port)
            servers.append(server)
        }
        self.ports = ports
        self.servers = Mutex(servers)
    }

    func url(_ node: Int) -> String { "http://127.0.0.1:\(ports[node])" }
    func webSocketURL(_ node: Int) -> String { "ws://127.0.0.1:\(ports[node])/v1/ws" }

    /// SIGKILL, then a new process on the same port; returns how long until it listened again.
    func killAndRestart(_ node: Int) async throws -> Double {
        let server = servers.withLock { $0[node] }
        await Self.offCooperativePool { server.crash() }
        let start = ContinuousClock.now
        let restarted = try await ServerLauncher(
            binary: options.binary, database: options.database, port: ports[node], extraArguments: ["--push-allow-loopback"])
        servers.withLock { $0[node] = restarted }
        return CrashCheck.seconds(ContinuousClock.now - start)
    }

    /// SIGSTOP, wait, SIGCONT: a node that stops answering without closing anything.
    func freeze(_ node: Int, for seconds: Double) async throws {
        let pid = servers.withLock { $0[node].pid }
        kill(pid, SIGSTOP)
        try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        kill(pid, SIGCONT)
    }

    /// Rule 6: every node that is not running stopped on its own; each is restarted so the check
    /// can go on, and reported.
    func restartTheStopped() async throws -> [String] {
        var stopped: [String] = []
        for node in 0..<count {
            let server = servers.withLock { $0[node] }
            guard !server.isRunning else { continue }
            let status = await Self.offCooperativePool { server.stop() }
            stopped.append("node \(node) stopped by itself (exit status \(status)): \(server.output.suffix(300))")
            let restarted = try await ServerLauncher(
                binary: options.binary, database: options.database, port: ports[node], extraArguments: ["--push-allow-loopback"])
            servers.withLock { $0[node] = restarted }
        }
        return stopped
    }

    /// SIGTERM to every node, and a wait for each.
    func stopAll() {
        for server in servers.withLock({ $0 }) { server.stop() }
    }

    private static func offCooperativePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in Thread.detachNewThread { continuation.resume(returning: work()) } }
    }
}
