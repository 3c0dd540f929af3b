import ParleyCore
import Synchronization

/// Carries one connection's frames from its reader to its ``FrameResponder``, so the reader goes on
/// reading while sends commit, and sends that arrive in a row are stored as one batch (one group
/// commit, not one per message).
///
/// Rules:
/// 1. Frames are answered in the order they arrived. A run of sends is one batch, committed and
///    answered in order; the frame after the run is handled once the whole run is answered (a
///    `ping` after sends is answered after their acks).
/// 2. At most `capacity` frames wait: ``offer(_:)`` says when the inbound queue is full, and the reader
///    stops reading until `room` is called, so a flooding client is slowed down, not buffered.
/// 3. A worker task exists only while frames wait or are being answered: an idle connection has none.
/// 4. ``drain()`` returns once every frame handed in has been answered.
final class InboundFrameQueue: Sendable {
    /// A frame as the reader found it.
    enum Item: Sendable {
        case frame(ClientFrame)
        case undecodable(ref: String?, ParleyError)
    }

    /// What the answering side is handed at a time.
    enum Work: Sendable {
        case sends([SendRequest])
        case one(Item)

        var frameCount: Int {
            if case .sends(let requests) = self { requests.count } else { 1 }
        }
    }

    private struct State {
        var waiting: [Item] = []  // empty holds no memory: most connections are idle
        var working = false
        var full = false
        var drainWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    private let capacity: Int
    private let answer: @Sendable (Work) async -> Void
    private let room: @Sendable () -> Void
    private let executor: (any TaskExecutor)?

    /// - Parameters:
    ///   - executor: where the worker runs (the connection's event loop); nil for the global pool.
    ///   - answer: handles one piece of work; the next is handed over once it returns.
    ///   - room: called once a full pipeline has room again (rule 2).
    init(
        capacity: Int = 32, executor: (any TaskExecutor)? = nil, answer: @escaping @Sendable (Work) async -> Void,
        room: @escaping @Sendable () -> Void = {}
    ) {
        self.capacity = capacity
        self.executor = executor
        self.answer = answer
        self.room = room
    }

    /// Queues a frame (counted by ``ClientConnection/beginFrame()``); false when the inbound queue is now
    /// full: read nothing more until `room` is called (rule 2).
    func offer(_ item: Item) -> Bool {
        let (startWorker, full) = state.withLock { state in
            state.waiting.append(item)
            defer { state.working = true }
            if state.waiting.count >= capacity { state.full = true }
            return (!state.working, state.full)
        }
        if startWorker { Task(executorPreference: executor) { await self.work() } }
        return !full
    }

    /// Waits until every frame submitted so far has been answered (rule 4).
    func drain() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state in
                guard state.working else { return true }
                state.drainWaiters.append(done)
                return false
            }
            if idle { done.resume() }
        }
    }

    private func work() async {
        while let work = takeWork() { await answer(work) }
    }

    /// The next run of sends, or the next single frame; nil (and the worker ends) when none waits.
    private func takeWork() -> Work? {
        let (work, hasRoom, drained) = state.withLock { state -> (Work?, Bool, [CheckedContinuation<Void, Never>]) in
            guard !state.waiting.isEmpty else {
                state.working = false
                defer { state.drainWaiters = [] }
                return (nil, false, state.drainWaiters)
            }
            var taken = 1
            var work = Work.one(state.waiting[0])
            if case .frame(.send(let request)) = state.waiting[0] {
                var run = [request]
                while taken < state.waiting.count, case .frame(.send(let next)) = state.waiting[taken] {
                    run.append(next)
                    taken += 1
                }
                work = .sends(run)
            }
            state.waiting.removeFirst(taken)
            if state.waiting.isEmpty { state.waiting = [] }  // let go of the storage
            defer { state.full = false }
            return (work, state.full, [])
        }
        if hasRoom { room() }
        for waiter in drained { waiter.resume() }
        return work
    }
}
