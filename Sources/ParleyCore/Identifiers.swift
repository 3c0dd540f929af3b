import Foundation

/// A typed string identifier; encodes as the bare string (RawRepresentable's standard Codable).
public protocol StringIdentifier: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible where RawValue == String {
    init(rawValue: String)
}

extension StringIdentifier {
    /// The id as text.
    public var description: String { rawValue }
    /// A new random lowercase UUID.
    public static func random() -> Self { Self(rawValue: UUID().uuidString.lowercased()) }
    /// Parses a client-supplied UUID, normalized to lowercase; `nil` unless it is a UUID.
    static func uuid(_ string: String) -> Self? {
        UUID(uuidString: string).map { Self(rawValue: $0.uuidString.lowercased()) }
    }
}

/// A user's stable identifier: a lowercase UUID string assigned at registration.
public struct UserID: StringIdentifier, Comparable {
    /// The id as it travels on the wire.
    public let rawValue: String
    /// Wraps an id without checking it (from trusted storage).
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Accepts only a well-formed id (from untrusted input).
    public init?(validating string: String) {
        guard let id = Self.uuid(string) else { return nil }
        self = id
    }
    /// Orders by the text of the id (the order direct conversation ids use).
    public static func < (lhs: UserID, rhs: UserID) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A conversation's identifier.
///
/// A direct (1:1) conversation's id is derived from its two members, so both people reach the same
/// conversation however they start it: `dm_<lower user id>_<higher user id>`. Group conversations,
/// when they come, get other prefixes.
public struct ConversationID: StringIdentifier {
    /// The id as it travels on the wire.
    public let rawValue: String
    /// Wraps an id without checking it (from trusted storage).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The id of the direct conversation of two users: the same whichever is first.
    public static func direct(_ a: UserID, _ b: UserID) -> ConversationID {
        let (low, high) = a < b ? (a, b) : (b, a)
        return ConversationID(rawValue: "dm_\(low.rawValue)_\(high.rawValue)")
    }

    /// Parses a client-supplied id; `nil` when it cannot be a conversation id (wrong shape or order).
    public init?(validating string: String) {
        let parts = string.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "dm",
            let a = UserID(validating: String(parts[1])), let b = UserID(validating: String(parts[2])), a < b
        else { return nil }
        self = .direct(a, b)
    }
}

/// The server-assigned id of a stored message (a lowercase UUID string).
public struct MessageID: StringIdentifier {
    /// The id as it travels on the wire.
    public let rawValue: String
    /// Wraps an id without checking it (from trusted storage).
    public init(rawValue: String) { self.rawValue = rawValue }
}

/// The client-generated idempotency key of a message: a UUID, unique per sender forever.
public struct ClientMessageID: StringIdentifier {
    /// The id as it travels on the wire.
    public let rawValue: String
    /// Wraps an id without checking it (from trusted storage).
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Accepts only a well-formed id (from untrusted input).
    public init?(validating string: String) {
        guard let id = Self.uuid(string) else { return nil }
        self = id
    }
}
