import Crypto
import Foundation
import ParleyCore

/// Bearer session tokens: 256 random bits, shown to the client once, stored only as a SHA-256 hash,
/// so a leaked database does not leak usable sessions.
enum SessionTokens {
    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Base64URL.encode(bytes)
    }

    /// Lowercase hex of SHA-256 (run on every connect and authenticated request).
    static func hash(_ token: String) -> String {
        LowercaseHex.string(Array(SHA256.hash(data: Array(token.utf8))))
    }

    /// The credentials of an `Authorization` header in the Bearer scheme, whose name is
    /// case-insensitive (RFC 9110 §11.1): `Bearer x`, `bearer x`, `BEARER  x`. Nil for another scheme.
    static func bearerCredentials(_ header: String) -> String? {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1].drop { $0 == " " })
    }

    /// Tokens are 43 base64url characters; anything else is refused before touching the database.
    static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == 43
            && token.utf8.allSatisfy { c in
                (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x2D || c == 0x5F
            }
    }
}
