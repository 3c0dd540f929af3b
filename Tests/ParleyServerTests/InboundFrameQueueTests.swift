import ParleyCore
@testable import ParleyServer
import Synchronization
import Testing

/// ``InboundFrameQueue``'s rules, one test each, with an answering side that records what it was
/// handed and holds the first piece until the test lets it go.
@Suite struct InboundFrameQueueTests {
    final class Answers: Sendable {
        private let handed = Mutex<[String]>([])
        private let (release, releaser) = AsyncStream.makeStream(of: Void.self)
        private let holdFirst: Bool

        init(holdFirst: Bool = true) { self.holdFirst = holdFirst }

        var all: [String] { handed.withLock { $0 } }

        func answer(_ work: InboundFrameQueue.Work) async {
            let count = handed.withLock { handed in
                handed.append(Self.describe(work))
                return handed.count
            }
            if holdFirst, count == 1 {
                for await _ in release { break }
            }
        }

        func letFirstGo() { releaser.yield() }

        /// Waits (bounded) until `count` pieces were handed over.
        func waitUntil(count: Int) async throws {
            let deadline = ContinuousClock.now + .seconds(10)
            while all.count < count {
                guard ContinuousClock.now < deadline else { throw TestFailure("only \(all) were handed over") }
                try await Task.sleep(for: .milliseconds(5))
            }
        }

        static func describe(_ work: InboundFrameQueue.Work) -> String {
            switch work {
            case .sends(let requests): "sends " + requests.map(\.text).joined(separator: " ")
            case .one(.frame(.ping(let ref))): "ping \(ref ?? "")"
            case .one(.frame): "frame"
            case .one(.undecodable(_, let error)): "undecodable \(error.code.rawValue)"
            }
        }
    }

    final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
        func set() { value.store(true, ordering: .sequentiallyConsistent) }
    }

    static func send(_ text: String) -> InboundFrameQueue.Item {
        .frame(.send(SendRequest(clientId: .random(), conversationId: .direct(.random(), .random()), text: text)))
    }

    /// Rule 1: a run of sends is handed over as one batch; what follows waits for it, in order.
    @Test func runsOfSendsAreOneBatchAndOrderIsKept() async throws {
        let answers = Answers()
        let pipeline = InboundFrameQueue(answer: answers.answer)
        _ = pipeline.offer(Self.send("a"))
        try await answers.waitUntil(count: 1)
        for item in [
            Self.send("b"), Self.send("c"), .frame(.ping(ref: "p")), Self.send("d"), Self.send("e"),
            .undecodable(ref: nil, ParleyError(.invalidJSON, "bad")), Self.send("f"),
        ] {
            _ = pipeline.offer(item)
        }
        #expect(answers.all == ["sends a"], "nothing else is handed over while the first is being answered")
        answers.letFirstGo()
        await pipeline.drain()
        #expect(answers.all == ["sends a", "sends b c", "ping p", "sends d e", "undecodable invalid_json", "sends f"])
    }

    /// Rule 2: at `capacity` waiting frames the reader is told to stop, and `room` tells it to go on.
    @Test func aFullPipelineHoldsTheReaderBack() async throws {
        let answers = Answers()
        let roomCalled = Flag()
        let pipeline = InboundFrameQueue(capacity: 2, answer: answers.answer, room: roomCalled.set)
        _ = pipeline.offer(Self.send("a"))
        try await answers.waitUntil(count: 1)
        #expect(pipeline.offer(.frame(.ping(ref: "1"))), "one waiting frame: room for more")
        #expect(!pipeline.offer(.frame(.ping(ref: "2"))), "the second waiting frame fills it: the reader must stop")
        try await Task.sleep(for: .milliseconds(200))
        #expect(!roomCalled.isSet, "no room while the first is being answered")
        answers.letFirstGo()
        await pipeline.drain()
        #expect(roomCalled.isSet, "room is called once the waiting frames are taken")
        #expect(answers.all == ["sends a", "ping 1", "ping 2"])
    }

    /// Rules 3 and 4: drain waits for the frame being answered; afterwards the pipeline is idle
    /// and the next frame starts a new worker.
    @Test func drainWaitsForAnswersAndAnIdlePipelineStartsAgain() async throws {
        let answers = Answers()
        let pipeline = InboundFrameQueue(answer: answers.answer)
        await pipeline.drain()  // nothing handed in: returns at once
        _ = pipeline.offer(Self.send("a"))
        try await answers.waitUntil(count: 1)
        let drained = Flag()
        let drainer = Task {
            await pipeline.drain()
            drained.set()
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(!drained.isSet, "drain waits for the answer under way")
        answers.letFirstGo()
        await drainer.value
        _ = pipeline.offer(.frame(.ping(ref: "later")))
        await pipeline.drain()
        #expect(answers.all == ["sends a", "ping later"])
    }
}
