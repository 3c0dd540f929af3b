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
    /// 2. Events are written in position order, each before the first ack with a later position
    ///    (and the rest at the end): an event moves, an answer never does.
    static func inPositionOrder(_ items: [Self]) -> [Self] {
        if isInPositionOrder(items) { return items }
        var events: [(position: Int64, index: Int, item: Self)] = []
        var ordered: [Self] = []
        for item in items {
            if case .events(let list) = item {
                for event in list { events.append((event.position, events.count, .events([event]))) }
            } else {
                ordered.append(item)
            }
        }
        events.sort { ($0.position, $0.index) < ($1.position, $1.index) }
        var result: [Self] = []
        result.reserveCapacity(ordered.count + events.count)
        var next = events.startIndex
        for item in ordered {
            if case .sent(_, _, _, let step?) = item {
                while next < events.endIndex, events[next].position < step.position {
                    result.append(events[next].item)
                    next += 1
                }
            }
            result.append(item)
        }
        result += events[next...].map(\.item)
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
