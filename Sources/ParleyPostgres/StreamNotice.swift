import ParleyCore
import ParleyStore

/// The payload of Parley's `NOTIFY`: whose event streams moved, and up to which position.
///
/// Small on purpose (PostgreSQL caps a payload at 8,000 bytes): the events themselves are read
/// from the store by position, so a lost or late notice only delays delivery, never loses it.
/// Text form: `user:position` pairs separated by spaces.
public struct StreamNotice: Sendable, Equatable {
    public static let channel = "parley_streams"
    /// The newest committed position per user.
    public var heads: [UserID: Int64]

    public init(heads: [UserID: Int64]) { self.heads = heads }

    init(_ deliveries: [Delivery]) {
        var heads: [UserID: Int64] = [:]
        for delivery in deliveries { heads[delivery.recipient] = max(heads[delivery.recipient] ?? 0, delivery.event.position) }
        self.heads = heads
    }

    /// The notice as one or more payloads under the size cap.
    func payloads(maxBytes: Int = 7_000) -> [String] {
        var payloads: [String] = [], current = ""
        for (user, position) in heads.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            let pair = "\(user.rawValue):\(position)"
            if !current.isEmpty, current.utf8.count + pair.utf8.count + 1 > maxBytes {
                payloads.append(current)
                current = ""
            }
            current += current.isEmpty ? pair : " " + pair
        }
        if !current.isEmpty { payloads.append(current) }
        return payloads
    }

    /// Parses a payload; malformed pairs are skipped (the store stays the truth).
    init(payload: String) {
        var heads: [UserID: Int64] = [:]
        for pair in payload.split(separator: " ") {
            guard let colon = pair.lastIndex(of: ":"), let position = Int64(pair[pair.index(after: colon)...]),
                let user = UserID(validating: String(pair[..<colon]))
            else { continue }
            heads[user] = max(heads[user] ?? 0, position)
        }
        self.heads = heads
    }
}
