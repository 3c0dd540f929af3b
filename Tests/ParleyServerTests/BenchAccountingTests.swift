import Foundation
import ParleyBench
import ParleyCore
import Testing

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

    @Test func aSmallRunAgainstARealServerAccountsForEveryMessage() async throws {
        try await TestServer.run { api in
            let bench = MessageBench(BenchTarget(api: BenchAPI(baseURL: "http://localhost:\(api.port)"), webSocketURL: "ws://localhost:\(api.port)/v1/ws", serverPID: nil))
            var options = MessageBench.Options()
            options.pairs = 3
            options.messagesPerSender = 40
            options.rate = nil
            options.window = 4
            let report = try await bench.run(options)
            #expect(report.sent == 120 && report.acknowledged == 120 && report.delivered == 120)
            #expect(report.lost == 0 && report.duplicated == 0 && report.outOfOrder == 0 && report.errors == 0)
            #expect(report.delivery?.count == 120)
        }
    }

    @Test func refusedSendsAreCountedAsErrorsNotDeliveries() async throws {
        // A rate limit of 10 messages makes the server refuse the rest: the bench must report them.
        try await TestServer.run(configure: { $0.sendBurst = 10; $0.sendsPerSecond = 0.01 }) { api in
            let bench = MessageBench(BenchTarget(api: BenchAPI(baseURL: "http://localhost:\(api.port)"), webSocketURL: "ws://localhost:\(api.port)/v1/ws", serverPID: nil))
            var options = MessageBench.Options()
            options.pairs = 1
            options.messagesPerSender = 25
            options.rate = nil
            options.window = 5
            options.drainSeconds = 2
            let report = try await bench.run(options)
            #expect(report.acknowledged == 10 && report.errors == 15 && report.delivered == 10 && report.lost == 0)
        }
    }
}
