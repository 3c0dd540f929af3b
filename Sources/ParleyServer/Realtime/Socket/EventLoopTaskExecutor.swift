import NIOCore

/// Runs a connection's tasks (signing in, the ``InboundFrameQueue`` worker, the ``OutboundStream``
/// runs) on its channel's event loop, where its frames are read and written.
///
/// Without it those tasks ran on Swift's global pool. A send then woke a pool thread to be
/// answered, and another to write each answer, and every socket write went back to the event loop
/// and returned; each hand-off to a sleeping thread is a context switch. On the event loop, a frame
/// is read, handed to the store and, once committed, written, on one thread; the hand-offs left
/// are to the store's writer and back, and to a recipient on another event loop.
///
/// Rules:
/// 1. Jobs run on the event loop's thread, in the order they were enqueued.
/// 2. Nothing that blocks runs here: the store's writes and its reads through GRDB await their own
///    queues, and the lookups run on the calling thread are short reads by key. The work between
///    two suspension points is encoding and decoding frames, short enough for an event loop.
/// 3. The event loop belongs to a group that outlives every connection (the process's singleton),
///    so a job enqueued here always runs.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        // Not the loop's own `enqueue(_:)`: it runs a job as the loop's serial executor, not as this
        // task executor. The closure is one allocation per job.
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
