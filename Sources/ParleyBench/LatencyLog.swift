import Foundation

/// Every delivery's send time and latency, for `parley bench messages --latency-log`: percentiles
/// say how slow the tail is, this says when it happened (a stall every second is not noise).
///
/// The file has one line per delivered message, in the order the messages were sent: the send
/// time in µs since sending began, then the latency in µs, separated by a space, after one header
/// line starting with `#`.
public struct LatencyLog: Sendable {
    public struct Sample: Sendable, Equatable {
        /// When the message was sent, on ``BenchClock``.
        public var sentAtMicros: UInt64
        public var latencyMicros: UInt64
    }

    public private(set) var samples: [Sample] = []

    public init() {}

    public mutating func record(sentAtMicros: UInt64, latencyMicros: UInt64) {
        samples.append(Sample(sentAtMicros: sentAtMicros, latencyMicros: latencyMicros))
    }

    public mutating func append(_ other: LatencyLog) { samples += other.samples }

    /// The file's text: samples by send time, times counted from `startMicros` (when sending began).
    public func text(since startMicros: UInt64) -> String {
        var lines = ["# sent_us latency_us (sent_us: µs since sending began; one line per delivered message)"]
        lines.reserveCapacity(samples.count + 1)
        for sample in samples.sorted(by: { $0.sentAtMicros < $1.sentAtMicros }) {
            lines.append("\(sample.sentAtMicros &- min(startMicros, sample.sentAtMicros)) \(sample.latencyMicros)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Writes ``text(since:)`` to `path`, replacing what was there.
    public func write(to path: String, since startMicros: UInt64) throws {
        try Data(text(since: startMicros).utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}
