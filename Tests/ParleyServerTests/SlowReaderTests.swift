import Foundation
import Synchronization
import ParleyCore
import Testing
import ParleyServer

/// A client that stops reading, or reads too slowly, is dropped by the server from the writer's
/// side, and resumes without loss when it comes back.
@Suite struct SlowReaderTests {
    /// Bob's socket as a raw connection (so it can stop reading). Carol is his contact, so his going
    /// offline is visible to her: the server's own word that it dropped him. Alice floods him.
    static func setUp(_ api: TestAPI) async throws -> (alice: Account, bob: Account, reader: RawConnection, watcher: TestSocket) {
        let alice = try await api.register("alice"), bob = try await api.register("bob"), carol = try await api.register("carol")
        let first = try await api.send("hi", from: carol, to: bob)
        _ = try await api.send("hello", from: bob, in: first.conversationId)
        let reader = try await RawConnection.open(port: api.port, receiveBuffer: 4096)
        try await reader.upgradeToWebSocket()
        try await reader.send(RawConnection.textFrame(#"{"type":"hello","token":"\#(bob.token)"}"#))
        try await reader.wait("synced") { text, _ in text.contains("synced") }
        let watcher = try await api.socket(carol)
        _ = try await watcher.presence(bob.id, online: true)
        return (alice, bob, reader, watcher)
    }

    /// Sends 8 KB messages until Bob is dropped (the watcher hears he went offline, or a reader that
    /// reads finds its socket closed by the server), and returns how many were sent. How many it
    /// takes depends on the kernel's socket buffers (up to 4 MB each way on loopback) and on how
    /// fast this machine sends compared with the 20 KB/s reader, so the flood goes on until the drop
    /// instead of guessing a size; 4,000 (32 MB) bounds it.
    static func floodUntilDropped(
        _ api: TestAPI, from alice: Account, to bob: Account, watcher: TestSocket, closed: @Sendable () -> Bool = { false }
    ) async throws -> Int {
        let text = String(repeating: "x", count: 8_000)
        for sent in 1...4_000 {
            _ = try await api.send(text, from: alice, to: bob)
            if sent % 25 == 0, await watcher.inbox.frames.contains(where: { Self.isOffline($0, bob.id) }) || closed() { return sent }
        }
        _ = try await watcher.presence(bob.id, online: false)
        return 4_000
    }

    /// The watcher sends nothing while it waits, and on a loaded machine the flood outlasted the
    /// 90 s idle limit: the server closed the watcher's socket, and it never heard Bob go offline.
    static let watcherIdleLimit: Double = 3_600

    static func isOffline(_ frame: ServerFrame, _ user: UserID) -> Bool {
        if case .presence(let who, false, _) = frame { who == user } else { false }
    }

    @Test func aClientThatStopsReadingIsDropped() async throws {
        try await TestServer.run(configure: {
            $0.writeTimeoutSeconds = 1
            $0.maxLagSeconds = 1_000  // so only the stalled write can end it
            $0.idleTimeoutSeconds = Self.watcherIdleLimit
        }) { api in
            let (alice, bob, reader, watcher) = try await Self.setUp(api)
            try await reader.setReading(false)
            _ = try await Self.floodUntilDropped(api, from: alice, to: bob, watcher: watcher)
            try await reader.setReading(true)
            try await reader.waitUntilClosed()
        }
    }

    @Test func aClientReadingAt20KBPerSecondIsDroppedAndResumesWithoutLoss() async throws {
        try await TestServer.run(configure: {
            $0.writeTimeoutSeconds = 2
            $0.maxLagSeconds = 2
            $0.idleTimeoutSeconds = Self.watcherIdleLimit
        }) { api in
            let (alice, bob, reader, watcher) = try await Self.setUp(api)
            let done = Flag()
            let reading = Task { try await reader.readSlowly(bytesPerSecond: 20_000) { done.isSet } }
            let sent = try await Self.floodUntilDropped(api, from: alice, to: bob, watcher: watcher) { reader.isClosed }
            done.set()
            try await reading.value
            try? await reader.setReading(true)  // already closed, when the flood stopped at the close
            try await reader.waitUntilClosed()

            let resumed = try await api.socket(bob, after: 0)
            _ = try await resumed.synced()
            let fromAlice = await resumed.inbox.messages.filter { $0.senderId == alice.id }
            #expect(fromAlice.map(\.seq) == Array(1...Int64(sent)), "every message, once, in order")
        }
    }
}

final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .relaxed) }
    var isSet: Bool { value.load(ordering: .relaxed) }
}
