import Testing
import Foundation

/// ``WebSocketChannelHandler``'s rules on a raw socket: what a WebSocket client library would do,
/// byte by byte, without one.
@Suite struct WebSocketFramingTests {
    /// What the server sent after the handshake.
    static func framesAfterHandshake(_ connection: RawConnection, handshake: Int) -> [UInt8] {
        Array(connection.bytes.dropFirst(handshake))
    }

    /// Rule 1: a text message sent in fragments is joined before it is read.
    @Test func aFragmentedMessageIsJoined() async throws {
        try await TestServer.run { api in
            let socket = try await RawConnection.open(port: api.port)
            try await socket.upgradeToWebSocket()
            let text = Array(#"{"type":"ping","ref":"in-three-parts"}"#.utf8)
            try await socket.send(RawConnection.frame(opcode: 0x1, fin: false, payload: Array(text[..<10])))
            try await socket.send(RawConnection.frame(opcode: 0x0, fin: false, payload: Array(text[10..<20])))
            try await socket.send(RawConnection.frame(opcode: 0x0, fin: true, payload: Array(text[20...])))
            // Before `hello`, a ping is refused, with the ref the joined message carried.
            try await socket.wait("the answer") { text, _ in text.contains("not_authenticated") && text.contains("in-three-parts") }
        }
    }

    /// Rule 2: a ping is answered with a pong that carries its data.
    @Test func aPingIsAnsweredWithItsData() async throws {
        try await TestServer.run { api in
            let socket = try await RawConnection.open(port: api.port)
            try await socket.upgradeToWebSocket()
            let handshake = socket.bytes.count
            try await socket.send(RawConnection.frame(opcode: 0x9, payload: Array("are you there".utf8)))
            try await socket.wait("the pong") { _, _ in socket.bytes.count >= handshake + 15 }
            #expect(Self.framesAfterHandshake(socket, handshake: handshake) == [0x8A, 13] + Array("are you there".utf8))
        }
    }

    /// Rule 3: a client's close is answered with its own code, and the server drops the connection.
    @Test func aClientsCloseIsAnsweredWithItsCode() async throws {
        try await TestServer.run { api in
            let socket = try await RawConnection.open(port: api.port)
            try await socket.upgradeToWebSocket()
            let handshake = socket.bytes.count
            try await socket.send(RawConnection.frame(opcode: 0x8, payload: [0x0F, 0xA0] + Array("bye".utf8)))  // 4000
            try await socket.waitUntilClosed()
            #expect(Self.framesAfterHandshake(socket, handshake: handshake) == [0x88, 0x02, 0x0F, 0xA0])
        }
    }

    /// ``ConnectionLifecycle`` rule 2: messages sent right behind `hello`, before `welcome` (here in the same
    /// TCP segment), wait for the sign-in and are then answered in order; the reads paused for them
    /// resume, so what comes after is answered too.
    @Test func messagesBehindHelloAreAnsweredInOrderAfterWelcome() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice")
            let socket = try await RawConnection.open(port: api.port)
            try await socket.upgradeToWebSocket()
            let hello = RawConnection.textFrame(#"{"type":"hello","token":"\#(alice.token)"}"#)
            let pings = (1...20).flatMap { RawConnection.textFrame(#"{"type":"ping","ref":"early \#($0)"}"#) }
            try await socket.send(hello + pings)
            try await socket.wait("20 pongs") { text, _ in text.contains(#""early 20""#) }
            try await socket.send(RawConnection.textFrame(#"{"type":"ping","ref":"later"}"#))
            try await socket.wait("the later pong") { text, _ in text.contains(#""later""#) }
            let text = socket.text
            let order = (["welcome"] + (1...20).map { "\"early \($0)\"" } + ["\"later\""]).map { text.range(of: $0)?.lowerBound }
            #expect(!order.contains(nil), "every answer came")
            #expect(order.compactMap { $0 } == order.compactMap { $0 }.sorted(), "welcome first, then the pongs in order")
        }
    }

    /// An upgrade anywhere but `GET /v1/ws` is refused with 400.
    @Test func anUpgradeElsewhereIsRefused() async throws {
        try await TestServer.run { api in
            let socket = try await RawConnection.open(port: api.port)
            try await socket.send(
                "GET /v1/conversations HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
            try await socket.waitUntilClosed()
            #expect(socket.text.hasPrefix("HTTP/1.1 400"))
        }
    }
}
