import Foundation
import Histogram
import ParleyCore

/// The push workload: a group of R offline recipients, each with a Web Push subscription on a
/// local push service (``PushServiceSink``); its owner sends one message a round and waits for the
/// round's R pushes, so every copy is one push (nothing collapses). The same rounds first in a group
/// of R recipients without a subscription: the difference in the server's CPU is what the pushes
/// cost. (Groups, not direct chats: new conversations are rate-limited per user, group copies are not.)
public struct PushBench: Sendable {
    public struct Options: Codable, Sendable {
        public var recipients = 100
        public var rounds = 20
        public var maxSeconds: Double = 120
        public init() {}
    }

    public struct Report: Codable, Sendable {
        public var options: Options
        public var messages = 0, pushes = 0, missing = 0
        /// Server CPU per group message without subscriptions, and with them (each message then R pushes).
        public var serverCPUMicrosPerPlainMessage: Double?
        public var serverCPUMicrosPerPushedMessage: Double?
        /// Their difference over R: what planning, encrypting, signing and sending one push costs the server.
        public var serverCPUMicrosPerPush: Double?
        /// From the send's answer to the push service receiving the push.
        public var pushDelay: Percentiles?
        public var pushesPerSecond = 0.0
    }

    /// A valid P-256 public key (a browser's `p256dh`) and auth secret: every subscription of the
    /// bench uses them, since the sink never decrypts.
    static let p256dh = "BJW4s5D8Peg5a-uXtQ30bJcnzZ9UWZY-WuEkDnyYJOxCjO-xDLxaeG0IgxfkaoL7jpdLXlmKTEveo0uGiOSDZFo"
    static let auth = "aUQgscTOrLuKMO6NhWWK1g"

    let target: BenchTarget
    public init(_ target: BenchTarget) { self.target = target }

    public func run(_ options: Options, log: @Sendable (String) -> Void = { _ in }) async throws -> Report {
        var report = Report(options: options)
        let sink = try await PushServiceSink()
        defer { Task { await sink.close() } }
        let prefix = "p" + String(UInt32.random(in: 0...UInt32.max), radix: 36) + "_"
        log("registering \(options.recipients * 2 + 1) users")
        let users = try await target.api.registerMany(prefix: prefix, count: options.recipients * 2 + 1)
        let sender = users[0]
        let plain = Array(users[1...options.recipients]), pushed = Array(users[(options.recipients + 1)...])
        let plainGroup = try await target.api.createGroup(by: sender, inviting: plain.map(\.user.id))
        let pushedGroup = try await target.api.createGroup(by: sender, inviting: pushed.map(\.user.id))
        try await target.api.acceptAll(plain.map { ($0, plainGroup) } + pushed.map { ($0, pushedGroup) })
        for (index, user) in pushed.enumerated() {
            try await target.api.postNoContent(
                "/v1/push/subscriptions",
                API.WebPushSubscriptionBody(endpoint: "http://127.0.0.1:\(sink.port)/push/\(index)", keys: .init(p256dh: Self.p256dh, auth: Self.auth)),
                token: user.token)
        }
        let deadline = ContinuousClock.now + .seconds(options.maxSeconds)

        log("plain rounds: \(options.rounds) group messages to \(options.recipients) members, nobody subscribed")
        let plainBefore = target.serverPID.flatMap(ProcessCPU.microseconds)
        var plainRounds = 0
        for _ in 0..<options.rounds where ContinuousClock.now < deadline {
            _ = try await send(from: sender, in: plainGroup)
            plainRounds += 1
        }
        // The copies' events settle before the CPU is read (the plain group has no pushes to wait for).
        try await Task.sleep(for: .seconds(1))
        if let before = plainBefore, let after = target.serverPID.flatMap(ProcessCPU.microseconds), plainRounds > 0 {
            report.serverCPUMicrosPerPlainMessage = Double(after - before) / Double(plainRounds)
        }

        log("pushed rounds: \(options.rounds) group messages to \(options.recipients) subscribed members, each a push to every one")
        var delays = Histogram<UInt64>.microseconds()
        let start = ContinuousClock.now
        let pushedBefore = target.serverPID.flatMap(ProcessCPU.microseconds)
        var sentRounds = 0
        for round in 0..<options.rounds where ContinuousClock.now < deadline {
            let answered = try await send(from: sender, in: pushedGroup)
            report.messages += 1
            sentRounds += 1
            while ContinuousClock.now < deadline, (0..<pushed.count).contains(where: { sink.arrivals(of: $0).count <= round }) {
                try await Task.sleep(for: .milliseconds(5))
            }
            for index in pushed.indices {
                if let arrival = sink.arrivals(of: index).dropFirst(round).first { delays.record(clamping: arrival &- answered) }
            }
        }
        try await Task.sleep(for: .seconds(1))
        if let before = pushedBefore, let after = target.serverPID.flatMap(ProcessCPU.microseconds), report.messages > 0 {
            report.serverCPUMicrosPerPushedMessage = Double(after - before) / Double(report.messages)
        }
        report.pushesPerSecond = Double(sink.total) / max(0.001, (ContinuousClock.now - start).seconds)
        report.pushes = sink.total
        report.missing = sentRounds * pushed.count - sink.total
        report.pushDelay = Percentiles(delays)
        if let plainCost = report.serverCPUMicrosPerPlainMessage, let pushedCost = report.serverCPUMicrosPerPushedMessage {
            report.serverCPUMicrosPerPush = (pushedCost - plainCost) / Double(options.recipients)
        }
        return report
    }

    /// One group message from `sender`; when it was answered.
    private func send(from sender: BenchAPI.Session, in group: ConversationID) async throws -> UInt64 {
        let _: API.SendResponse = try await target.api.post(
            "/v1/messages", SendRequest(clientId: .random(), conversationId: group, text: "push bench"), token: sender.token)
        return BenchClock.nowMicros()
    }
}
