import Foundation
import ParleySDK

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One `parley chat` at a time in a home folder: each saves the outbox as it holds it, so a second
/// one would write over the messages the first has written and not sent yet. A lock on
/// `chat.lock` in the folder, held for the life of the process (the kernel lets go when it ends,
/// however it ends); scripts (`send`, `list`, `tail`) take it too, since each keeps a client of the
/// same local copy. A folder that cannot be written holds no outbox to overwrite, and a file system
/// without locks cannot hold one: the client goes on without it there.
enum HomeLock {
    nonisolated(unsafe) private static var held: Int32 = -1

    static func take(_ storage: ClientStorage) throws {
        guard held < 0 else { return }
        try? FileManager.default.createDirectory(
            at: storage.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = storage.directory.appendingPathComponent("chat.lock").path
        var descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if descriptor < 0 { descriptor = open(path, O_RDONLY | O_CLOEXEC) }  // a lock needs no write access
        guard descriptor >= 0 else { return }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let failure = errno
            close(descriptor)
            // A file system without locks (some network or FUSE ones) says so otherwise: go on unlocked.
            guard failure == EWOULDBLOCK else { return }
            throw ChatFailure(
                "Another parley chat is using \(storage.directory.path): quit it first (two would write over each other's"
                    + " messages not sent yet), or give this one its own --home.")
        }
        held = descriptor
    }
}
