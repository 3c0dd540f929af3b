import Histogram

/// What one receiver saw of one sender's numbered messages, and how long each took.
///
/// Rules: message numbers start at 1; a number seen twice is a duplicate; a number lower than the
/// highest seen so far is out of order; a number acknowledged to the sender but never seen is lost.
public struct DeliveryLedger: Sendable {
    private(set) var received: Set<Int> = []
    private(set) var highest = 0
    public private(set) var duplicated = 0
    public private(set) var outOfOrder = 0
    public private(set) var latency = Histogram<UInt64>.microseconds()

    public init() {}

    /// Records a delivery of message `number` that took `micros` from send to receipt.
    public mutating func deliver(_ number: Int, micros: UInt64) {
        guard received.insert(number).inserted else {
            duplicated += 1
            return
        }
        if number < highest { outOfOrder += 1 }
        highest = max(highest, number)
        latency.record(clamping: micros)
    }

    /// How many of the acknowledged numbers never arrived.
    public func lost(acknowledged: Set<Int>) -> Int {
        acknowledged.subtracting(received).count
    }

    public var deliveredCount: Int { received.count }
}

/// The payload a bench message carries: `bench <sender> <number> <send time µs>`, so the receiver
/// can account for it and time it without any shared state.
public struct BenchPayload: Equatable, Sendable {
    public var sender: Int
    public var number: Int
    public var sentAtMicros: UInt64

    public init(sender: Int, number: Int, sentAtMicros: UInt64) {
        self.sender = sender
        self.number = number
        self.sentAtMicros = sentAtMicros
    }

    public var text: String { "bench \(sender) \(number) \(sentAtMicros)" }

    public init?(text: String) {
        let parts = text.split(separator: " ")
        guard parts.count == 4, parts[0] == "bench", let sender = Int(parts[1]), let number = Int(parts[2]),
            let sentAt = UInt64(parts[3])
        else { return nil }
        self.init(sender: sender, number: number, sentAtMicros: sentAt)
    }
}

/// Microseconds on a monotonic clock shared by every task of the bench process.
public enum BenchClock {
    static let origin = ContinuousClock.now

    public static func nowMicros() -> UInt64 {
        let origin = Self.origin  // first use initializes it: read it before taking "now"
        let elapsed = ContinuousClock.now - origin
        return UInt64(max(0, elapsed.components.seconds)) * 1_000_000 + UInt64(max(0, elapsed.components.attoseconds / 1_000_000_000_000))
    }
}
