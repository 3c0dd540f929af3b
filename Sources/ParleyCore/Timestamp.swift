import Foundation

/// A point in time as whole milliseconds since 1970-01-01 UTC; on the wire a plain JSON integer.
public struct Timestamp: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    public var milliseconds: Int64
    public init(milliseconds: Int64) { self.milliseconds = milliseconds }
    public init(_ date: Date) { self.milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }
    public static func now() -> Timestamp { Timestamp(Date()) }
    public var date: Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
    public func adding(seconds: Double) -> Timestamp { Timestamp(milliseconds: milliseconds + Int64(seconds * 1000)) }
    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.milliseconds < rhs.milliseconds }
    public var description: String { "\(milliseconds)" }
    public init(from decoder: any Decoder) throws { milliseconds = try decoder.singleValueContainer().decode(Int64.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(milliseconds)
    }
}
