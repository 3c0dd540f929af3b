import Foundation
@testable import ParleyBench
import Testing

/// `ServerLauncher` learns of a child's exit even when Foundation's SIGCHLD handling does not (a
/// thread that leaves the signal unblocked can take it): its poll reads the status of a child
/// Foundation never started or reaped.
@Suite struct ServerLauncherTests {
    @Test(arguments: [("exit 3", 3), ("exit 0", 0), ("kill -9 $$", 128 + 9)] as [(String, Int32)])
    func theExitOfAChildIsReadWithoutReapingIt(script: String, status: Int32) throws {
        var pid: pid_t = 0
        let arguments = ["/bin/sh", "-c", script]
        var argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        #expect(posix_spawn(&pid, "/bin/sh", nil, nil, &argv, environ) == 0)
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        var seen: Int32?
        while seen == nil, ContinuousClock.now < deadline {
            seen = ServerLauncher.exitedStatus(of: pid)
            if seen == nil { usleep(5_000) }
        }
        #expect(seen == status)
        #expect(ServerLauncher.exitedStatus(of: pid) == status, "the zombie is left for its parent to reap")
        var reaped: Int32 = 0
        #expect(waitpid(pid, &reaped, 0) == pid)
    }
}
