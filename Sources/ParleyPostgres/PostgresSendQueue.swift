import ParleyCore
import ParleyStore
import PostgresNIO
import Synchronization

/// Plain sends (direct, no reply, no files) from many callers written together: one transaction,
/// one round trip and one commit for a batch (``PostgresSendBatchFunction``), as SQLite's
/// group commit does for every write.
///
/// Rules (``SendBatchConformanceTests`` and the rest of the conformance suite, on PostgreSQL):
/// 1. A caller's sends (one connection's pipeline) stay together and in order in one batch: a
///    batch is whole callers' groups, so their order is kept by the batch's order.
/// 2. A batch is whatever groups wait when a runner is free, up to ``maxBatch`` sends (one group
///    larger than that runs alone); under light load a batch is one send, so latency is one
///    transaction, not a timer.
/// 3. At most ``runners`` batches are in flight at once; different batches never hold one
///    caller's sends, so their commit order does not matter to anyone's order.
/// 4. Each send gets its own answer, only after the batch committed; a send that breaks a rule is
///    refused alone (the rest of the batch is then run again without it); a batch that fails as a
///    whole (an outage) fails each of its sends with that error, and a lost race (deadlock, a client
///    id's unique key) runs the batch again.
final class PostgresSendQueue: Sendable {
    /// Sends in one batch at most: its locks are held until it commits.
    static let maxBatch = 48
    static let runners = 3

    struct Group: Sendable {
        let sends: [Prepared.SendBatch.Element]
        let answer: @Sendable ([Result<Prepared.Send.Row, any Error>]) -> Void
    }

    private struct State {
        var waiting: [Group] = []
        var running = 0
    }

    private let state = Mutex(State())

    /// Writes `sends` in the next batch and returns each one's row (or refusal) once it committed.
    func write(_ sends: [Prepared.SendBatch.Element], on store: PostgresStore) async -> [Result<Prepared.Send.Row, any Error>] {
        await withCheckedContinuation { continuation in
            let group = Group(sends: sends) { continuation.resume(returning: $0) }
            let start = state.withLock { state in
                state.waiting.append(group)
                guard state.running < Self.runners else { return false }
                state.running += 1
                return true
            }
            if start { Task { await self.drain(on: store) } }
        }
    }

    private func drain(on store: PostgresStore) async {
        while let batch = takeBatch() {
            let sends = batch.flatMap(\.sends)
            let results: [Result<Prepared.Send.Row, any Error>]
            do {
                results = try await store.writeBatch(sends)
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
            return batch
        }
    }
}

extension Prepared {
    /// `parley_send_batch` (``PostgresSendBatchFunction``): rows by element, in order.
    struct SendBatch: PostgresPreparedStatement {
        static let sql = "SELECT * FROM parley_send_batch($1, $2, $3, $4, $5, $6, $7, $8)"

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

        func decodeRow(_ row: PostgresRow) throws -> Row {
            let c = try row.decode(
                (Int32, String?, Bool?, String?, Int64?, Int64?, String?, String?, Bool?, [String]?, [Int64]?, Bool?, [Int64]?).self)
            if let state = c.1 { return Row(index: Int(c.0), result: .failure(PostgresStore.storeError(sqlState: state) ?? .conversationNotFound)) }
            guard let duplicate = c.2, let messageId = c.3, let seq = c.4, let createdAt = c.5, let text = c.6, let conversation = c.7 else {
                throw StoreError.conversationNotFound
            }
            let send = Prepared.Send.Row(
                duplicate: duplicate, messageId: messageId, seq: seq, createdAt: createdAt, text: text, conversation: conversation,
                contactsFormed: c.8 ?? false, members: c.9 ?? [], positions: c.10 ?? [], created: c.11 ?? false, creationPositions: c.12 ?? [])
            return Row(index: Int(c.0), result: .success(send))
        }
    }
}
