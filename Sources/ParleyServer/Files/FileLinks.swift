import Crypto
import Foundation
import ParleyCore

/// Signed, short-lived paths to files, for `<img src>` and download links that cannot carry the
/// session token: `/v1/files/{id}/content?user=U&expires=E&sig=S`, where S is an HMAC-SHA256 over the id,
/// the user and the expiry with a key every node shares (``UploadStore``'s shared secret). The link
/// names whom it was made for; serving still checks, at every request, that this user can see the
/// file now (a member removed since gets 404).
struct FileLinks: Sendable {
    let key: SymmetricKey
    let lifetimeSeconds: Double

    /// The secret's name in the database.
    static let secretName = "file-link-key"

    func link(_ id: UploadID, for user: UserID, now: Timestamp) -> (path: String, expiresAt: Timestamp) {
        // Whole minutes, so the links made within a minute are equal and the browser's cache holds.
        let expires = (now.milliseconds / 1000 + Int64(lifetimeSeconds) + 59) / 60 * 60
        let query = "user=\(user.rawValue)&expires=\(expires)&sig=\(signature(id, user, expires))"
        return ("/v1/files/\(id.rawValue)/content?\(query)", Timestamp(milliseconds: expires * 1000))
    }

    /// The user a link was made for, if its signature holds and it has not expired.
    func verify(_ id: UploadID, user: String?, expires: String?, signature given: String?, now: Timestamp) -> UserID? {
        guard let user, let expires, let given, let expiry = Int64(expires), expiry > now.milliseconds / 1000,
            let userID = UserID(validating: user)
        else { return nil }
        let expected = signature(id, userID, expiry)
        // Compared in constant time: a byte-by-byte early exit would leak how much of a guess is right.
        guard expected.utf8.count == given.utf8.count else { return nil }
        var difference: UInt8 = 0
        for (a, b) in zip(expected.utf8, given.utf8) { difference |= a ^ b }
        return difference == 0 ? userID : nil
    }

    private func signature(_ id: UploadID, _ user: UserID, _ expires: Int64) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(id.rawValue)\n\(user.rawValue)\n\(expires)".utf8), using: key)
        return LowercaseHex.string(Array(mac))
    }
}
