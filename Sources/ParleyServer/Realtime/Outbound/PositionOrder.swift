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
    /// 2. An event goes between the last ack at or below its position and the first ack above it, so
    ///    events and acks are written in position order (acks queued in order, as a connection's are).
    /// 3. Within that span an event stays as close to its slot as it can: in it when its slot is
    ///    inside, else right after that last ack or right before that first ack (those gathered at
    ///    one place in position order). A typing frame queued after a message stays after it unless
    ///    an ack must come between them.
    static func inPositionOrder(_ items: [Self]) -> [Self] {
        if isInPositionOrder(items) { return items }
        var acks: [(index: Int, position: Int64)] = []
        for (index, item) in items.enumerated() {
            if case .sent(_, _, _, let step?) = item { acks.append((index, step.position)) }
        }
        // Where each event goes (rules 2 and 3): before or after an ack's slot, or its own.
        var before: [Int: [(position: Int64, order: Int, event: EncodedEvent)]] = [:]
        var after = before, staying = before
        var order = 0
        for (index, item) in items.enumerated() {
            guard case .events(let events) = item else { continue }
            for event in events {
                let last = acks.last { $0.position <= event.position }, first = acks.first { $0.position > event.position }
                let placed = (event.position, order, event)
                order += 1
                if let last, last.index > index {
                    after[last.index, default: []].append(placed)
                } else if let first, first.index < index {
                    before[first.index, default: []].append(placed)
                } else {
                    staying[index, default: []].append(placed)
                }
            }
        }
        func sorted(_ events: [(position: Int64, order: Int, event: EncodedEvent)]?) -> [Self] {
            (events ?? []).sorted { ($0.position, $0.order) < ($1.position, $1.order) }.map { .events([$0.event]) }
        }
        var result: [Self] = []
        result.reserveCapacity(items.count + order)
        for (index, item) in items.enumerated() {
            result += sorted(before[index])
            if case .events = item {
                if let kept = staying[index] { result.append(.events(kept.map(\.event))) }
            } else {
                result.append(item)
            }
            result += sorted(after[index])
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
