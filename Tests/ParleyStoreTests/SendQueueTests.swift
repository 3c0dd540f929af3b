@testable import ParleyPostgres
import ParleyStore
import Synchronization
import Testing

/// ``PostgresSendQueue``'s rules 2, 3 and 5, with a writer that holds each batch until released.
@Suite struct SendQueueTests {
    typealias Element = Prepared.SendBatch.Element

    /// Records each batch it is given and answers it only when the test releases it (every batch
    /// at once after ``finish()``, so a failed expectation cannot leave a caller waiting).
    final class HeldWriter: Sendable {
        private let held = Mutex<(waiting: [CheckedContinuation<Void, Never>], holding: Bool)>(([], true))
        let batches: AsyncStream<[Element]>
        private let batchesIn: AsyncStream<[Element]>.Continuation
        let failing: Bool

        init(failing: Bool = false) {
            (batches, batchesIn) = AsyncStream.makeStream()
            self.failing = failing
        }

        func write(_ sends: [Element]) async throws -> PostgresSendQueue.Answers {
            await withCheckedContinuation { continuation in
                let hold = held.withLock { held in
                    if held.holding { held.waiting.append(continuation) }
                    return held.holding
                }
                batchesIn.yield(sends)
                if !hold { continuation.resume() }
            }
            if failing { throw StoreError.storageUnavailable }
            return sends.map { send in
                .success(
                    Prepared.Send.Row(
                        duplicate: false, messageId: send.messageId, seq: 1, createdAt: send.now, text: send.text,
                        conversation: send.conversation, contactsFormed: false, members: [], positions: [], created: false, creationPositions: []))
            }
        }

        func releaseAll() { release(holdingOn: true) }

        /// Releases every batch held and lets the later ones through.
        func finish() { release(holdingOn: false) }

        private func release(holdingOn: Bool) {
            let released = held.withLock { held in
                defer { held = ([], holdingOn) }
                return held.waiting
            }
            for continuation in released { continuation.resume() }
        }
    }

    /// The queue's clock, moved only by the test.
    final class ManualClock: Sendable {
        private let instant = Mutex(ContinuousClock.now)
        func now() -> ContinuousClock.Instant { instant.withLock { $0 } }
        func advance(by duration: Duration) { instant.withLock { $0 += duration } }
    }

    static func queue(_ clock: ManualClock = ManualClock()) -> PostgresSendQueue { PostgresSendQueue(now: { clock.now() }) }

    static func sends(_ count: Int, from caller: Int) -> [Element] {
        (0..<count).map { index in
            Element(
                sender: "s\(caller)", clientId: "c\(caller)-\(index)", conversation: "dm", recipient: nil, text: "\(caller).\(index)", now: 1,
                messageId: "m\(caller)-\(index)")
        }
    }

    /// Starts `write` for each caller's sends, in order, and returns once all of them wait or run.
    static func submit(
        _ groups: [(caller: Int, count: Int)], to queue: PostgresSendQueue, writer: HeldWriter, answers: inout [Task<[String], Never>]
    ) async {
        for (caller, count) in groups {
            let before = queue.load.received
            answers.append(
                Task {
                    await queue.write(sends(count, from: caller)) { try await writer.write($0) }.map { (try? $0.get())?.text ?? "failed" }
                })
            // Each write enqueues synchronously when its task runs: wait for it, so the order is the callers' order.
            while queue.load.received == before { await Task.yield() }
        }
    }

    /// Every runner gone once nothing waits (a runner answers its batch, then finds nothing left).
    static func settled(_ queue: PostgresSendQueue) async {
        while queue.load.running > 0 { await Task.yield() }
        #expect(queue.load.waitingSends == 0)
    }

    @Test func rule3OneRunnerWhileLessThanABatchWaitsAndTheWaitingShareTheNextBatch() async throws {
        let queue = Self.queue(), writer = HeldWriter()
        var answers: [Task<[String], Never>] = []
        var batches = writer.batches.makeAsyncIterator()
        await Self.submit([(0, 1)], to: queue, writer: writer, answers: &answers)
        #expect(await batches.next()?.map(\.text) == ["0.0"], "rule 2: nothing was being written, so the batch is the one send")
        await Self.submit((1...10).map { ($0, 1) }, to: queue, writer: writer, answers: &answers)
        #expect(queue.load.running == 1 && queue.load.waitingSends == 10, "ten sends wait for the one runner")
        writer.releaseAll()
        #expect(await batches.next()?.map(\.text) == (1...10).map { "\($0).0" }, "the ten share the next batch, in order")
        writer.finish()
        for (caller, answer) in answers.enumerated() { #expect(await answer.value == ["\(caller).0"]) }
        await Self.settled(queue)
    }

    @Test func rule3AWholeBatchWaitingStartsAnotherRunnerUpToThree() async throws {
        let queue = Self.queue(), writer = HeldWriter()
        var answers: [Task<[String], Never>] = []
        var batches = writer.batches.makeAsyncIterator()
        await Self.submit([(0, 1)], to: queue, writer: writer, answers: &answers)
        _ = await batches.next()
        await Self.submit([(1, 47)], to: queue, writer: writer, answers: &answers)
        #expect(queue.load.running == 1, "47 waiting: still one runner")
        await Self.submit([(2, 1)], to: queue, writer: writer, answers: &answers)
        #expect(queue.load.running == 2, "48 waiting: a second runner")
        #expect(await batches.next()?.count == 48, "which takes the whole batch (rule 2)")
        await Self.submit([(3, 48)], to: queue, writer: writer, answers: &answers)
        #expect(queue.load.running == 3)
        #expect(await batches.next()?.count == 48)
        await Self.submit([(4, 48), (5, 2)], to: queue, writer: writer, answers: &answers)
        #expect(queue.load.running == 3 && queue.load.waitingSends == 50, "never more than three")
        writer.releaseAll()
        // Two of the three freed runners take a batch each (in either order): a group of 48 fills
        // one, and the next caller's group goes in the other.
        let next = [await batches.next() ?? [], await batches.next() ?? []].sorted { $0.count < $1.count }
        #expect(next.map(\.count) == [2, 48] && next[0].map(\.text) == ["5.0", "5.1"])
        writer.finish()
        let counts = [1, 47, 1, 48, 48, 2]
        for (caller, answer) in answers.enumerated() { #expect(await answer.value == (0..<counts[caller]).map { "\(caller).\($0)" }) }
        await Self.settled(queue)
    }

    @Test func rule3ASendArrivingWhileNoRunnerTookABatchForAWhileStartsAnother() async throws {
        let clock = ManualClock()
        let queue = Self.queue(clock), writer = HeldWriter()
        var answers: [Task<[String], Never>] = []
        var batches = writer.batches.makeAsyncIterator()
        await Self.submit([(0, 1)], to: queue, writer: writer, answers: &answers)
        _ = await batches.next()  // held: as if waiting on a lock
        clock.advance(by: PostgresSendQueue.stalledAfter - .milliseconds(1))
        await Self.submit([(1, 1)], to: queue, writer: writer, answers: &answers)
        #expect(queue.load.running == 1, "not stuck yet")
        clock.advance(by: .milliseconds(1))
        await Self.submit([(2, 1)], to: queue, writer: writer, answers: &answers)
        #expect(queue.load.running == 2, "the runner has been in its batch for the whole time: another starts")
        await Self.submit([(3, 1)], to: queue, writer: writer, answers: &answers)
        #expect(queue.load.running == 2, "a runner was just started: not another before it too is in a batch for a while")
        let taken = await batches.next()?.map(\.text) ?? []
        #expect(taken == ["1.0", "2.0"] || taken == ["1.0", "2.0", "3.0"], "it takes what waits (3 too if it came first)")
        writer.finish()
        for (caller, answer) in answers.enumerated() { #expect(await answer.value == ["\(caller).0"]) }
    }

    @Test func rule5ABatchThatFailsWholeFailsEachOfItsSends() async throws {
        let queue = Self.queue(), writer = HeldWriter(failing: true)
        var answers: [Task<[String], Never>] = []
        var batches = writer.batches.makeAsyncIterator()
        await Self.submit([(0, 2)], to: queue, writer: writer, answers: &answers)
        _ = await batches.next()
        writer.finish()
        #expect(await answers[0].value == ["failed", "failed"])
    }
}
