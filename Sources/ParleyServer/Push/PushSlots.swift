import Synchronization

/// How many users the dispatcher is pushing for, in two lanes, so that push services that are
/// slow to answer (or never answer) cannot hold the pushes of everyone else.
///
/// Rules:
/// 1. A user's push opens a slot in the fast lane; one still running after ``PushDispatcher/slowAfter``
///    moves to the slow lane. A push service answers in well under a second, so the slow lane
///    holds users whose services hang or dribble (up to the sender's timeout).
/// 2. The dispatcher claims new users while the fast lane has room (``PushDispatcher/batch``) and
///    both lanes together stay under ``PushDispatcher/maxSlots``: a thousand accounts registered
///    at endpoints that never answer delay the others' pushes by at most the time it takes a slot
///    to turn slow, not for as long as they keep answering nothing.
/// 3. A slot is closed once, in whichever lane it ended in.
final class PushSlots: Sendable {
    /// One user's push: fast, slow, or closed.
    final class Slot: Sendable {
        fileprivate let state = Atomic<Int>(0)
    }

    private let fast = Atomic<Int>(0)
    private let slow = Atomic<Int>(0)

    var fastCount: Int { fast.load(ordering: .relaxed) }
    var slowCount: Int { slow.load(ordering: .relaxed) }

    /// How many more users may be claimed now (rule 2).
    func room(lane: Int, total: Int) -> Int {
        let (fast, slow) = (fastCount, slowCount)
        return max(0, min(lane - fast, total - fast - slow))
    }

    func open() -> Slot {
        fast.add(1, ordering: .relaxed)
        return Slot()
    }

    /// Rule 1: whether `slot` moved to the slow lane now (not when it had closed first).
    func markSlow(_ slot: Slot) -> Bool {
        guard slot.state.compareExchange(expected: 0, desired: 1, ordering: .relaxed).exchanged else { return false }
        fast.add(-1, ordering: .relaxed)
        slow.add(1, ordering: .relaxed)
        return true
    }

    /// Rule 3.
    func close(_ slot: Slot) {
        switch slot.state.exchange(2, ordering: .relaxed) {
        case 0: fast.add(-1, ordering: .relaxed)
        case 1: slow.add(-1, ordering: .relaxed)
        default: break
        }
    }
}
