import Foundation
import ParleyCore
import ParleyStore
import PostgresNIO
import Synchronization

/// Plain sends (direct, no reply, no files) from many callers written together: one transaction,
/// one round trip and one commit for a batch (``PostgresSendBatchFunction``), as SQLite's
/// group commit does for every write.
///
/// Rules (``SendQueueTests``, ``SendQueueLockTests``; ``SendBatchConformanceTests`` and the rest of the conformance suite, on PostgreSQL):
/// 1. A caller's sends (one connection's pipeline) stay together and in order in one batch: a
///    batch is whole callers' groups, so their order is kept by the batch's order.
/// 2. A batch is whatever groups wait when a runner is free, up to ``maxBatch`` sends (one group
///    larger than that runs alone); when nothing is being written a batch is the one send that
///    came, so latency is one transaction, not a timer.
/// 3. One runner writes while fewer than ``maxBatch`` sends wait: sends that arrive during its
///    transaction share the next one. Another starts, up to ``runners``, when a whole batch waits,
///    or when a send arrives and no runner has taken a batch for ``stalledAfter`` (a batch waiting
///    on a lock does not hold up the node's other sends for long). (At 1,000 msgs/s three runners
///    each wrote batches of one or two sends; one runner wrote fewer, larger ones, for a quarter
///    less PostgreSQL CPU per message and a third lower latency: docs/benchmarks.md. A backlog, as
///    at the maximum rate, still gets three: one alone wrote 30 % fewer.)
/// 4. Different batches never hold one caller's sends, so their commit order does not matter to
///    anyone's order.
/// 5. Each send gets its own answer, only after the batch committed; a send that breaks a rule is
///    refused alone (the rest of the batch is then run again without it); a batch that fails as a
///    whole (an outage) fails each of its sends with that error, and a lost race (deadlock, a client
///    id's unique key) runs the batch again.
final class PostgresSendQueue: Sendable {
    /// Sends in one batch at most: its locks are held until it commits.
    static let maxBatch = 48
    static let runners = 3
    /// How long the runners may all be in their batches before a new send starts another.
    static let stalledAfter = Duration.milliseconds(20)

    typealias Answers = [Result<Prepared.Send.Row, any Error>]

    struct Group: Sendable {
        let sends: [Prepared.SendBatch.Element]
        let answer: @Sendable (Answers) -> Void
    }

    private struct State {
        var waiting: [Group] = []
        var waitingSends = 0
        var running = 0
        var received = 0
        /// When a runner last took a batch.
        var lastTaken: ContinuousClock.Instant
    }

    private let state: Mutex<State>
    private let now: @Sendable () -> ContinuousClock.Instant

    /// `now` is the clock rule 3 reads (a test's own).
    init(now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.now = now
        state = Mutex(State(lastTaken: now()))
    }

    /// Runners writing now, sends waiting for one, and groups received so far (for tests).
    var load: (running: Int, waitingSends: Int, received: Int) { state.withLock { ($0.running, $0.waitingSends, $0.received) } }

    /// Writes `sends` in the next batch and returns each one's row (or refusal) once it committed.
    /// `writer` writes one batch in one transaction (``PostgresStore/writeBatch(_:)``); a runner
    /// started by this call writes other callers' batches with it too, so every caller of one
    /// queue passes the same writer (its store's).
    func write(_ sends: [Prepared.SendBatch.Element], with writer: @escaping @Sendable ([Prepared.SendBatch.Element]) async throws -> Answers)
        async -> Answers
    {
        await withCheckedContinuation { continuation in
            let group = Group(sends: sends) { continuation.resume(returning: $0) }
            let arrived = now()
            let start = state.withLock { state in
                state.waiting.append(group)
                state.waitingSends += sends.count
                state.received += 1
                // Rule 3: a first runner at once; more for a whole batch's backlog, or when all are stuck.
                let backlog = state.waitingSends >= Self.maxBatch || arrived - state.lastTaken >= Self.stalledAfter
                guard state.running == 0 || (state.running < Self.runners && backlog) else { return false }
                state.running += 1
                state.lastTaken = arrived  // the new runner takes a batch now: not stalled until it too is in one for a while
                return true
            }
            if start { Task { await self.drain(with: writer) } }
        }
    }

    private func drain(with writer: @Sendable ([Prepared.SendBatch.Element]) async throws -> Answers) async {
        while let batch = takeBatch() {
            let sends = batch.flatMap(\.sends)
            let results: Answers
            do {
                results = try await writer(sends)
            } catch {
                results = sends.map { _ in .failure(error) }
            }
            var next = results[...]
            for group in batch {
                group.answer(Array(next.prefix(group.sends.count)))
                next = next.dropFirst(group.sends.count)
            }
        }
    }

    /// Whole groups up to ``maxBatch`` sends (at least one group); nil, and one runner fewer, when none wait.
    private func takeBatch() -> [Group]? {
        state.withLock { state in
            guard !state.waiting.isEmpty else {
                state.running -= 1
                return nil
            }
            var count = 0, taken = 0
            for group in state.waiting {
                if taken > 0 && count + group.sends.count > Self.maxBatch { break }
                count += group.sends.count
                taken += 1
            }
            let batch = Array(state.waiting.prefix(taken))
            state.waiting.removeFirst(taken)
            state.lastTaken = now()
            state.waitingSends -= count
            return batch
        }
    }
}

extension Prepared {
    /// `parley_send_batch` (``PostgresSendBatchFunction``) in `parley_send_batch_committed`
    /// (``PostgresCommittedCalls``): its rows by element, in order, as one JSON array.
    struct SendBatch {
        static let sql = "CALL parley_send_batch_committed($1, $2, $3, $4, $5, $6, $7, $8, NULL)"

        struct Element: Sendable {
            var sender: String, clientId: String, conversation: String, recipient: String?, text: String, now: Int64, messageId: String
        }

        /// An element's row: its index (1-based), and `parley_send`'s row or the rule it broke
        /// (``PostgresSendBatchFunction`` rule 2: then the batch wrote nothing).
        struct Row: Sendable {
            var index: Int
            var result: Result<Prepared.Send.Row, StoreError>
        }

        var elements: [Element], node: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 8)
            bindings.append(elements.map(\.sender))
            bindings.append(elements.map(\.clientId))
            bindings.append(elements.map(\.conversation))
            bindings.append(elements.map { $0.recipient ?? "" })  // '' is none: the function reads NULLIF
            bindings.append(elements.map(\.text))
            bindings.append(elements.map(\.now))
            bindings.append(elements.map(\.messageId))
            bindings.append(node)
            return bindings
        }

        /// The call's one row holds every element's row (NULL for a batch of none).
        func rows(from row: PostgresRow) throws -> [Row] {
            guard let json = try row.decode(String?.self) else { return [] }
            return try JSONDecoder().decode([JSONRow].self, from: Data(json.utf8)).map(\.row)
        }

        /// One element's row as the procedure writes it: `parley_send_batch`'s columns, in order, in a JSON array.
        private struct JSONRow: Decodable {
            var row: Row

            init(from decoder: any Decoder) throws {
                var c = try decoder.unkeyedContainer()
                let index = Int(try c.decode(Int32.self))
                if let state = try c.decodeIfPresent(String.self) {
                    row = Row(index: index, result: .failure(PostgresStore.storeError(sqlState: state) ?? .conversationNotFound))
                    return
                }
                let duplicate = try c.decode(Bool.self), messageId = try c.decode(String.self), seq = try c.decode(Int64.self)
                let createdAt = try c.decode(Int64.self), text = try c.decode(String.self), conversation = try c.decode(String.self)
                let formed = try c.decodeIfPresent(Bool.self), members = try c.decodeIfPresent([String].self)
                let positions = try c.decodeIfPresent([Int64].self), created = try c.decodeIfPresent(Bool.self)
                let creationPositions = try c.decodeIfPresent([Int64].self)
                let send = Prepared.Send.Row(
                    duplicate: duplicate, messageId: messageId, seq: seq, createdAt: createdAt, text: text, conversation: conversation,
                    contactsFormed: formed ?? false, members: members ?? [], positions: positions ?? [], created: created ?? false,
                    creationPositions: creationPositions ?? [])
                row = Row(index: index, result: .success(send))
            }
        }
    }
}
