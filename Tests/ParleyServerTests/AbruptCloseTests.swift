import ParleyCore
import ParleyServer
import Testing

/// WebSocketChannelHandler rule 6: a client whose socket ends without a close frame (a killed app,
/// a dropped network) is let go at once, not when the idle limit comes: nobody stays online
/// through a socket that is gone.
@Suite struct AbruptCloseTests {
    @Test(arguments: [true, false])
    func aClientThatEndsItsSocketWithoutACloseFrameGoesOfflineAtOnce(halfClose: Bool) async throws {
        try await TestServer.run(configure: { $0.idleTimeoutSeconds = 600 }) { api in
            let bob = try await api.register("bob"), carol = try await api.register("carol")
            let first = try await api.send("hi", from: carol, to: bob)
            _ = try await api.send("hello", from: bob, in: first.conversationId)
            let watcher = try await api.socket(carol)
            let raw = try await RawConnection.open(port: api.port)
            try await raw.upgradeToWebSocket()
            try await raw.send(RawConnection.textFrame(#"{"type":"hello","token":"\#(bob.token)"}"#))
            try await raw.wait("synced") { text, _ in text.contains("synced") }
            _ = try await watcher.presence(bob.id, online: true)
            if halfClose {
                try await raw.shutdownOutput()  // FIN only: this side still reads
            } else {
                await raw.close()
            }
            // Within the wait's 15 s, far below the 600 s idle limit.
            _ = try await watcher.presence(bob.id, online: false)
            if halfClose { try await raw.waitUntilClosed() }
        }
    }
}
