import Foundation
import ParleyCore
import Testing

/// The server side of the heartbeat: a client that sends nothing, not even `ping`, past the idle
/// limit is closed (1000, "idle"), so dead peers do not hold server memory; one that pings stays.
@Suite struct IdleConnectionTests {
    @Test func aSilentClientIsClosedAndAPingingOneStays() async throws {
        try await TestServer.run(configure: { $0.idleTimeoutSeconds = 1 }) { api in
            let alice = try await api.register("alice")
            let silent = try await api.socket(alice), pinging = try await api.socket(alice)
            let keepAlive = Task {
                for index in 0..<20 {
                    pinging.send(.ping(ref: "\(index)"))
                    try await Task.sleep(for: .milliseconds(250))
                }
            }
            let close = try await silent.closed()
            #expect(close?.closeCode == .normalClosure && close?.reason?.hasPrefix("idle") == true)
            try await keepAlive.value
            pinging.send(.ping(ref: "still here"))
            _ = try await pinging.inbox.waitFor("pong") { $0.contains(.pong(ref: "still here")) ? true : nil }
        }
    }
}
