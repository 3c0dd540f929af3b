import Foundation
import Histogram
@testable import ParleyBench
import Testing

/// The paced sender's record of its own delays: what tells a slow delivery that was sent on time
/// from one the load generator sent late.
@Suite struct PacedSendTests {
    @Test func everySendIsTimedAgainstItsSchedule() async {
        let start = ContinuousClock.now
        let run = await MessageBench.paced(
            senders: 3, rate: 3000, messagesPerSender: 10, start: start, deadline: start.advanced(by: .seconds(30))
        ) { _, _ in }
        #expect(run.sent == 30)  // one lateness sample per send
    }

    @Test func aGeneratorHeldUpRecordsTheSendsItOwedAsLate() async {
        // Two senders at 1,000/s: a send is due every millisecond. The generator is held up for
        // 30 ms at sender 0's fifth message, so the sends due during the hold leave ≥ 29 ms late.
        let start = ContinuousClock.now
        let run = await MessageBench.paced(
            senders: 2, rate: 1000, messagesPerSender: 20, start: start, deadline: start.advanced(by: .seconds(30))
        ) { sender, number in
            if sender == 0, number == 5 { Thread.sleep(forTimeInterval: 0.03) }
        }
        #expect(run.sent == 40)
        #expect(run.lateness.max >= 29_000, "latest send: \(run.lateness.max) µs")
    }
}

/// The bench's histograms count every sample: one past their range is recorded at its top, not lost.
@Suite struct BenchHistogramTests {
    @Test func aSamplePastTheRangeCountsAtItsTop() {
        var histogram = Histogram<UInt64>.microseconds()
        histogram.record(clamping: 10 * Histogram<UInt64>.longestMicroseconds)
        histogram.record(clamping: 1_000)
        #expect(histogram.totalCount == 2)
        #expect(histogram.max >= Histogram<UInt64>.longestMicroseconds * 999 / 1000)
    }
}
