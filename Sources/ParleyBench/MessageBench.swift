import Foundation
import Histogram
import ParleyCore
import Synchronization

/// The delivery workload: P pairs, each sender sends M numbered messages to its partner.
public struct MessageBench: Sendable {
    public struct Options: Codable, Sendable {
        public var pairs = 50
        public var messagesPerSender = 200
        /// Aggregate messages per second across all senders; nil sends as fast as `window` allows.
        public var rate: Double? = 1000
        /// Sends in flight per sender in as-fast-as-possible mode.
        public var window = 16
        public var maxSeconds: Double = 60
        public var drainSeconds: Double = 10
        /// Where to write every delivery's send time and latency (``LatencyLog``); nil keeps none.
        public var latencyLog: String?
        /// The mixed workload: of each 100 numbers a sender sends, 10 are reactions, 5 edits and 1 a
        /// delete for everyone, each on its latest acknowledged message (``MixedActions``).
        public var mix = false
        /// Paced runs only: seconds of sending at `rate` before the measured run, whose sends carry
        /// no payload and are not counted. A server just started answers its first sends slowly
        /// (each database connection's first call plans the send's statements), which a run of
        /// 10,000 messages would otherwise count in its p99.
        public var warmUpSeconds: Double = 0
        public init() {}
    }

    public struct Report: Codable, Sendable {
        public var options: Options
        public var sent = 0, acknowledged = 0, errors = 0, unanswered = 0, delivered = 0, lost = 0, duplicated = 0, outOfOrder = 0
        public var seconds = 0.0, throughput = 0.0, connectSeconds = 0.0
        /// Sends of the warm-up (``Options/warmUpSeconds``), in none of the other counts.
        public var warmUpSent = 0
        public var delivery: Percentiles?
        public var ack: Percentiles?
        public var serverRSSBeforeKiB: Int?, serverRSSAfterKiB: Int?
        /// Server CPU (user + system) over the sending and drain, per delivered message, in µs:
        /// the figure to compare between runs (rates swing with the machine's other load).
        public var serverCPUMicrosPerMessage: Double?
        /// The bench's own CPU over the same window, per delivered message, in µs: the load
        /// generator shares the machine's cores with the server, so what it takes the server lacks.
        public var benchCPUMicrosPerMessage: Double?
        /// How late the sends left against their schedule, in µs (paced runs only): the load
        /// generator's own delays. A slow delivery sent on time was held up after its send (in the
        /// server, or on its way back), not by a load generator that was itself not running.
        public var sendLateness: Percentiles?
        /// The mixed workload: actions sent and acknowledged, their answer latency, and durable
        /// operations (acknowledged sends and actions) per second.
        public var actionsSent = 0, actionsAcknowledged = 0
        public var actionAck: Percentiles?
        public var durablePerSecond = 0.0
        /// Server CPU per acknowledged send or action, in µs (the mixed workload's figure to compare).
        public var serverCPUMicrosPerOperation: Double?
    }

    let target: BenchTarget
    var api: BenchAPI { target.api }
    var webSocketURL: String { target.webSocketURL }
    var serverPID: Int32? { target.serverPID }

    public init(_ target: BenchTarget) { self.target = target }

    /// Per pair: what the sender got acknowledged and what the receiver saw.
    final class PairState: Sendable {
        struct Values {
            var ledger = DeliveryLedger()
            var acknowledged: Set<Int> = []
            var errors = 0
            var ackLatency = Histogram<UInt64>.microseconds()
            var timeline = LatencyLog()
            var actions = MixedActions()
        }
        let values = Mutex(Values())
        /// One element per answered send (ack or error): the sender's window.
        let answers: AsyncStream<Void>
        let answered: AsyncStream<Void>.Continuation
        init() { (answers, answered) = AsyncStream.makeStream(of: Void.self) }
    }

    public func run(_ options: Options, log: @Sendable (String) -> Void = { _ in }) async throws -> Report {
        var report = Report(options: options)
        let prefix = "b" + String(UInt32.random(in: 0...UInt32.max), radix: 36) + "_"
        log("registering \(options.pairs * 2) users")
        let users = try await api.registerMany(prefix: prefix, count: options.pairs * 2)
        let senders = Array(users.prefix(options.pairs)), receivers = Array(users.suffix(options.pairs))
        var conversations: [ConversationID] = []
        for (sender, receiver) in zip(senders, receivers) {
            conversations.append(try await api.startConversation(sender, with: receiver.user.id).id)
        }
        let pairs = (0..<options.pairs).map { _ in PairState() }
        report.serverRSSBeforeKiB = serverPID.flatMap(ProcessMemory.residentKiB)

        log("connecting \(options.pairs * 2) WebSockets")
        let connectStart = ContinuousClock.now
        var sockets: [BenchSocket] = []
        let keepTimeline = options.latencyLog != nil
        for (index, receiver) in receivers.enumerated() {
            let pair = pairs[index]
            sockets.append(
                try await BenchSocket.connect(url: target.receiverWebSocketURL ?? webSocketURL, token: receiver.token) { text in
                    guard text.hasPrefix(#"{"message":"#), !MixedActions.isUpdate(text), let payload = BenchFrames.payload(in: text) else { return }
                    let micros = BenchClock.nowMicros() &- payload.sentAtMicros
                    pair.values.withLock {
                        $0.ledger.deliver(payload.number, micros: micros)
                        if keepTimeline { $0.timeline.record(sentAtMicros: payload.sentAtMicros, latencyMicros: micros) }
                    }
                })
        }
        var senderSocketList: [BenchSocket] = []
        for (index, sender) in senders.enumerated() {
            let pair = pairs[index]
            senderSocketList.append(
                try await BenchSocket.connect(url: webSocketURL, token: sender.token) { text in
                    if let sentAt = MixedActions.actedSentAt(text) {
                        pair.values.withLock { $0.actions.acknowledged(micros: BenchClock.nowMicros() &- sentAt) }
                        pair.answered.yield()
                    } else if text.hasPrefix(#"{"duplicate":"#), let payload = BenchFrames.payload(in: text) {
                        let micros = BenchClock.nowMicros() &- payload.sentAtMicros
                        pair.values.withLock {
                            $0.acknowledged.insert(payload.number)
                            $0.ackLatency.record(clamping: micros)
                            $0.actions.stored(MixedActions.seq(in: text))
                        }
                        pair.answered.yield()
                    } else if text.hasPrefix(#"{"clientId":"#) {
                        pair.values.withLock { $0.errors += 1 }
                        pair.answered.yield()
                    }
                })
        }
        report.connectSeconds = (ContinuousClock.now - connectStart).seconds

        if options.warmUpSeconds > 0, let rate = options.rate {
            log("warming up for \(options.warmUpSeconds) s")
            let start = ContinuousClock.now
            report.warmUpSent = await Self.paced(
                senders: senders.count, rate: rate, messagesPerSender: max(1, Int(rate * options.warmUpSeconds / Double(senders.count))),
                start: start, deadline: start.advanced(by: .seconds(options.warmUpSeconds))
            ) { index, _ in senderSocketList[index].send(text: BenchFrames.warmUpFrame(clientId: .random(), conversation: conversations[index])) }.sent
        }

        log("sending")
        let cpuBefore = serverPID.flatMap(ProcessCPU.microseconds)
        let benchCPUBefore = ProcessCPU.microseconds(pid: getpid())
        let start = ContinuousClock.now, startMicros = BenchClock.nowMicros()
        let deadline = start.advanced(by: .seconds(options.maxSeconds))
        let sending = (0..<options.pairs).map { index in
            Sender(index: index, socket: senderSocketList[index], conversation: conversations[index], pair: pairs[index], mix: options.mix)
        }
        if let rate = options.rate {
            let run = await Self.paced(
                senders: sending.count, rate: rate, messagesPerSender: options.messagesPerSender, start: start, deadline: deadline
            ) { index, number in sending[index].send(number) }
            report.sent = run.sent
            report.sendLateness = Percentiles(run.lateness)
        } else {
            report.sent = await withTaskGroup(of: Int.self) { group in
                for sender in sending {
                    group.addTask { await Self.windowed(sender, options: options, deadline: deadline) }
                }
                return await group.reduce(0, +)
            }
        }

        // Drain: wait until every send is answered and every acknowledged message has arrived,
        // as long as something still moves (a stall of `drainSeconds` ends it, and so do 5 minutes).
        let hardStop = ContinuousClock.now.advanced(by: .seconds(300))
        var lastProgress = ContinuousClock.now, lastCounts = (-1, -1), lastDelivery = ContinuousClock.now
        while ContinuousClock.now < hardStop {
            let (answered, missing, delivered) = pairs.reduce((0, 0, 0)) { total, pair in
                pair.values.withLock {
                    (
                        total.0 + $0.acknowledged.count + $0.errors + $0.actions.acknowledgedCount, total.1 + $0.ledger.lost(acknowledged: $0.acknowledged),
                        total.2 + $0.ledger.deliveredCount
                    )
                }
            }
            if delivered != lastCounts.1 { lastDelivery = ContinuousClock.now }
            if (answered, delivered) != lastCounts { lastProgress = ContinuousClock.now }
            lastCounts = (answered, delivered)
            if answered >= report.sent && missing == 0 { break }
            if ContinuousClock.now - lastProgress > .seconds(options.drainSeconds) { break }
            try await Task.sleep(for: .milliseconds(2))
        }
        report.seconds = (lastDelivery - start).seconds
        if let before = cpuBefore, let after = serverPID.flatMap(ProcessCPU.microseconds) {
            let delivered = pairs.reduce(0) { total, pair in total + pair.values.withLock { $0.ledger.deliveredCount } }
            report.serverCPUMicrosPerMessage = delivered > 0 ? Double(after - before) / Double(delivered) : nil
        }

        var delivery = Histogram<UInt64>.microseconds()
        var ack = delivery, actionAck = delivery
        for pair in pairs {
            pair.values.withLock { values in
                report.acknowledged += values.acknowledged.count
                report.errors += values.errors
                report.delivered += values.ledger.deliveredCount
                report.duplicated += values.ledger.duplicated
                report.outOfOrder += values.ledger.outOfOrder
                report.lost += values.ledger.lost(acknowledged: values.acknowledged)
                delivery.add(values.ledger.latency)
                ack.add(values.ackLatency)
                actionAck.add(values.actions.latency)
                report.actionsSent += values.actions.sent
                report.actionsAcknowledged += values.actions.acknowledgedCount
            }
        }
        if let path = options.latencyLog {
            let timeline = pairs.reduce(into: LatencyLog()) { all, pair in all.append(pair.values.withLock { $0.timeline }) }
            try timeline.write(to: path, since: startMicros)
        }
        report.unanswered = report.sent - report.acknowledged - report.errors - report.actionsAcknowledged
        if let before = benchCPUBefore, let after = ProcessCPU.microseconds(pid: getpid()), report.delivered > 0 {
            report.benchCPUMicrosPerMessage = Double(after - before) / Double(report.delivered)
        }
        report.delivery = Percentiles(delivery)
        report.ack = Percentiles(ack)
        if options.mix { report.actionAck = Percentiles(actionAck) }
        report.durablePerSecond = Double(report.acknowledged + report.actionsAcknowledged) / max(report.seconds, 0.001)
        report.serverCPUMicrosPerOperation = report.serverCPUMicrosPerMessage.map {
            $0 * Double(report.delivered) / Double(max(1, report.acknowledged + report.actionsAcknowledged))
        }
        report.throughput = Double(report.delivered) / max(report.seconds, 0.001)
        report.serverRSSAfterKiB = serverPID.flatMap(ProcessMemory.residentKiB)
        for socket in sockets + senderSocketList { socket.close() }
        for socket in sockets + senderSocketList { await socket.closed() }
        return report
    }

    /// One sender's socket, conversation and accounts.
    struct Sender: Sendable {
        let index: Int
        let socket: BenchSocket
        let conversation: ConversationID
        let pair: PairState
        var mix = false

        func send(_ number: Int) {
            if mix, let action = pair.values.withLock({ $0.actions.next(number) }) {
                socket.send(text: frame(action))
                return
            }
            let payload = BenchPayload(sender: index, number: number, sentAtMicros: BenchClock.nowMicros())
            socket.send(text: BenchFrames.sendFrame(clientId: .random(), conversation: conversation, payload: payload))
        }
    }

    /// How late each send of a paced run left against its schedule (µs), one sample per send.
    struct PacedRun {
        var lateness = Histogram<UInt64>.microseconds()
        var sent: Int { Int(lateness.totalCount) }
    }

    /// Paced mode: sender i's message n is due at `start + interval × (n − 1 + i / senders)`, so the
    /// aggregate rate is smooth. One task sends for every sender and wakes at most once per
    /// `tick`, sending whatever is due: a sleeping task per sender cost the load generator a
    /// timer and a thread wake-up per message, CPU the server then lacked. A message goes out at
    /// most a tick late unless the generator itself is held up, which the lateness records; its
    /// send time is stamped as it goes, so latencies are unaffected.
    static func paced(
        senders: Int, rate: Double, messagesPerSender: Int,
        start: ContinuousClock.Instant, deadline: ContinuousClock.Instant,
        tick: Duration = .milliseconds(1), send: (_ sender: Int, _ number: Int) -> Void
    ) async -> PacedRun {
        let interval = Duration.seconds(Double(senders) / rate)
        var run = PacedRun(), lastWake = start
        for number in 1...messagesPerSender {
            for sender in 0..<senders {
                let due = start.advanced(by: interval * (number - 1) + interval * (Double(sender) / Double(senders)))
                guard due < deadline else { return run }
                var now = ContinuousClock.now
                if due > now {
                    lastWake = max(due, lastWake.advanced(by: tick))
                    try? await Task.sleep(until: lastWake, clock: .continuous)
                    now = ContinuousClock.now
                }
                run.lateness.record(clamping: UInt64(max(0, (now - due).seconds * 1_000_000)))
                send(sender, number)
            }
        }
        return run
    }

    /// As-fast-as-possible mode: each sender keeps `window` sends in flight.
    private static func windowed(_ sender: Sender, options: Options, deadline: ContinuousClock.Instant) async -> Int {
        await windowed(
            messages: options.messagesPerSender, window: options.window, answers: sender.pair.answers, deadline: deadline, send: sender.send)
    }

    /// Sends numbers 1…`messages`, keeping `window` in flight: one more as each answer comes back
    /// on `answers`, until the deadline. Returns how many were sent.
    static func windowed(
        messages: Int, window: Int, answers: AsyncStream<Void>, deadline: ContinuousClock.Instant, send: (Int) -> Void
    ) async -> Int {
        var answers = answers.makeAsyncIterator()
        var sent = 0, inFlight = 0
        while sent < messages, ContinuousClock.now < deadline {
            while inFlight < window, sent < messages {
                sent += 1
                inFlight += 1
                send(sent)
            }
            guard await answers.next() != nil else { break }
            inFlight -= 1
        }
        return sent
    }
}

extension Duration {
    /// The duration in seconds, fractions included.
    public var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
