extension ClientConnection.Outbound {
    /// Puts the stream positions of a batch the outbound stream took in order, so an ack stands in for the
    /// sender's own event (``RealtimeGateway`` resume rule 5) even when events committed with it
    /// were queued first.
    ///
    /// A send is acked after its message's events went to the other recipients, and a
    /// conversation's other member can have messages in the same commit, so the queue of a sender's
    /// connection often holds their events (positions p+1, p+3, …) before its own acks (p, p+2, …).
    /// Written as queued, every ack would find a gap, fetch its own event from the store and go
    /// without a position. Rules:
    /// 1. Everything but events (acks, errors, pongs, any other frame) is written in the order
    ///    queued: a connection's frames are answered in the order they came, whatever their positions.
    /// 2. An event queued before an ack with a lower position goes right behind the last such ack
    ///    (those gathered behind one ack in position order); every other event keeps its slot. An
    ///    event moves as little as it must, an answer never.
    static func inPositionOrder(_ items: [Self]) -> [Self] {
        if isInPositionOrder(items) { return items }
        var acks: [(index: Int, position: Int64)] = []
        for (index, item) in items.enumerated() {
            if case .sent(_, _, _, let step?) = item { acks.append((index, step.position)) }
        }
        var behind: [Int: [(position: Int64, order: Int, item: Self)]] = [:]
        var result: [Self] = []
        result.reserveCapacity(items.count)
        var moved = 0
        for (index, item) in items.enumerated() {
            if case .events(let events) = item {
                var staying: [EncodedEvent] = []
                for event in events {
                    if let ack = acks.last(where: { $0.index > index && $0.position < event.position }) {
                        behind[ack.index, default: []].append((event.position, moved, .events([event])))
                        moved += 1
                    } else {
                        staying.append(event)
                    }
                }
                if !staying.isEmpty { result.append(.events(staying)) }
            } else {
                result.append(item)
            }
            if let gathered = behind.removeValue(forKey: index) {
                result += gathered.sorted { ($0.position, $0.order) < ($1.position, $1.order) }.map(\.item)
            }
        }
        return result
    }

    /// The common case, checked without allocating: positions already ascend.
    private static func isInPositionOrder(_ items: [Self]) -> Bool {
        var last = Int64.min
        for item in items {
            switch item {
            case .events(let events):
                for event in events {
                    if event.position < last { return false }
                    last = event.position
                }
            case .sent(_, _, _, let step?):
                if step.position < last { return false }
                last = step.position
            default:
                continue
            }
        }
        return true
    }
}
