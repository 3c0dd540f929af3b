import Foundation

/// A typed string identifier; encodes as the bare string (RawRepresentable's standard Codable).
public protocol StringIdentifier: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible where RawValue == String {
    init(rawValue: String)
}

extension StringIdentifier {
    /// The id as text.
    public var description: String { rawValue }
    /// A new random lowercase UUID.
    public static func random() -> Self { Self(rawValue: UUIDText.random()) }
    /// Parses a client-supplied UUID, normalized to lowercase; `nil` unless it is a UUID.
    static func uuid(_ string: String) -> Self? {
        UUIDText.normalized(string).map { Self(rawValue: $0) }
    }
}

/// UUID text without Foundation's round trip through `UUID` (its parsing and formatting go through
/// `sscanf` and `sprintf`, and a send parses or makes four ids). Accepts only the canonical
/// 8-4-4-4-12 form, where it agrees with `UUID(uuidString:)` (which also takes sloppier forms and
/// turns them into other ids); a test holds it to both.
enum UUIDText {
    private static let dashes = [4, 6, 8, 10]

    /// The lowercase form of `8-4-4-4-12` hex digits (either case), or nil. An id already in
    /// lowercase, as clients send them, is returned as it is.
    static func normalized(_ string: String) -> String? {
        switch withBytes(string, { $0.count == 36 ? scan($0, at: 0) : nil }) {
        case nil: return nil
        case let uppercase?: return uppercase ? string.lowercased() : string
        }
    }

    /// nil unless the 36 bytes from `start` are `8-4-4-4-12` hex digits; otherwise whether any
    /// digit is uppercase.
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> Bool? {
        guard bytes.count >= start + 36 else { return nil }
        var uppercase = false
        for offset in 0..<36 {
            let byte = bytes[start + offset]
            switch (offset, byte) {
            case (8, UInt8(ascii: "-")), (13, UInt8(ascii: "-")), (18, UInt8(ascii: "-")), (23, UInt8(ascii: "-")): continue
            case (8, _), (13, _), (18, _), (23, _): return nil
            case (_, UInt8(ascii: "0")...UInt8(ascii: "9")), (_, UInt8(ascii: "a")...UInt8(ascii: "f")): continue
            case (_, UInt8(ascii: "A")...UInt8(ascii: "F")): uppercase = true
            default: return nil
            }
        }
        return uppercase
    }

    /// Runs `body` on the string's UTF-8 bytes, without a copy when they are stored contiguously
    /// (as in every native string).
    static func withBytes<R>(_ string: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = string.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(string.utf8).withUnsafeBufferPointer(body)
    }

    /// A random (version 4) UUID in lowercase.
    static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = withUnsafeBytes(of: (generator.next() as UInt64, generator.next() as UInt64)) { Array($0) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40  // version 4
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 4122 variant
        return LowercaseHex.string(bytes, dashesBefore: dashes)
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

    /// A new group's id: `grp_` and a random lowercase UUID.
    public static func newGroup() -> ConversationID { ConversationID(rawValue: "grp_" + UUIDText.random()) }

    /// Whether this is a group's id (`grp_…`) rather than a direct conversation's.
    public var isGroup: Bool { rawValue.hasPrefix("grp_") }

    /// Parses a client-supplied id; `nil` when it cannot be a conversation id (wrong shape or order).
    public init?(validating string: String) {
        if string.utf8.count == 40, string.hasPrefix("grp_") {
            guard let uuid = UUIDText.normalized(String(string.dropFirst(4))) else { return nil }
            self.init(rawValue: "grp_" + uuid)
            return
        }
        // Ids as the server makes them (lowercase, as clients send them back) are checked in place.
        enum Shape { case invalid, lowercase, uppercase }
        let shape = UUIDText.withBytes(string) { bytes -> Shape in
            guard bytes.count == 76, bytes[0] == UInt8(ascii: "d"), bytes[1] == UInt8(ascii: "m"), bytes[2] == UInt8(ascii: "_"),
                bytes[39] == UInt8(ascii: "_"), let upperA = UUIDText.scan(bytes, at: 3), let upperB = UUIDText.scan(bytes, at: 40)
            else { return .invalid }
            if upperA || upperB { return .uppercase }
            return bytes[3..<39].lexicographicallyPrecedes(bytes[40..<76]) ? .lowercase : .invalid
        }
        switch shape {
        case .invalid: return nil
        case .lowercase: self.init(rawValue: string)
        case .uppercase:
            let parts = string.split(separator: "_", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0] == "dm",
                let a = UserID(validating: String(parts[1])), let b = UserID(validating: String(parts[2])), a < b
            else { return nil }
            self = .direct(a, b)
        }
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
