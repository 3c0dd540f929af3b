import Foundation
#if os(Linux)
import HummingbirdWSClient
import Logging
import NIOWebSocket
#endif
import ParleyCore
import Synchronization

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
    /// When the latest frame came off the socket, before the client handled it (``Heartbeat``
    /// rule 2), or nil if the transport does not keep it.
    var lastArrival: ContinuousClock.Instant? { get }
}

extension RealtimeConnection {
    /// By default, a close.
    public func abort() { close() }
    /// By default, not kept: the client counts a frame when it handles it.
    public var lastArrival: ContinuousClock.Instant? { nil }
}

/// The instant the latest frame came off a socket, written by the transport's reader and read by
/// the client's watchdog.
final class ArrivalStamp: Sendable {
    private let latest = Mutex<ContinuousClock.Instant?>(nil)
    func stamp() { latest.withLock { $0 = .now } }
    var instant: ContinuousClock.Instant? { latest.withLock { $0 } }
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
    private let arrival: ArrivalStamp
    var lastArrival: ContinuousClock.Instant? { arrival.instant }

    static func open(url: String) async throws -> WebSocketConnection {
        let arrival = ArrivalStamp()
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
                        arrival.stamp()
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
        return WebSocketConnection(frames: frames, frameSink: frameSink, outgoing: outgoingSink, task: task, arrival: arrival)
    }

    private let frameSink: AsyncStream<ServerFrame>.Continuation

    private init(
        frames: AsyncStream<ServerFrame>, frameSink: AsyncStream<ServerFrame>.Continuation, outgoing: AsyncStream<String>.Continuation,
        task: Task<Void, Never>, arrival: ArrivalStamp
    ) {
        self.arrival = arrival
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
