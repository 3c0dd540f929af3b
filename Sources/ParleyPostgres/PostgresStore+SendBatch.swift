import ParleyCore
import ParleyStore
import PostgresNIO

/// Plain direct sends written together (``PostgresSendQueue``, ``PostgresSendBatchFunction``).
extension PostgresStore {
    /// Sends one after another, each as ``send(_:now:)``, with the runs of plain ones written
    /// together through ``PostgresSendQueue`` (in order, in one batch).
    public func send(_ batch: [NewMessage], now: Timestamp) async -> [Result<SendOutcome, any Error>] {
        var results: [Result<SendOutcome, any Error>] = []
        results.reserveCapacity(batch.count)
        var rest = batch[...]
        while let first = rest.first {
            let plain = rest.prefix(while: Self.isPlain)
            if plain.isEmpty {
                results.append(await Self.catching { try await self.send(first, now: now) })
                rest = rest.dropFirst()
            } else {
                results += await sendPlain(Array(plain), now: now)
                rest = rest.dropFirst(plain.count)
            }
        }
        return results
    }

    static func catching<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }

    /// A direct send with no reply and no files: all `parley_send` does, so it can be batched.
    static func isPlain(_ new: NewMessage) -> Bool { !isGroupSend(new) && new.replyToSeq == nil && new.attachments.isEmpty }

    static func isGroupSend(_ new: NewMessage) -> Bool { if case .conversation(let id) = new.target { id.isGroup } else { false } }

    static func directTarget(of new: NewMessage) -> (ConversationID, UserID?) {
        switch new.target {
        case .conversation(let id): (id, nil)
        case .user(let user): (.direct(new.sender, user), user)
        }
    }

    /// Plain direct sends through the queue (one batch, in order); each answered as ``send(_:now:)``.
    func sendPlain(_ sends: [NewMessage], now: Timestamp) async -> [Result<SendOutcome, any Error>] {
        let elements = sends.map { new in
            let (conversation, recipient) = Self.directTarget(of: new)
            return Prepared.SendBatch.Element(
                sender: new.sender.rawValue, clientId: new.clientId.rawValue, conversation: conversation.rawValue, recipient: recipient?.rawValue,
                text: new.text, now: now.milliseconds, messageId: MessageID.random().rawValue)
        }
        let rows = await sendQueue.write(elements) { try await self.writeBatch($0) }
        var results: [Result<SendOutcome, any Error>] = []
        for (new, row) in zip(sends, rows) {
            results.append(await Self.catching { try await self.outcome(of: new, try row.get(), quote: nil, attachments: [], now: now) })
        }
        return results
    }

    /// One transaction of ``PostgresSendQueue``: the batch function in a procedure that commits
    /// before it answers (``committedCall(_:)``), run again whole when it lost a race. When an element broke a send rule (nothing of the
    /// batch was written: ``PostgresSendBatchFunction`` rule 2), that send is refused and the rest
    /// run again, in order; bounded by the batch's size.
    func writeBatch(_ sends: [Prepared.SendBatch.Element]) async throws -> [Result<Prepared.Send.Row, any Error>] {
        var results = [Result<Prepared.Send.Row, any Error>](repeating: .failure(StoreError.conversationNotFound), count: sends.count)
        var pending = Array(sends.indices)
        while !pending.isEmpty {
            let statement = Prepared.SendBatch(elements: pending.map { sends[$0] }, node: nodeID)
            let rows = try await committedCall(PostgresQuery(unsafeSQL: Prepared.SendBatch.sql, binds: try statement.makeBindings()))
                .flatMap { try statement.rows(from: $0) }
            if let refused = rows.last, case .failure(let rule) = refused.result {
                guard (1...pending.count).contains(refused.index) else { throw rule }  // not an element's: the batch's
                results[pending[refused.index - 1]] = .failure(rule)
                pending.remove(at: refused.index - 1)
                continue
            }
            for row in rows where (1...pending.count).contains(row.index) { results[pending[row.index - 1]] = row.result.mapError { $0 } }
            return results
        }
        return results
    }
}
