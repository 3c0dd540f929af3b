import Crypto
import Foundation
import HummingbirdBcrypt

/// bcrypt with a SHA-256 pre-hash: bcrypt reads at most 72 bytes and stops at a NUL, so the
/// password is first reduced to 44 base64 characters and every character of it counts.
///
/// Hashes made this way carry the `sha256+` prefix; a hash without it is plain bcrypt of the
/// password (accounts created before), and is still verified that way.
enum PasswordHashing {
    static let prefix = "sha256+"

    static func hash(_ password: String, cost: UInt8) -> String {
        prefix + Bcrypt.hash(prehash(password), cost: cost)
    }

    static func verify(_ password: String, against stored: String) -> Bool {
        guard stored.hasPrefix(prefix) else { return Bcrypt.verify(password, hash: stored) }
        return Bcrypt.verify(prehash(password), hash: String(stored.dropFirst(prefix.count)))
    }

    private static func prehash(_ password: String) -> String {
        Data(SHA256.hash(data: Data(password.utf8))).base64EncodedString()
    }
}
