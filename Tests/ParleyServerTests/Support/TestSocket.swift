import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import ParleyCore
import NIOWebSocket
import WSCore

/// A real WebSocket client for tests: frames it receives collect in an inbox that tests wait on.
final class TestSocket: Sendable {
    let inbox: FrameInbox
    private let outgoing: AsyncStream<WebSocketOutboundWriter.OutboundFrame>.Continuation
    private let connection: Task<WebSocketCloseFrame?, any Error>

    private init(
        inbox: FrameInbox, outgoing: AsyncStream<WebSocketOutboundWriter.OutboundFrame>.Continuation, connection: Task<WebSocketCloseFrame?, any Error>
    ) {
        self.inbox = inbox
        self.outgoing = outgoing
        self.connection = connection
    }

    /// Connects and, when `hello` is given, sends it and waits for `welcome` (or an error).
    static func connect(port: Int, hello: ClientFrame?) async throws -> TestSocket {
        let (stream, continuation) = AsyncStream.makeStream(of: WebSocketOutboundWriter.OutboundFrame.self)
        let inbox = FrameInbox()
        let connection = Task {
            try await WebSocketClient.connect(
                url: "ws://localhost:\(port)/v1/ws", configuration: .init(maxFrameSize: 1 << 20), logger: Logger(label: "test-socket")
            ) { inbound, outbound, _ in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await frame in stream { try await outbound.write(frame) }
                        try await outbound.close(.normalClosure, reason: nil)
                    }
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        if case .text(let text) = message { await inbox.append(text) }
                    }
                    group.cancelAll()
                }
            }
        }
        let socket = TestSocket(inbox: inbox, outgoing: continuation, connection: connection)
        if let hello {
            socket.send(hello)
            _ = try await socket.inbox.waitFor("welcome") { frames in
                frames.first { if case .welcome = $0 { true } else if case .error = $0 { true } else { false } }
            }
        }
        return socket
    }

    func send(_ frame: ClientFrame) {
        outgoing.yield(.text(String(decoding: (try? JSONEncoder().encode(frame)) ?? Data(), as: UTF8.self)))
    }

    func sendRaw(_ text: String) { outgoing.yield(.text(text)) }

    func sendBinary(_ bytes: [UInt8]) { outgoing.yield(.binary(ByteBuffer(bytes: bytes))) }

    /// A text frame with arbitrary bytes (which a Swift `String` could not hold if they are not UTF-8).
    func sendTextBytes(_ bytes: [UInt8]) {
        outgoing.yield(.custom(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(bytes: bytes))))
    }

    /// Closes from the client side and waits until the connection is gone.
    func close() async {
        outgoing.finish()
        _ = try? await connection.value
    }

    /// Waits for the connection to end (closed by the server) and returns the close frame.
    func closed() async throws -> WebSocketCloseFrame? {
        try await connection.value
    }
}

/// Everything a test socket received, decoded, with waiting helpers bounded in time.
actor FrameInbox {
    private(set) var frames: [ServerFrame] = []
    private(set) var undecodable: [String] = []

    func append(_ text: String) {
        if let frame = try? JSONDecoder().decode(ServerFrame.self, from: Data(text.utf8)) {
            frames.append(frame)
        } else {
            undecodable.append(text)
        }
    }

    /// Polls until `condition` gives a value; fails after `timeout` (a hang guard, not a timing check).
    func waitFor<T>(_ what: String, timeout: Duration = .seconds(15), _ condition: ([ServerFrame]) -> T?) async throws -> T {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline {
            if let value = condition(frames) { return value }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw TestFailure("timed out waiting for \(what); received: \(frames.suffix(10))")
    }

    var streamEvents: [StreamEvent] {
        frames.compactMap { if case .event(let event) = $0 { event } else { nil } }
    }

    var messages: [Message] {
        streamEvents.compactMap { if case .message(let message) = $0.payload { message } else { nil } }
    }

    var lastPosition: Int64? { streamEvents.last?.position }
}

extension ServerFrame {
    var errorCode: ErrorCode? { if case .error(_, _, let code, _) = self { code } else { nil } }
}
