import Crypto
import Foundation

extension VAPIDKey {
    /// The server's VAPID key kept in `path` (PEM, mode 0600), made on first start. Browsers'
    /// subscriptions are bound to the public key, so it must outlive restarts: a new key would
    /// silently orphan every subscription.
    ///
    /// Rules: an existing file is read and tightened to 0600 (a read-only one, such as a mounted
    /// secret, is read as it is); a missing one is written to a temporary name with mode 0600,
    /// flushed, then linked into place and the directory flushed, so a crash never leaves a
    /// half-written or lost key, and of two nodes starting at once on a shared directory the
    /// second reads the first one's key; a file that is not a P-256 private key stops the start
    /// with a clear error (never replaced: that would orphan the subscriptions).
    static func loadOrCreate(at path: String) throws -> VAPIDKey {
        let manager = FileManager.default
        if manager.fileExists(atPath: path) { return try read(path) }
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
            let linked = link(temporary, path) == 0
            let lost = !linked && errno == EEXIST
            try? manager.removeItem(atPath: temporary)
            if lost { return try read(path) }  // another node made it first
            guard linked else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
            let directory = open((path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent, O_RDONLY)
            if directory >= 0 {
                _ = fsync(directory)
                close(directory)
            }
        } catch {
            try? manager.removeItem(atPath: temporary)
            throw error
        }
        return key
    }

    private static func read(_ path: String) throws -> VAPIDKey {
        let mode = (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? 0
        if mode & 0o077 != 0 { try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path) }
        let text = try String(contentsOfFile: path, encoding: .utf8)
        guard let key = try? P256.Signing.PrivateKey(pemRepresentation: text) else { throw VAPIDKeyFileError(path: path) }
        return VAPIDKey(privateKey: key)
    }
}

/// The VAPID key file exists but holds no P-256 private key.
struct VAPIDKeyFileError: Error, CustomStringConvertible {
    let path: String
    var description: String {
        "\(path) is not a PEM P-256 private key. It is the Web Push identity that browsers' subscriptions are bound to: restore it from a backup rather than delete it (deleting it makes a new key, and every browser must subscribe again)."
    }
}
