import Foundation
import ParleyCore
import Synchronization

/// The crash checker behind `parley torture`: runs the real server under load from clients that
/// retry and resume, SIGKILLs it at random moments and restarts it on the same database, then
/// checks every guarantee that can be seen from outside (see docs/guarantees.md):
///
/// 1. Every acknowledged message is stored exactly once, as acknowledged (id, seq, text).
/// 2. After the drain, every clientId ever written is stored exactly once.
/// 3. seq is gapless (1…n) in every conversation.
/// 4. Each sender's messages are stored in the order written.
/// 5. Every receiver got every message of its conversation exactly once, with stream positions
///    one after another for a pair, ascending for a group's member (a group message skips positions,
///    see docs/protocol.md), or after an explicit `resync`. Groups of three write beside the pairs:
///    every member must see every message and membership entry of its group.
/// 6. Every restart came up on the database as it was left, with no repair.
/// 7. Every acknowledged message action (reactions, edits, deletes, mixed into the load) was
///    applied once, in the order written, and reached every member (``CrashCheckActionRules``).
/// 8. No text of a message deleted for everyone is left in the database file (or its WAL) once the
///    server stopped and ``Options/checkpoint`` ran.
/// 9. No push owed is lost: each group's offline member, subscribed on a local push service, was
///    pushed its group's newest message (``PushWatchers``).
/// 10. Files uploaded through the kills: an offset the server acknowledged is never lost, each
///    complete file is sent in exactly one message, and its reader downloads exactly its bytes
///    (``CrashCheckUploader``).
/// 11. Read receipts sent through the kills (every client reads as it goes, ``ReceiptWitness``):
///    an acknowledged read cursor is stored, and no cursor or group receipt summary moves back.
public struct CrashCheck: Sendable {
    public struct Options: Sendable {
        public var binary: String
        public var database: String
        public var kills = 5
        public var pairs = 4
        /// Groups of three users writing to their group, beside the pairs.
        public var groups = 2
        /// Users sending files to a partner of their own, one file after another (rule 10).
        public var uploaders = 1
        /// Seconds between kills, drawn uniformly from this range; a kill then also waits for the
        /// load to move on: a message acknowledged and every uploader's next file sent.
        public var gap: ClosedRange<Double> = 0.3...1.5
        /// Each client writes a message this often.
        public var writeInterval: Duration = .milliseconds(15)
        public var serveArguments: [String] = ["--durability", "full"]
        /// Run on the database once the server stopped, before rule 8 reads the file: a checkpoint
        /// that empties the WAL (the check reads what is on disk, WAL included).
        public var checkpoint: (@Sendable (String) async throws -> Void)?
        public init(binary: String, database: String) {
            self.binary = binary
            self.database = database
        }
    }

    public let options: Options
    public init(options: Options) { self.options = options }

    /// The options' arguments, and the push service on loopback of rule 9.
    var serveArguments: [String] { options.serveArguments + ["--push-allow-loopback", "--uploads-per-minute", "100000"] }

    public func run(progress: @Sendable (String) -> Void = { _ in }) async throws -> CrashCheckReport {
        // A port outside the ephemeral range: the restarts must find it free (see LoopbackPort).
        var server = try await ServerLauncher(
            binary: options.binary, database: options.database, port: try LoopbackPort.reservable(), extraArguments: serveArguments)
        let port = server.port, url = "http://127.0.0.1:\(port)"
        let api = BenchAPI(baseURL: url)
        let watchers = try await PushWatchers()
        let clients = try await Self.register(
            pairs: options.pairs, groups: options.groups, api: api, names: "crash", oneInFlight: false, watchers: watchers)
        let load = ClientLoad(clients, every: options.writeInterval) { "ws://127.0.0.1:\(port)/v1/ws" }
        let uploads = try await UploadLoad(uploaders: options.uploaders, api: api, names: "crashf")
        var restarts: [Double] = []
        for kill in 1...max(1, options.kills) {
            try await Task.sleep(for: .milliseconds(Int(Double.random(in: options.gap) * 1000)))
            await Self.progress(of: load, uploads, within: .seconds(30))
            server.crash()
            let start = ContinuousClock.now
            server = try await ServerLauncher(binary: options.binary, database: options.database, port: port, extraArguments: serveArguments)
            restarts.append(Self.seconds(ContinuousClock.now - start))
            progress("kill \(kill)/\(options.kills): restarted in \(String(format: "%.2f", restarts.last ?? 0)) s")
        }
        let drained = await load.finish(drainingWithin: .seconds(60))
        await uploads.finish()
        var report = try await Self.judge(clients, api: api, restarts: restarts, drained: drained)
        report.violations += await watchers.check(api: api, within: .seconds(30))
        try await uploads.judge(&report, api: api)
        await watchers.sink.close()
        server.stop()
        try await options.checkpoint?(options.database)
        report.violations += CrashCheckActionRules.deletedTextsLeft(in: options.database, clients: clients)
        return report
    }

    /// Waits until the load moved on since the last restart: a message acknowledged and every
    /// uploader's next file sent. A kill then always falls on work (on a loaded machine the server
    /// could be killed again before anything got through, and a run sent almost no file). Bounded:
    /// a server that stopped answering is killed all the same, and the rules judge what it did.
    static func progress(of load: ClientLoad, _ uploads: UploadLoad, within limit: Duration) async {
        let acked = load.clients.reduce(0) { $0 + $1.ackedCount }, files = uploads.uploaders.map(\.sent.count)
        let deadline = ContinuousClock.now.advanced(by: limit)
        while ContinuousClock.now < deadline {
            let moved = load.clients.reduce(0) { $0 + $1.ackedCount } > acked || load.clients.isEmpty
            if moved, zip(uploads.uploaders, files).allSatisfy({ $0.sent.count > $1 }) { return }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Registers `pairs` pairs of users named `<names><n>a` / `b`, each a client writing to the other,
    /// and `groups` groups of three (`<names>g<n>a`…`c`, created by `a`, joined by the others); with
    /// `watchers`, each group also has `<names>g<n>p`, who never connects and is pushed to (rule 9).
    static func register(
        pairs: Int, groups: Int = 0, api: BenchAPI, names: String, oneInFlight: Bool, watchers: PushWatchers? = nil
    ) async throws -> [CrashCheckClient] {
        var clients: [CrashCheckClient] = []
        for pair in 0..<pairs {
            let a = try await api.register("\(names)\(pair)a"), b = try await api.register("\(names)\(pair)b")
            clients += [
                CrashCheckClient(session: a, destination: .partner(b.user.id), oneInFlight: oneInFlight),
                CrashCheckClient(session: b, destination: .partner(a.user.id), oneInFlight: oneInFlight),
            ]
        }
        for group in 0..<groups {
            var members: [BenchAPI.Session] = []
            for name in ["a", "b", "c"] { members.append(try await api.register("\(names)g\(group)\(name)")) }
            let watcher = watchers == nil ? nil : try await api.register("\(names)g\(group)p")
            let invited = members.dropFirst() + (watcher.map { [$0] } ?? [])
            let id = try await api.createGroup(by: members[0], inviting: invited.map(\.user.id))
            try await api.acceptAll(invited.map { ($0, id) })
            if let watchers, let watcher { try await watchers.watch(id, as: watcher, api: api) }
            clients += members.map { CrashCheckClient(session: $0, destination: .group(id), oneInFlight: oneInFlight) }
        }
        return clients
    }

    /// Waits until every message written is acknowledged and every client has seen every message
    /// written in its conversation. Gives up after `limit` in all, or as soon as a client still
    /// waiting has had nothing acknowledged nor delivered for `stall` (a send nobody answers),
    /// whichever comes first: a slow drain that keeps moving is pace, not a broken promise.
    /// `now` is the clock it judges by (a test's manual clock).
    static func drain(
        _ clients: [CrashCheckClient], within limit: Duration, stalledAfter stall: Duration,
        now: @Sendable () -> ContinuousClock.Instant = { .now }
    ) async -> Bool {
        let start = now(), deadline = start.advanced(by: limit)
        var last = clients.map { _ in (progress: -1, at: start) }
        while now() < deadline {
            let written = clients.reduce(into: [ConversationID: Int]()) { $0[$1.conversation, default: 0] += $1.writtenCount }
            var done = true
            for (index, client) in clients.enumerated() {
                let seen = client.seenWritten
                guard !(client.allAcked && seen >= written[client.conversation] ?? 0) else { continue }
                done = false
                let progress = client.ackedCount + client.actedCount + seen
                if progress != last[index].progress {
                    last[index] = (progress, now())
                } else if now() - last[index].at > stall {
                    return false
                }
            }
            if done { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// Checks every client against what the server stored (rules 1–5).
    static func judge(_ clients: [CrashCheckClient], api: BenchAPI, restarts: [Double], drained: Bool) async throws -> CrashCheckReport {
        var report = CrashCheckReport(kills: restarts.count, restartSeconds: restarts, drained: drained)
        if !drained { report.violations.append("the drain did not finish: a message stayed unacknowledged or undelivered") }
        var checkedOrder: Set<ConversationID> = []
        for (index, client) in clients.enumerated() {
            let stored = try await api.fullHistory(client.session, client.conversation)
            let firstOfConversation = checkedOrder.insert(client.conversation).inserted
            report.violations += CrashCheckRules.check(client: client, index: index, stored: stored, checkSeq: firstOfConversation)
            let versions = try await CrashCheckActionRules.versions(of: client, baseURL: api.baseURL)
            report.violations += CrashCheckActionRules.check(client: client, index: index, stored: stored, versions: versions)
            report.actions += client.actions.count
            report.messages += client.outbox.count
            if client.partner == nil { report.groupMessages += client.outbox.count }
            report.resyncs += client.resyncs
            report.reconnects += max(0, client.connections - 1)
            report.violations += try await storedReadCheck(client, index: index, api: api)
            report.receipts += client.acknowledgedRead.count
        }
        return report
    }

    /// Rule 11: the client's read cursor as the server stores it is at least the highest one acknowledged.
    static func storedReadCheck(_ client: CrashCheckClient, index: Int, api: BenchAPI) async throws -> [String] {
        let acknowledged = client.acknowledgedRead.seq
        guard acknowledged > 0 else { return [] }
        let summary = try await api.conversations(client.session).first { $0.id == client.conversation }
        let stored = summary?.members.first { $0.userId == client.session.user.id }?.readSeq ?? 0
        return stored >= acknowledged ? [] : ["client \(index): read cursor \(acknowledged) acknowledged, \(stored) stored"]
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// What a crash check found; `violations` empty means every guarantee held.
public struct CrashCheckReport: Codable, Sendable {
    public var kills: Int
    public var restartSeconds: [Double]
    public var drained: Bool
    public var messages = 0
    /// Of `messages`, those written to groups.
    public var groupMessages = 0
    /// Message actions made (reactions, edits, deletes).
    public var actions = 0
    /// Read receipts the server acknowledged (rule 11).
    public var receipts = 0
    public var reconnects = 0
    public var resyncs = 0
    /// Cluster check only: PostgreSQL restarts and node freezes done.
    /// Files uploaded and sent through the kills (rule 10), and how often an uploader had to ask
    /// the server where its upload stood and go on from there.
    public var files = 0
    public var uploadResumes = 0
    public var databaseRestarts = 0
    public var freezes = 0
    public var violations: [String] = []
}

/// The clients' load: each keeps a connection open (to `url()`, asked again at each reconnect) and
/// writes a message every `interval`, until ``finish(drainingWithin:)``.
struct ClientLoad {
    let clients: [CrashCheckClient]
    private let stopConnections = Flag(), stopWriting = Flag()
    private let connections: [Task<Void, Never>], writers: [Task<Void, Never>]

    init(_ clients: [CrashCheckClient], every interval: Duration, url: @escaping @Sendable () -> String) {
        self.clients = clients
        let stopConnections = stopConnections, stopWriting = stopWriting
        connections = clients.map { client in Task { await client.maintainConnection(url: url, stop: { stopConnections.isSet }) } }
        writers = clients.enumerated().map { index, client in
            Task {
                var count = 0
                while !stopWriting.isSet {
                    count += 1
                    // The mixed workload of `parley bench`: 10 % reactions, 5 % edits, 1 % deletes.
                    switch Int.random(in: 0..<100) {
                    case 0..<10: client.act(.react)
                    case 10..<15: client.act(.edit)
                    case 15: client.act(.delete)
                    default: break
                    }
                    // The final dot keeps one text from being a prefix of another (rule 8 searches the file for them).
                    client.write("u\(index)-\(count).")
                    try? await Task.sleep(for: interval)
                }
            }
        }
    }

    /// Stops writing, waits for the drain (``CrashCheck/drain(_:within:stalledAfter:)``), then
    /// closes every connection; returns whether it drained.
    func finish(drainingWithin limit: Duration, stalledAfter stall: Duration? = nil) async -> Bool {
        stopWriting.set()
        for writer in writers { await writer.value }
        let drained = await CrashCheck.drain(clients, within: limit, stalledAfter: stall ?? limit)
        stopConnections.set()
        for client in clients { client.stopNow() }
        for connection in connections { await connection.value }
        return drained
    }
}

/// A flag set once, read from anywhere.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .relaxed) }
    var isSet: Bool { value.load(ordering: .relaxed) }
}
