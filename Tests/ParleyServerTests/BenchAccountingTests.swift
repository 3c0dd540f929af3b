import Foundation
import ParleyBench
import ParleyCore
import Synchronization
import Testing
import Histogram
import NIOCore
import ParleyServer

/// The bench's own accounting must catch what it exists to catch: lost, duplicated and reordered messages.
@Suite struct BenchAccountingTests {
    @Test func ledgerDetectsDuplicatesReorderingAndLoss() {
        var ledger = DeliveryLedger()
        for number in [1, 2, 4, 3, 4, 6] { ledger.deliver(number, micros: 100) }
        #expect(ledger.deliveredCount == 5)
        #expect(ledger.duplicated == 1)
        #expect(ledger.outOfOrder == 1)
        #expect(ledger.lost(acknowledged: Set(1...7)) == 2)  // 5 and 7
        #expect(ledger.latency.totalCount == 5)
    }

    @Test func payloadRoundTripsAndRejectsOtherText() {
        let payload = BenchPayload(sender: 3, number: 42, sentAtMicros: 123_456)
        #expect(BenchPayload(text: payload.text) == payload)
        for other in ["hello", "bench x 1 2", "bench 1 2", "bench 1 2 3 4"] { #expect(BenchPayload(text: other) == nil) }
    }

    @Test func sendFrameIsWhatWireFormatEncodes() throws {
        let payload = BenchPayload(sender: 7, number: 300, sentAtMicros: 9_876_543_210)
        let clientId = ClientMessageID.random()
        let conversation = ConversationID.direct(UserID(rawValue: "u_b"), UserID(rawValue: "u_a"))
        let encoded = try WireFormat.encoder().encode(ClientFrame.send(SendRequest(clientId: clientId, conversationId: conversation, text: payload.text)))
        #expect(BenchFrames.sendFrame(clientId: clientId, conversation: conversation, payload: payload) == String(decoding: encoded, as: UTF8.self))
    }

    @Test func payloadIsReadFromAFrameAndAnythingElseIsRefused() {
        let frame = #"{"message":{"conversationId":"c","seq":4,"text":"bench 12 345 6789012"},"pos":9,"type":"message"}"#
        #expect(BenchFrames.payload(in: frame) == BenchPayload(sender: 12, number: 345, sentAtMicros: 6_789_012))
        for other in [
            #"{"type":"pong"}"#, #"{"text":"bench 1 2"}"#, #"{"text":"bench 1 2 3 4"}"#, #"{"text":"bench 1 x 3"}"#,
            #"{"text":"bench 1  3"}"#, #"{"text":"bench 1 2 3"#, #"{"text":"hello bench 1 2 3"}"#,
            #"{"text":"bench 1 2 99999999999999999999"}"#,
        ] {
            #expect(BenchFrames.payload(in: other) == nil, "\(other)")
        }
    }

    @Test func aSmallRunAgainstARealServerAccountsForEveryMessage() async throws {
        try await TestServer.run { api in
            let report = try await Self.bench(port: api.port) { options in
                options.pairs = 3
                options.messagesPerSender = 40
                options.rate = nil
                options.window = 4
            }
            #expect(report.sent == 120 && report.acknowledged == 120 && report.delivered == 120)
            #expect(report.lost == 0 && report.duplicated == 0 && report.outOfOrder == 0 && report.errors == 0)
            #expect(report.delivery?.count == 120)
        }
    }

    @Test func pacedRunSpreadsTheSendsOverTheirScheduleAndAccountsForEveryMessage() async throws {
        try await TestServer.run { api in
            let report = try await Self.bench(port: api.port) { options in
                options.pairs = 4
                options.messagesPerSender = 25
                options.rate = 400  // the last message is due 4 / 400 × (24 + 3/4) s = 0.2475 s after the start
            }
            #expect(report.sent == 100 && report.acknowledged == 100 && report.delivered == 100)
            #expect(report.lost == 0 && report.duplicated == 0 && report.outOfOrder == 0 && report.errors == 0)
            #expect(report.seconds >= 0.2475, "sent ahead of the schedule: \(report.seconds) s")
            #expect(report.sendLateness?.count == 100)  // the sends' lateness reaches the report
            #expect(report.benchCPUMicrosPerMessage != nil)  // /proc counts in 10 ms ticks: a small run may read 0
        }
    }

    /// `--warm-up`: the warm-up's sends go first, at the rate, and none of them is counted: their
    /// answers and deliveries carry no payload.
    @Test func aWarmUpIsSentFirstAndNotCounted() async throws {
        try await TestServer.run { api in
            let report = try await Self.bench(port: api.port) { options in
                options.pairs = 4
                options.messagesPerSender = 10
                options.rate = 400
                options.warmUpSeconds = 0.1  // 40 sends, 10 a sender
            }
            #expect(report.warmUpSent == 40)
            #expect(report.sent == 40 && report.acknowledged == 40 && report.delivered == 40)
            #expect(report.lost == 0 && report.duplicated == 0 && report.outOfOrder == 0 && report.errors == 0)
            #expect(report.delivery?.count == 40 && report.sendLateness?.count == 40)
        }
        #expect(BenchFrames.payload(in: BenchFrames.warmUpFrame(clientId: .random(), conversation: ConversationID(rawValue: "c"))) == nil)
    }

    /// `--latency-log`: samples by send time, counted from when sending began.
    @Test func theLatencyLogListsSamplesBySendTimeFromTheStart() {
        var first = LatencyLog(), second = LatencyLog()
        first.record(sentAtMicros: 5_300, latencyMicros: 40)
        first.record(sentAtMicros: 5_100, latencyMicros: 900)
        second.record(sentAtMicros: 5_200, latencyMicros: 7)
        first.append(second)
        let lines = first.text(since: 5_000).split(separator: "\n")
        #expect(lines.first?.hasPrefix("#") == true)
        #expect(Array(lines.dropFirst()) == ["100 900", "200 7", "300 40"])
    }

    /// A paced run's log has every delivery once, its send times spread over the schedule, and
    /// the slowest latency the report's maximum.
    @Test func aRunWritesEveryDeliveryToTheLatencyLog() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("parley-latency-\(UUID().uuidString).txt").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await TestServer.run { api in
            let report = try await Self.bench(port: api.port) { options in
                options.pairs = 4
                options.messagesPerSender = 25
                options.rate = 400  // the last message is due 0.2475 s after the start
                options.latencyLog = path
            }
            let samples = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").dropFirst().map { line in
                line.split(separator: " ").compactMap { UInt64($0) }
            }
            #expect(samples.count == report.delivered && report.delivered == 100)
            #expect(samples.allSatisfy { $0.count == 2 })
            let sentTimes = samples.map { $0.first ?? 0 }
            #expect(sentTimes == sentTimes.sorted())
            #expect((sentTimes.last ?? 0) >= 247_500, "the log's send times follow the schedule")
            let slowest = samples.map { $0.last ?? 0 }.max() ?? 0
            let reported = report.delivery?.max ?? 0
            #expect(reported > 0 && slowest.distance(to: reported).magnitude <= reported / 100 + 1, "\(slowest) against \(reported)")
        }
    }

    /// The command refuses a log it cannot write before it runs (a run can take minutes).
    /// Run as ``ServeCommandTests/run(_:environment:)`` runs `parley`: Foundation's `Process.run()`
    /// reads past a buffer while it lists `/proc/self/fd` and crashed the test process once
    /// (swift-corelibs-foundation pull request 5472, not in Swift 6.3.1).
    @Test func theCommandRefusesALatencyLogItCannotWrite() async throws {
        let (status, text) = try await ServeCommandTests.run([
            "bench", "messages", "--latency-log", "/nonexistent-parley-dir/latency.txt", "--url", "http://127.0.0.1:9",
        ])
        #expect(status != 0)
        #expect(text.contains("--latency-log: cannot write"), "\(text)")
    }

    /// `--url` of an address nobody answers fails at the reachability limit, not after the HTTP
    /// client's 60 s of retrying the refused connection; a real server passes.
    @Test func aBenchAgainstAnAddressNobodyAnswersFailsAtItsLimit() async throws {
        let nothing = try LoopbackPort.reservable()
        let start = ContinuousClock.now
        await #expect(throws: BenchAPI.Failure.self) {
            try await BenchAPI(baseURL: "http://127.0.0.1:\(nothing)").checkReachable(within: .milliseconds(300))
        }
        // The hang this guards against is the HTTP client's 60 s of retries; a loaded full suite has
        // stretched the 300 ms limit to 7 s of wall time.
        #expect(ContinuousClock.now - start < .seconds(20))
        try await TestServer.run { api in
            try await BenchAPI(baseURL: "http://localhost:\(api.port)").checkReachable()
        }
    }

    /// Every failed connect answers the socket's `welcome` promise: NIO stops a debug build that
    /// leaves one unanswered, so these fail by crashing if a path forgets it.
    @Test func aSocketThatCannotConnectOrUpgradeFailsWithAnError() async throws {
        let nothing = try LoopbackPort.reservable()
        await #expect(throws: (any Error).self) { _ = try await BenchSocket.connect(url: "ws://127.0.0.1:\(nothing)/v1/ws", token: "t") { _ in } }
        try await TestServer.run { api in
            await #expect(throws: (any Error).self) { _ = try await BenchSocket.connect(url: "ws://localhost:\(api.port)/v1/nowhere", token: "t") { _ in } }
            await #expect(throws: (any Error).self) {
                _ = try await BenchSocket.connect(url: "ws://localhost:\(api.port)/v1/ws", token: "not a session") { _ in }
            }
        }
    }

    /// A server that takes the connection and never answers the upgrade: the connect fails at its
    /// handshake limit instead of waiting for ever (a crash check once hung that way on a killed server).
    @Test func aConnectToAServerThatNeverAnswersEndsAtItsLimit() async throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = LoopbackSocketAddress()
        try #require(address.bind(listener) && listen(listener, 8) == 0)
        let port = address.port
        let outcome = Mutex<String?>(nil)
        Task {  // never accepted: the kernel completes the TCP handshake alone
            do {
                _ = try await BenchSocket.connect(url: "ws://127.0.0.1:\(port)/v1/ws", token: "t", handshakeLimit: .milliseconds(300)) { _ in }
                outcome.withLock { $0 = "connected" }
            } catch {
                outcome.withLock { $0 = "failed" }
            }
        }
        // Polled, not awaited: a connect that waits for ever must fail this test, not hang the suite.
        let deadline = ContinuousClock.now + .seconds(20)  // against "for ever"; a loaded suite stretched 300 ms past 5 s
        while outcome.withLock({ $0 }) == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(outcome.withLock { $0 } == "failed")
    }

    /// Saying goodbye sends the close frame and the server's answer ends the connection: it does
    /// not wait for the socket's 5 s cut.
    @Test func aSocketThatSaysGoodbyeIsClosedByTheHandshake() async throws {
        try await TestServer.run { api in
            let session = try await BenchAPI(baseURL: "http://localhost:\(api.port)").register("goodbye")
            let socket = try await BenchSocket.connect(url: "ws://localhost:\(api.port)/v1/ws", token: session.token) { _ in }
            let start = ContinuousClock.now
            socket.close()
            socket.close()  // a second goodbye must not break the handshake
            await socket.closed()
            #expect(ContinuousClock.now - start < .seconds(4), "the close handshake did not end the connection")
        }
    }

    @Test func refusedSendsAreCountedAsErrorsNotDeliveries() async throws {
        // A rate limit of 10 messages makes the server refuse the rest: the bench must report them.
        try await TestServer.run(configure: {
            $0.sendBurst = 10; $0.sendsPerSecond = 0.01
        }) { api in
            let report = try await Self.bench(port: api.port) { options in
                options.pairs = 1
                options.messagesPerSender = 25
                options.rate = nil
                options.window = 5
                options.drainSeconds = 2
            }
            #expect(report.acknowledged == 10 && report.errors == 15 && report.delivered == 10 && report.lost == 0)
        }
    }

    /// One delivery run against the test server on `port`, with the options `configure` sets.
    private static func bench(port: Int, _ configure: (inout MessageBench.Options) -> Void) async throws -> MessageBench.Report {
        var options = MessageBench.Options()
        configure(&options)
        return try await MessageBench(
            BenchTarget(
                api: BenchAPI(baseURL: "http://localhost:\(port)"),
                webSocketURL: "ws://localhost:\(port)/v1/ws", serverPID: nil)
        ).run(options)
    }
}
