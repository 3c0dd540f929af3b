import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import ParleyCore

/// One bench WebSocket: sends frames from a queue, hands every received text frame to `onText`.
///
/// Frames are not decoded here: workloads decode only what they need (a sender skips the echo of
/// its own messages by their first bytes), so the client spends as little CPU as it can on a box it
/// shares with the server.
public final class BenchSocket: Sendable {
    private let outgoing: AsyncStream<String>.Continuation
    private let connection: Task<Void, any Error>
    private let welcomed: AsyncStream<Bool>

    public static func connect(url: String, token: String, after: Int64? = nil, onText: @escaping @Sendable (String) -> Void) async throws -> BenchSocket {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        let (welcome, welcomeContinuation) = AsyncStream.makeStream(of: Bool.self)
        let hello = String(decoding: try WireFormat.encoder().encode(ClientFrame.hello(token: token, after: after)), as: UTF8.self)
        let connection = Task {
            defer { welcomeContinuation.finish() }
            try await WebSocketClient.connect(url: url, configuration: .init(maxFrameSize: 1 << 20), logger: Logger(label: "bench")) { inbound, outbound, _ in
                try await outbound.writeTextMessage(hello)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await text in stream { try await outbound.writeTextMessage(text) }
                        try await outbound.close(.normalClosure, reason: nil)
                    }
                    var first = true
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        guard case .text(let text) = message else { continue }
                        if first {
                            first = false
                            welcomeContinuation.yield(text.contains(#""type":"welcome""#))
                            welcomeContinuation.finish()
                        }
                        onText(text)
                    }
                    group.cancelAll()
                }
            }
        }
        let socket = BenchSocket(outgoing: continuation, connection: connection, welcomed: welcome)
        var iterator = welcome.makeAsyncIterator()
        guard await iterator.next() == true else {
            socket.close()
            throw BenchAPI.Failure(description: "WebSocket hello was refused or the connection failed")
        }
        return socket
    }

    private init(outgoing: AsyncStream<String>.Continuation, connection: Task<Void, any Error>, welcomed: AsyncStream<Bool>) {
        self.outgoing = outgoing
        self.connection = connection
        self.welcomed = welcomed
    }

    public func send(_ frame: ClientFrame) {
        if let data = try? WireFormat.encoder().encode(frame) { outgoing.yield(String(decoding: data, as: UTF8.self)) }
    }

    public func close() { outgoing.finish() }

    /// Waits until the connection has ended.
    public func closed() async { _ = try? await connection.value }
}
