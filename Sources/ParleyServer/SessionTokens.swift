import Crypto
import Foundation

/// Bearer session tokens: 256 random bits, shown to the client once, stored only as a SHA-256 hash,
/// so a leaked database does not leak usable sessions.
enum SessionTokens {
    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString()
            .replacing("+", with: "-").replacing("/", with: "_").replacing("=", with: "")
    }

    /// Lowercase hex of SHA-256 (run on every connect and authenticated request, so without
    /// `String(format:)`, which took 5 % of a connect's CPU).
    static func hash(_ token: String) -> String {
        let digest = SHA256.hash(data: Array(token.utf8))
        return String(unsafeUninitializedCapacity: SHA256.byteCount * 2) { buffer in
            var index = 0
            for byte in digest {
                buffer[index] = hexDigits[Int(byte >> 4)]
                buffer[index + 1] = hexDigits[Int(byte & 0x0F)]
                index += 2
            }
            return index
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Tokens are 43 base64url characters; anything else is refused before touching the database.
    static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == 43 && token.utf8.allSatisfy { c in
            (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x2D || c == 0x5F
        }
    }
}
