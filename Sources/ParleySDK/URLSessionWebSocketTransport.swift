#if !os(Linux)
import Foundation

/// The platform's WebSocket transport on Apple platforms (see ``RealtimeTransport``).
public typealias WebSocketTransport = URLSessionWebSocketTransport

/// ``RealtimeTransport`` over the server's WebSocket endpoint with `URLSessionWebSocketTask`:
/// Foundation only. (Linux's Foundation cannot open WebSockets with the libcurl it ships, so there
/// the SDK uses SwiftNIO instead; this type is compiled and used on Apple platforms only.)
public struct URLSessionWebSocketTransport: RealtimeTransport {
    /// The WebSocket URL (`ws(s)://…/v1/ws`).
    public let url: URL
    private let session: URLSession

    /// - Parameter serverURL: the server's http(s) URL; the socket is at `/v1/ws`.
    public init(serverURL: URL, session: URLSession = .shared) {
        let base = serverURL.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        url = URL(string: base.replacingOccurrences(of: "http", with: "ws", options: .anchored) + "/v1/ws") ?? serverURL
        self.session = session
    }

    /// Opens a WebSocket to the server; returns once it is open (a ping was answered).
    public func connect() async throws -> any RealtimeConnection {
        try await URLSessionWebSocketConnection.open(session.webSocketTask(with: url))
    }
}

/// One `URLSessionWebSocketTask`: a reader task turns text messages into frames, a writer task
/// sends queued frames in order, then closes with 1000.
///
/// `@unchecked Sendable` because `URLSessionWebSocketTask` is not marked `Sendable`, though Apple
/// documents it as thread-safe (all of URLSession's task API may be called from any thread). Every
/// stored property is a `let`, set once in `init`; the streams' continuations are `Sendable`.
final class URLSessionWebSocketConnection: RealtimeConnection, @unchecked Sendable {
    let frames: AsyncStream<ServerFrame>
    private let frameSink: AsyncStream<ServerFrame>.Continuation
    private let outgoing: AsyncStream<String>.Continuation
    private let socket: URLSessionWebSocketTask
    private let arrival = ArrivalStamp()
    var lastArrival: ContinuousClock.Instant? { arrival.instant }

    static func open(_ socket: URLSessionWebSocketTask) async throws -> URLSessionWebSocketConnection {
        socket.maximumMessageSize = 1 << 20
        socket.resume()
        do {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                socket.sendPing { error in
                    if let error { continuation.resume(throwing: error) } else { continuation.resume() }
                }
            }
        } catch {
            socket.cancel(with: .abnormalClosure, reason: nil)
            throw ParleyClientError(status: 0, code: nil, message: "Cannot reach the server.")
        }
        return URLSessionWebSocketConnection(socket)
    }

    private init(_ socket: URLSessionWebSocketTask) {
        self.socket = socket
        let (frames, frameSink) = AsyncStream.makeStream(of: ServerFrame.self)
        let (texts, outgoing) = AsyncStream.makeStream(of: String.self)
        self.frames = frames
        self.frameSink = frameSink
        self.outgoing = outgoing
        Task { [arrival] in
            let decoder = JSONDecoder()
            while true {
                guard let message = try? await socket.receive() else { break }
                arrival.stamp()
                if case .string(let text) = message, let frame = try? decoder.decode(ServerFrame.self, from: Data(text.utf8)) {
                    frameSink.yield(frame)
                }
            }
            frameSink.finish()
        }
        Task {
            for await text in texts {
                do { try await socket.send(.string(text)) } catch { break }
            }
            socket.cancel(with: .normalClosure, reason: nil)
        }
    }

    func send(_ frame: ClientFrame) {
        guard let data = try? WireFormat.encoder().encode(frame) else { return }
        outgoing.yield(String(decoding: data, as: UTF8.self))
    }

    func close() { outgoing.finish() }

    func abort() {
        socket.cancel(with: .abnormalClosure, reason: nil)
        frameSink.finish()
        outgoing.finish()
    }
}
#endif
