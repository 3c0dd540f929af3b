import Foundation

/// Base64url without padding (RFC 4648 §5), as Web Push keys, VAPID tokens and session tokens are written.
enum Base64URL {
    static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        Data(bytes).base64EncodedString().replacing("+", with: "-").replacing("/", with: "_").replacing("=", with: "")
    }

    /// The bytes, or nil for anything that is not base64url (padding tolerated).
    static func decode(_ text: String) -> [UInt8]? {
        var base64 = text.replacing("-", with: "+").replacing("_", with: "/").replacing("=", with: "")
        guard base64.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "/") }) else { return nil }
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).map { [UInt8]($0) }
    }
}

import Crypto

enum SHA256Digest {
    /// The SHA-256 of `text`'s UTF-8 bytes.
    static func of(_ text: String) -> [UInt8] { Array(SHA256.hash(data: Array(text.utf8))) }
}
