import NIOCore
import ParleyCore

/// What the hub hands its connections at once (one publish's events, or an ephemeral frame), handed
/// to each connection on its own event loop with one hop per event loop, not one per connection: a
/// group message for a hundred members costs as many hops as the server has event loops.
///
/// Rules:
/// 1. Each connection gets its items in the order they were added, and after anything handed to
///    it earlier from the same thread (an event loop runs what it is given in order): a message's
///    event comes before the `typing` stop sent after it, a conversation's event before the
///    presence of the contact it introduced.
/// 2. An event goes through ``ClientConnection/deliver(_:)`` (written at once when the connection
///    is idle), a frame is queued. Connections without an event loop (unit tests) get theirs at once.
struct LiveDeliveries {
    enum Item: Sendable {
        case event(EncodedEvent)
        case frame(ServerFrame)
    }

    private var byLoop: [ObjectIdentifier: (loop: any EventLoop, items: [(ClientConnection, Item)])] = [:]

    mutating func add(_ item: Item, for connection: ClientConnection) {
        guard let loop = connection.eventLoop else {
            Self.hand(item, to: connection)
            return
        }
        byLoop[ObjectIdentifier(loop), default: (loop, [])].items.append((connection, item))
    }

    /// Hands every item over: at once for connections on the calling event loop, through one job
    /// on each other loop.
    func hand() {
        for (loop, items) in byLoop.values {
            if loop.inEventLoop {
                Self.hand(items)
            } else {
                loop.execute { Self.hand(items) }
            }
        }
    }

    private static func hand(_ items: [(ClientConnection, Item)]) {
        for (connection, item) in items { hand(item, to: connection) }
    }

    private static func hand(_ item: Item, to connection: ClientConnection) {
        switch item {
        case .event(let event): connection.deliver(event)
        case .frame(let frame): connection.send(frame)
        }
    }

    /// Waits until every event loop of `connections` has run what was handed to it before: items
    /// on their way are queued when this returns.
    static func settle(_ connections: [ClientConnection]) async {
        var loops: [ObjectIdentifier: any EventLoop] = [:]
        for connection in connections { if let loop = connection.eventLoop { loops[ObjectIdentifier(loop)] = loop } }
        for loop in loops.values where !loop.inEventLoop { try? await loop.submit {}.get() }
    }
}
