import Foundation
import ParleyCore
import Testing
import NIOWebSocket
import ParleyServer
import WSCore

/// The server side of the heartbeat: a client that sends nothing, not even `ping`, past the idle
/// limit is closed (1000, "idle"), so dead peers do not hold server memory; one that pings stays.
@Suite struct IdleConnectionTests {
    @Test func aSilentClientIsClosedAndAPingingOneStays() async throws {
        // Pings every 200 ms against a 3 s limit: a wide margin, so a loaded machine that runs the
        // pinging task late does not make it look silent.
        try await TestServer.run(configure: { $0.idleTimeoutSeconds = 3 }) { api in
            let alice = try await api.register("alice")
            let silent = try await api.socket(alice), pinging = try await api.socket(alice)
            let keepAlive = Task {
                var index = 0
                while !Task.isCancelled {
                    pinging.send(.ping(ref: "\(index)"))
                    index += 1
                    try? await Task.sleep(for: .milliseconds(200))
                }
            }
            let close = try await silent.closed()
            #expect(close?.closeCode == .normalClosure && close?.reason?.hasPrefix("idle") == true)
            keepAlive.cancel()
            await keepAlive.value
            pinging.send(.ping(ref: "still here"))
            _ = try await pinging.inbox.waitFor("pong") { $0.contains(.pong(ref: "still here")) ? true : nil }
        }
    }
}
