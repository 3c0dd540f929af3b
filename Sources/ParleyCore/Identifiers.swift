import Foundation

/// A user's stable identifier: a lowercase UUID string assigned at registration.
public struct UserID: RawRepresentable, Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Parses a client-supplied id; `nil` unless it is a UUID.
    public init?(validating string: String) {
        guard let uuid = UUID(uuidString: string) else { return nil }
        self.rawValue = uuid.uuidString.lowercased()
    }
    public static func random() -> UserID { UserID(rawValue: UUID().uuidString.lowercased()) }
    public static func < (lhs: UserID, rhs: UserID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { rawValue }
    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// A conversation's identifier.
///
/// A direct (1:1) conversation's id is derived from its two members, so both people reach the same
/// conversation however they start it: `dm_<lower user id>_<higher user id>`. Group conversations,
/// when they come, get other prefixes.
public struct ConversationID: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static func direct(_ a: UserID, _ b: UserID) -> ConversationID {
        let (low, high) = a < b ? (a, b) : (b, a)
        return ConversationID(rawValue: "dm_\(low.rawValue)_\(high.rawValue)")
    }
    /// Parses a client-supplied id; `nil` when it cannot be a conversation id (wrong shape or length).
    public init?(validating string: String) {
        let parts = string.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "dm",
            let a = UserID(validating: String(parts[1])), let b = UserID(validating: String(parts[2])),
            a < b
        else { return nil }
        self.rawValue = "dm_\(a.rawValue)_\(b.rawValue)"
    }
    public var description: String { rawValue }
    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// The server-assigned id of a stored message (a lowercase UUID string).
public struct MessageID: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static func random() -> MessageID { MessageID(rawValue: UUID().uuidString.lowercased()) }
    public var description: String { rawValue }
    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// The client-generated idempotency key of a message: a UUID, unique per sender forever.
public struct ClientMessageID: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init?(validating string: String) {
        guard let uuid = UUID(uuidString: string) else { return nil }
        self.rawValue = uuid.uuidString.lowercased()
    }
    public static func random() -> ClientMessageID { ClientMessageID(rawValue: UUID().uuidString.lowercased()) }
    public var description: String { rawValue }
    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
