extension ClientConnection.Outbound {
    /// Puts the stream positions of a batch the outbound stream took in order, so an ack stands in for the
    /// sender's own event (``RealtimeGateway`` resume rule 5) even when events committed with it
    /// were queued first.
    ///
    /// A send is acked after its message's events went to the other recipients, and a
    /// conversation's other member can have messages in the same commit, so the queue of a sender's
    /// connection often holds their events (positions p+1, p+3, …) before its own acks (p, p+2, …).
    /// Written as queued, every ack would find a gap, fetch its own event from the store and go
    /// without a position. Rules: the items that carry a position (events, acks with a position)
    /// are written in position order, in the slots such items held; every other frame keeps its slot.
    static func inPositionOrder(_ items: [Self]) -> [Self] {
        if isInPositionOrder(items) { return items }
        var slots: [Self?] = []
        var positioned: [(position: Int64, index: Int, item: Self)] = []
        for item in items {
            switch item {
            case .events(let events):
                for event in events {
                    positioned.append((event.position, positioned.count, .events([event])))
                    slots.append(nil)
                }
            case .sent(_, _, _, let step?):
                positioned.append((step.position, positioned.count, item))
                slots.append(nil)
            default:
                slots.append(item)
            }
        }
        positioned.sort { ($0.position, $0.index) < ($1.position, $1.index) }
        var next = positioned.makeIterator()
        return slots.map { $0 ?? next.next()!.item }
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
