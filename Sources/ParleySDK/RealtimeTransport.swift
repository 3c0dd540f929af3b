import Foundation
#if os(Linux)
import HummingbirdWSClient
import Logging
import NIOWebSocket
#endif
import ParleyCore

/// Opens live connections. `WebSocketTransport` is the real one; tests may script frames with a fake.
public protocol RealtimeTransport: Sendable {
    func connect() async throws -> any RealtimeConnection
}

/// One live connection: frames in order, until it ends.
public protocol RealtimeConnection: Sendable {
    /// Server frames, in order; finishes when the connection closes.
    var frames: AsyncStream<ServerFrame> { get }
    func send(_ frame: ClientFrame)
    /// Closes with a handshake: queued frames go first.
    func close()
    /// Drops the connection at once, for a line that is dead (``Heartbeat`` rule 3): `frames`
    /// ends now, whatever the network does.
    func abort()
}

extension RealtimeConnection {
    /// By default, a close.
    public func abort() { close() }
}

#if os(Linux)
/// The platform's WebSocket transport: SwiftNIO's client on Linux, `URLSessionWebSocketTask` on
/// Apple platforms (``URLSessionWebSocketTransport``), so an app there needs no SwiftNIO.
public typealias WebSocketTransport = NIOWebSocketTransport

/// ``RealtimeTransport`` over the server's WebSocket endpoint, with SwiftNIO (Hummingbird's client).
public struct NIOWebSocketTransport: RealtimeTransport {
    /// The WebSocket URL (`ws(s)://…/v1/ws`).
    public let url: String

    /// - Parameter serverURL: the server's http(s) URL; the socket is at `/v1/ws`.
    public init(serverURL: URL) {
        let base = serverURL.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        url = base.replacingOccurrences(of: "http", with: "ws", options: .anchored) + "/v1/ws"
    }

    /// Opens a WebSocket to the server.
    public func connect() async throws -> any RealtimeConnection {
        try await WebSocketConnection.open(url: url)
    }
}

final class WebSocketConnection: RealtimeConnection {
    let frames: AsyncStream<ServerFrame>
    private let outgoing: AsyncStream<String>.Continuation
    private let task: Task<Void, Never>

    static func open(url: String) async throws -> WebSocketConnection {
        let (frames, frameSink) = AsyncStream.makeStream(of: ServerFrame.self)
        let (outgoing, outgoingSink) = AsyncStream.makeStream(of: String.self)
        let (opened, openedSink) = AsyncStream.makeStream(of: Bool.self)
        let task = Task {
            defer {
                frameSink.finish()
                openedSink.yield(false)
                openedSink.finish()
            }
            _ = try? await WebSocketClient.connect(url: url, configuration: .init(maxFrameSize: 1 << 20), logger: Logger(label: "parley-client")) {
                inbound, outbound, _ in
                openedSink.yield(true)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await text in outgoing { try await outbound.writeTextMessage(text) }
                        try await outbound.close(.normalClosure, reason: nil)
                    }
                    let decoder = JSONDecoder()
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        guard case .text(let text) = message, let frame = try? decoder.decode(ServerFrame.self, from: Data(text.utf8)) else { continue }
                        frameSink.yield(frame)
                    }
                    group.cancelAll()
                }
            }
        }
        var iterator = opened.makeAsyncIterator()
        guard await iterator.next() == true else {
            throw ParleyClientError(status: 0, code: nil, message: "Cannot reach the server.")
        }
        return WebSocketConnection(frames: frames, frameSink: frameSink, outgoing: outgoingSink, task: task)
    }

    private let frameSink: AsyncStream<ServerFrame>.Continuation

    private init(
        frames: AsyncStream<ServerFrame>, frameSink: AsyncStream<ServerFrame>.Continuation, outgoing: AsyncStream<String>.Continuation,
        task: Task<Void, Never>
    ) {
        self.frames = frames
        self.frameSink = frameSink
        self.outgoing = outgoing
        self.task = task
    }

    func send(_ frame: ClientFrame) {
        guard let data = try? WireFormat.encoder().encode(frame) else { return }
        outgoing.yield(String(decoding: data, as: UTF8.self))
    }

    func close() { outgoing.finish() }

    func abort() {
        frameSink.finish()
        outgoing.finish()
        task.cancel()
    }
}
#endif
