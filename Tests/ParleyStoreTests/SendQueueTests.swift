@testable import ParleyPostgres
import ParleyStore
import Synchronization
import Testing

/// ``PostgresSendQueue``'s rules 2, 3 and 5, with a writer that holds each batch until released.
@Suite struct SendQueueTests {
    typealias Element = Prepared.SendBatch.Element

    /// Records each batch it is given and answers it only when the test releases it.
    final class HeldWriter: Sendable {
        private let held = Mutex<[CheckedContinuation<Void, Never>]>([])
        let batches: AsyncStream<[Element]>
        private let batchesIn: AsyncStream<[Element]>.Continuation
        let failing: Bool

        init(failing: Bool = false) {
            (batches, batchesIn) = AsyncStream.makeStream()
            self.failing = failing
        }

        func write(_ sends: [Element]) async throws -> PostgresSendQueue.Answers {
            await withCheckedContinuation { continuation in
                held.withLock { $0.append(continuation) }
                batchesIn.yield(sends)
            }
            if failing { throw StoreError.storageUnavailable }
            return sends.map { send in
                .success(
                    Prepared.Send.Row(
                        duplicate: false, messageId: send.messageId, seq: 1, createdAt: send.now, text: send.text,
                        conversation: send.conversation, contactsFormed: false, members: [], positions: [], created: false, creationPositions: []))
            }
        }

        func releaseAll() {
            let released = held.withLock { held in
                defer { held = [] }
                return held
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
        writer.releaseAll()
        for (caller, answer) in answers.enumerated() { #expect(await answer.value == ["\(caller).0"]) }
        #expect(queue.load.running == 0)
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
        writer.releaseAll()
        let counts = [1, 47, 1, 48, 48, 2]
        for (caller, answer) in answers.enumerated() { #expect(await answer.value == (0..<counts[caller]).map { "\(caller).\($0)" }) }
        #expect(queue.load.running == 0 && queue.load.waitingSends == 0)
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
        #expect(await batches.next()?.map(\.text) == ["1.0", "2.0"], "and takes what waits")
        writer.releaseAll()
        for (caller, answer) in answers.enumerated() { #expect(await answer.value == ["\(caller).0"]) }
    }

    @Test func rule5ABatchThatFailsWholeFailsEachOfItsSends() async throws {
        let queue = Self.queue(), writer = HeldWriter(failing: true)
        var answers: [Task<[String], Never>] = []
        var batches = writer.batches.makeAsyncIterator()
        await Self.submit([(0, 2)], to: queue, writer: writer, answers: &answers)
        _ = await batches.next()
        writer.releaseAll()
        #expect(await answers[0].value == ["failed", "failed"])
    }
}
