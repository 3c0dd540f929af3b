import Foundation
import Histogram
import ParleyCore
import Synchronization

/// The group workload: G groups of M members, every member connected; one sender per group (its
/// owner) sends N numbered messages, and every other member must receive each once, in order.
/// Its figure is the *copy*: one message delivered to one member.
public struct GroupBench: Sendable {
    public struct Options: Codable, Sendable {
        public var groups = 50
        public var members = 100
        public var messagesPerSender = 100
        /// Aggregate group messages per second; nil sends as fast as `window` allows.
        public var rate: Double? = 200
        public var window = 8
        public var maxSeconds: Double = 60
        public var drainSeconds: Double = 10
        public init() {}
    }

    public struct Report: Codable, Sendable {
        public var options: Options
        public var sent = 0, acknowledged = 0, errors = 0
        /// Copies: (message, receiving member) pairs.
        public var expectedCopies = 0, delivered = 0, lost = 0, duplicated = 0, outOfOrder = 0
        public var seconds = 0.0, copiesPerSecond = 0.0, setupSeconds = 0.0
        public var delivery: Percentiles?
        public var serverCPUMicrosPerCopy: Double?
        public var serverCPUMicrosPerMessage: Double?
        public var benchCPUMicrosPerCopy: Double?
        public var databaseBytesPerMessage: Double?
        /// What the server wrote to storage (WAL appends, checkpoints) per group message (``ProcessIO``).
        public var serverWrittenBytesPerMessage: Double?
    }

    let target: BenchTarget
    public init(_ target: BenchTarget) { self.target = target }

    /// One receiving member: what it saw of its group's sender.
    final class Receiver: Sendable {
        let ledger = Mutex(DeliveryLedger())
    }

    /// One group's sender: its socket, group, and what the server acknowledged.
    final class GroupSender: Sendable {
        struct Values {
            var acknowledged: Set<Int> = []
            var errors = 0
        }
        let index: Int
        let conversation: ConversationID
        let socket: BenchSocket
        let values = Mutex(Values())
        let answers: AsyncStream<Void>
        let answered: AsyncStream<Void>.Continuation

        init(index: Int, conversation: ConversationID, socket: BenchSocket, answers: (AsyncStream<Void>, AsyncStream<Void>.Continuation)) {
            self.index = index
            self.conversation = conversation
            self.socket = socket
            (self.answers, self.answered) = answers
        }

        func send(_ number: Int) {
            let payload = BenchPayload(sender: index, number: number, sentAtMicros: BenchClock.nowMicros())
            socket.send(text: BenchFrames.sendFrame(clientId: .random(), conversation: conversation, payload: payload))
        }
    }

    public func run(_ options: Options, databaseFile: String? = nil, log: @Sendable (String) -> Void = { _ in }) async throws -> Report {
        var report = Report(options: options)
        let setupStart = ContinuousClock.now
        let prefix = "g" + String(UInt32.random(in: 0...UInt32.max), radix: 36) + "_"
        log("registering \(options.groups * options.members) users")
        let users = try await target.api.registerMany(prefix: prefix, count: options.groups * options.members)
        log("creating \(options.groups) groups; members accept their invitations")
        var groups: [ConversationID] = []
        for group in 0..<options.groups {
            let members = Array(users[(group * options.members)..<((group + 1) * options.members)])
            groups.append(try await target.api.createGroup(by: members[0], inviting: members.dropFirst().map(\.user.id)))
        }
        try await target.api.acceptAll(
            (0..<options.groups).flatMap { group in (1..<options.members).map { (users[group * options.members + $0], groups[group]) } })

        log("connecting \(users.count) WebSockets")
        var receivers: [Receiver] = [], sockets: [BenchSocket] = [], senders: [GroupSender] = []
        for group in 0..<options.groups {
            for member in 1..<options.members {
                let receiver = Receiver()
                receivers.append(receiver)
                sockets.append(
                    try await BenchSocket.connect(url: target.webSocketURL, token: users[group * options.members + member].token) { text in
                        guard text.hasPrefix(#"{"message":"#), let payload = BenchFrames.payload(in: text) else { return }
                        let micros = BenchClock.nowMicros() &- payload.sentAtMicros
                        receiver.ledger.withLock { $0.deliver(payload.number, micros: micros) }
                    })
            }
            let streams = AsyncStream.makeStream(of: Void.self)
            let holder = Mutex<GroupSender?>(nil)
            let socket = try await BenchSocket.connect(url: target.webSocketURL, token: users[group * options.members].token) { text in
                guard let sender = holder.withLock({ $0 }) else { return }
                if text.hasPrefix(#"{"duplicate":"#), let payload = BenchFrames.payload(in: text) {
                    _ = sender.values.withLock { $0.acknowledged.insert(payload.number) }
                    sender.answered.yield()
                } else if text.hasPrefix(#"{"clientId":"#) {
                    sender.values.withLock { $0.errors += 1 }
                    sender.answered.yield()
                }
            }
            let sender = GroupSender(index: group, conversation: groups[group], socket: socket, answers: streams)
            holder.withLock { $0 = sender }
            senders.append(sender)
        }
        report.setupSeconds = (ContinuousClock.now - setupStart).seconds
        let sizeBefore = databaseFile.flatMap(Self.databaseBytes)

        log("sending")
        let cpuBefore = target.serverPID.flatMap(ProcessCPU.microseconds)
        let writtenBefore = target.serverPID.flatMap(ProcessIO.writtenBytes)
        let benchBefore = ProcessCPU.microseconds(pid: getpid())
        let start = ContinuousClock.now
        let deadline = start.advanced(by: .seconds(options.maxSeconds))
        if let rate = options.rate {
            report.sent = await MessageBench.paced(
                senders: senders.count, rate: rate, messagesPerSender: options.messagesPerSender, start: start, deadline: deadline
            ) { index, number in senders[index].send(number) }.sent
        } else {
            report.sent = await withTaskGroup(of: Int.self) { group in
                for sender in senders { group.addTask { await Self.windowed(sender, options: options, deadline: deadline) } }
                return await group.reduce(0, +)
            }
        }
        let membersPerGroup = options.members - 1
        func acknowledged() -> Int { senders.reduce(0) { $0 + $1.values.withLock { $0.acknowledged.count } } }
        func answered() -> Int { senders.reduce(0) { $0 + $1.values.withLock { $0.acknowledged.count + $0.errors } } }
        func delivered() -> Int { receivers.reduce(0) { $0 + $1.ledger.withLock { $0.deliveredCount } } }
        var last = (answered: -1, delivered: -1), lastProgress = ContinuousClock.now, lastDelivery = ContinuousClock.now
        let hardStop = ContinuousClock.now.advanced(by: .seconds(300))
        while ContinuousClock.now < hardStop {
            let now = (answered: answered(), delivered: delivered())
            if now.delivered != last.delivered { lastDelivery = ContinuousClock.now }
            if now != last { lastProgress = ContinuousClock.now }
            last = now
            if now.answered >= report.sent && now.delivered >= acknowledged() * membersPerGroup { break }
            if ContinuousClock.now - lastProgress > .seconds(options.drainSeconds) { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        report.seconds = (lastDelivery - start).seconds
        var latency = Histogram<UInt64>.microseconds()
        for (index, receiver) in receivers.enumerated() {
            let sender = senders[index / membersPerGroup]
            let acked = sender.values.withLock { $0.acknowledged }
            receiver.ledger.withLock { ledger in
                report.delivered += ledger.deliveredCount
                report.duplicated += ledger.duplicated
                report.outOfOrder += ledger.outOfOrder
                report.lost += ledger.lost(acknowledged: acked)
                latency.add(ledger.latency)
            }
        }
        for sender in senders {
            sender.values.withLock {
                report.acknowledged += $0.acknowledged.count
                report.errors += $0.errors
            }
        }
        report.expectedCopies = report.acknowledged * membersPerGroup
        report.delivery = Percentiles(latency)
        report.copiesPerSecond = Double(report.delivered) / max(report.seconds, 0.001)
        if let before = cpuBefore, let after = target.serverPID.flatMap(ProcessCPU.microseconds), report.delivered > 0 {
            report.serverCPUMicrosPerCopy = Double(after - before) / Double(report.delivered)
            report.serverCPUMicrosPerMessage = Double(after - before) / Double(max(1, report.acknowledged))
        }
        if let before = writtenBefore, let after = target.serverPID.flatMap(ProcessIO.writtenBytes), report.acknowledged > 0 {
            report.serverWrittenBytesPerMessage = Double(after - before) / Double(report.acknowledged)
        }
        if let before = benchBefore, let after = ProcessCPU.microseconds(pid: getpid()), report.delivered > 0 {
            report.benchCPUMicrosPerCopy = Double(after - before) / Double(report.delivered)
        }
        if let before = sizeBefore, let after = databaseFile.flatMap(Self.databaseBytes), report.acknowledged > 0 {
            report.databaseBytesPerMessage = Double(after - before) / Double(report.acknowledged)
        }
        for socket in sockets + senders.map(\.socket) { socket.close() }
        for socket in sockets + senders.map(\.socket) { await socket.closed() }
        return report
    }

    /// As-fast-as-possible mode: each sender keeps `window` sends in flight (``MessageBench``'s rule).
    private static func windowed(_ sender: GroupSender, options: Options, deadline: ContinuousClock.Instant) async -> Int {
        await MessageBench.windowed(
            messages: options.messagesPerSender, window: options.window, answers: sender.answers, deadline: deadline, send: sender.send)
    }

    /// The database file and its WAL together: what a run wrote (SQLite only).
    static func databaseBytes(_ path: String) -> Int? {
        let sizes = [path, path + "-wal"].compactMap { try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int }
        return sizes.isEmpty ? nil : sizes.reduce(0, +)
    }
}
