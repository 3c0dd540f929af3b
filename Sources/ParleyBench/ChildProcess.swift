import Foundation

/// Child processes started through bash that inherit no descriptor of ours beyond the standard
/// three: NIO's sockets are not close-on-exec, so a server started by a test (or PostgreSQL started
/// by the crash checker) would otherwise keep listening sockets and client connections open for as
/// long as it runs. (glibc's `posix_spawn_file_actions_addclosefrom_np` is not visible to Swift, so
/// the shell closes them.) posix_spawn, not Foundation's `Process`: on Linux its `run()` can crash
/// while it lists `/proc/self/fd` (swift-corelibs-foundation pull request 5472).
public enum ChildProcess {
    /// Bash that closes every descriptor above the standard three.
    static let closeInheritedDescriptors = #"for fd in /proc/$$/fd/*; do n=${fd##*/}; [ "$n" -gt 2 ] && exec {n}>&-; done; "#

    /// Starts `bash -c script` (after closing inherited descriptors), with `arguments` as `$0`,
    /// `$1`…, and the given file actions; returns its pid.
    public static func spawnShell(
        _ script: String, arguments: [String] = [], actions: UnsafePointer<posix_spawn_file_actions_t>? = nil
    ) throws -> pid_t {
        let words = ["/bin/bash", "-c", closeInheritedDescriptors + script] + arguments
        let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/bash", actions, nil, argv, environ)
        guard spawned == 0 else { throw BenchAPI.Failure(description: "cannot start bash (error \(spawned))") }
        return pid
    }

    /// Waits for `pid` to exit, reaps it and returns its exit code, or 128 + the signal that ended it.
    public static func waitForExit(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        // waitpid's raw status: the exit code is in the second byte when the program exited normally.
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// Runs `bash -c script` to completion on a thread of its own (never a cooperative one);
    /// returns its exit status.
    public static func run(_ script: String) async throws -> Int32 {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { waitForExit(try spawnShell(script)) })
            }
        }
    }
}
