import Foundation

/// A point in time as whole milliseconds since 1970-01-01 UTC; on the wire a plain JSON integer.
public struct Timestamp: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01 UTC.
    public var milliseconds: Int64
    /// A timestamp from milliseconds since 1970.
    public init(milliseconds: Int64) { self.milliseconds = milliseconds }
    /// A timestamp from a date (to the millisecond, rounded down).
    public init(_ date: Date) { self.milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }
    /// The current time.
    public static func now() -> Timestamp { Timestamp(Date()) }
    /// The timestamp as a date.
    public var date: Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
    /// This time plus `seconds` (negative goes back).
    public func adding(seconds: Double) -> Timestamp { Timestamp(milliseconds: milliseconds + Int64(seconds * 1000)) }
    /// Earlier first.
    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.milliseconds < rhs.milliseconds }
    /// The milliseconds, as text.
    public var description: String { "\(milliseconds)" }
    public init(from decoder: any Decoder) throws { milliseconds = try decoder.singleValueContainer().decode(Int64.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(milliseconds)
    }
}
