import Crypto
import Foundation

extension VAPIDKey {
    /// The server's VAPID key kept in `path` (PEM, mode 0600), made on first start. Browsers'
    /// subscriptions are bound to the public key, so it must outlive restarts: a new key would
    /// silently orphan every subscription.
    ///
    /// Rules: an existing file is read and tightened to 0600; a missing one is written to a
    /// temporary name with mode 0600, flushed, then renamed into place, so a crash never leaves a
    /// half-written key; a file that is not a P-256 private key stops the start with a clear error
    /// (never replaced: that would orphan the subscriptions).
    static func loadOrCreate(at path: String) throws -> VAPIDKey {
        let manager = FileManager.default
        if manager.fileExists(atPath: path) {
            try manager.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
            let text = try String(contentsOfFile: path, encoding: .utf8)
            guard let key = try? P256.Signing.PrivateKey(pemRepresentation: text) else { throw VAPIDKeyFileError(path: path) }
            return VAPIDKey(privateKey: key)
        }
        let key = VAPIDKey()
        let temporary = path + ".new-\(UUID().uuidString)"
        guard manager.createFile(atPath: temporary, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: temporary])
        }
        do {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: temporary))
            try handle.write(contentsOf: Data(key.privateKey.pemRepresentation.utf8))
            try handle.synchronize()
            try handle.close()
            guard rename(temporary, path) == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
        } catch {
            try? manager.removeItem(atPath: temporary)
            throw error
        }
        return key
    }
}

/// The VAPID key file exists but holds no P-256 private key.
struct VAPIDKeyFileError: Error, CustomStringConvertible {
    let path: String
    var description: String {
        "\(path) is not a PEM P-256 private key. It is the Web Push identity that browsers' subscriptions are bound to: restore it from a backup rather than delete it (deleting it makes a new key, and every browser must subscribe again)."
    }
}
