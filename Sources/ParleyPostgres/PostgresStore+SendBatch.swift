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
            let plain = rest.prefix { Self.isPlain($0) && !Self.isGroupSend($0) }
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
    static func isPlain(_ new: NewMessage) -> Bool { new.replyToSeq == nil && new.attachments.isEmpty }

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
        let rows = await sendQueue.write(elements, on: self)
        var results: [Result<SendOutcome, any Error>] = []
        for (new, row) in zip(sends, rows) {
            results.append(await Self.catching { try await self.outcome(of: new, try row.get(), quote: nil, attachments: [], now: now) })
        }
        return results
    }

    /// One transaction of ``PostgresSendQueue``: the batch function between `BEGIN` and `COMMIT`,
    /// run again whole when it lost a race; when an element broke a send rule (the batch rolled
    /// back), each element alone, in order (``PostgresSendBatchFunction`` rule 2).
    func writeBatch(_ sends: [Prepared.SendBatch.Element]) async throws -> [Result<Prepared.Send.Row, any Error>] {
        let statement = Prepared.SendBatch(elements: sends, node: nodeID)
        let rows: [Prepared.SendBatch.Row]
        do {
            rows = try await transaction { connection in
                try await connection.execute(statement, logger: self.logger).reduce(into: [Prepared.SendBatch.Row]()) { $0.append($1) }
            }
        } catch is StoreError where sends.count > 1 {
            var results: [Result<Prepared.Send.Row, any Error>] = []
            for element in sends { results.append(await Self.catching { try await self.writeAlone(element) }) }
            return results
        }
        var results = [Result<Prepared.Send.Row, any Error>](repeating: .failure(StoreError.conversationNotFound), count: sends.count)
        for row in rows where (1...sends.count).contains(row.index) { results[row.index - 1] = .success(row.row) }
        return results
    }

    /// One element in a transaction of its own (`parley_send`).
    private func writeAlone(_ element: Prepared.SendBatch.Element) async throws -> Prepared.Send.Row {
        let statement = Prepared.Send(
            sender: element.sender, clientId: element.clientId, conversation: element.conversation, recipient: element.recipient,
            text: element.text, now: element.now, messageId: element.messageId, node: nodeID)
        let row = try await transaction { connection in
            try await connection.execute(statement, logger: self.logger).reduce(into: [Prepared.Send.Row]()) { $0.append($1) }.first
        }
        guard let row else { throw StoreError.conversationNotFound }
        return row
    }
}
