import Dispatch
import NIOCore
import NIOPosix
import ParleyCore
@testable import ParleyServer
import Synchronization
import Testing

/// ``EventLoopTaskExecutor``'s rules, and that a connection's ``InboundFrameQueue`` answers on its loop.
@Suite struct EventLoopTaskExecutorTests {
    /// What the tasks under test saw, in order.
    final class Record<Value: Sendable>: Sendable {
        private let values = Mutex<[Value]>([])
        var all: [Value] { values.withLock { $0 } }
        func append(_ value: Value) { values.withLock { $0.append(value) } }
    }

    let loop = MultiThreadedEventLoopGroup.singleton.next()

    /// Rule 1: the task runs on the loop's thread, and comes back to it after an await that was
    /// resumed on another thread (as the store's writer resumes a send).
    @Test func aTaskRunsOnTheLoopAlsoAfterBeingResumedElsewhere() async {
        let loop = loop
        let seen = await Task(executorPreference: EventLoopTaskExecutor(loop)) { () async -> [Bool] in
            let before = loop.inEventLoop
            let resumer = await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
                DispatchQueue.global().async { done.resume(returning: loop.inEventLoop) }
            }
            return [before, resumer, loop.inEventLoop]
        }.value
        #expect(seen == [true, false, true])
    }

    /// Rule 1: jobs run in the order they were enqueued.
    @Test func jobsRunInTheOrderTheyWereEnqueued() async throws {
        let executor = EventLoopTaskExecutor(loop)
        let order = Record<Int>()
        // Started on the loop itself, so all are enqueued before the first runs.
        let tasks = try await loop.submit {
            (0..<200).map { index in Task(executorPreference: executor) { order.append(index) } }
        }.get()
        for task in tasks { await task.value }
        #expect(order.all == Array(0..<200))
    }

    /// A pipeline given the executor answers each frame on the loop, the frames in order.
    @Test func aPipelineAnswersOnItsLoop() async {
        let loop = loop
        let answered = Record<String>()
        let pipeline = InboundFrameQueue(executor: EventLoopTaskExecutor(loop)) { work in
            guard case .one(.frame(.ping(let ref))) = work else { return }
            answered.append("\(ref ?? "") on loop: \(loop.inEventLoop)")
            await Task.yield()  // a suspension, as an answer that awaits the store has
        }
        for ref in ["1", "2", "3"] { _ = pipeline.offer(.frame(.ping(ref: ref))) }
        await pipeline.drain()
        #expect(answered.all == ["1 on loop: true", "2 on loop: true", "3 on loop: true"])
    }
}
