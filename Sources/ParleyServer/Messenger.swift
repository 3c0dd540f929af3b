import ParleyCore
import ParleyStore
import Metrics

/// The one path by which messages, conversations and receipts change, used by REST and WebSocket
/// alike so both have the same semantics: rate limit, validate, commit, then fan out.
struct Messenger: Sendable {
    let store: any ParleyStore
    let hub: ConnectionHub
    let sendLimiter: RateLimiter
    /// New conversations per user: starting chats with strangers is what spam does.
    let conversationLimiter: RateLimiter
    let metrics: ServerMetrics
    let health: StorageHealth
    let logLimiter: LogLimiter
    /// How long the sender may edit, and delete for everyone, what they sent.
    let editWindow: Duration
    let deleteWindow: Duration
    private let clock = ContinuousClock()

    /// Validates and stores a message; returns after commit (guarantee 3), having pushed the new
    /// events to live connections.
    func send(_ request: SendRequest, from sender: UserID) async throws -> SendOutcome {
        var answer: Result<SendOutcome, any Error> = .failure(CancellationError())
        await send([request], from: sender) { _, result in answer = result }
        return try answer.get()
    }

    /// Sends that came in a row on one connection: each is rate-limited and validated on its own,
    /// the valid ones are stored as one batch (committed in order), and each is answered in order
    /// through `answer`, right after its events were pushed.
    /// - Parameter origin: the connection the sends came in on, which is not sent a message's event
    ///   in the sender's stream (its ack stands in for it, at ``SendOutcome/sendersStep``).
    func send(
        _ requests: [SendRequest], from sender: UserID, origin: ClientConnection? = nil,
        answer: (SendRequest, Result<SendOutcome, any Error>) -> Void
    ) async {
        var refused: [Int: any Error] = [:]
        var batch: [NewMessage] = []
        batch.reserveCapacity(requests.count)
        // The first send to a new recipient spends a new-conversation token and creates the
        // conversation when stored; the ones after it in the batch go to that conversation.
        var newRecipients: Set<UserID> = []
        for (index, request) in requests.enumerated() {
            do {
                batch.append(try await validated(request, from: sender, newRecipients: &newRecipients))
            } catch {
                refused[index] = error
            }
        }
        let start = clock.now
        let results: [Result<SendOutcome, any Error>] = batch.isEmpty ? [] : await store.send(batch, now: .now())
        var stored = results.makeIterator()
        let waited = Int64((clock.now - start) / .nanoseconds(1))
        for (index, request) in requests.enumerated() {
            if let error = refused[index] {
                answer(request, .failure(error))
                continue
            }
            guard let result = stored.next() else { break }
            if case .success(let outcome) = result {
                metrics.sendDuration.recordNanoseconds(waited)
                health.writeSucceeded()
                await push(outcome, origin: origin)
            }
            answer(request, await explained(result, of: request, from: sender))
        }
    }

    /// A send to a group I left or was removed from says why (``ParleyStore/explainingDeparture(_:from:for:)``).
    private func explained(_ result: Result<SendOutcome, any Error>, of request: SendRequest, from sender: UserID) async -> Result<
        SendOutcome, any Error
    > {
        guard case .failure(let error) = result, let group = request.conversationId else { return result }
        return .failure(await store.explainingDeparture(error, from: group, for: sender))
    }

    /// Rate limit and validation: the message to store, or why not.
    private func validated(_ request: SendRequest, from sender: UserID, newRecipients: inout Set<UserID>) async throws -> NewMessage {
        if let wait = sendLimiter.acquire(sender.rawValue) {
            throw ParleyError(.rateLimited, "Too many messages; try again in \(wait) s.", retryAfter: wait)
        }
        guard let clientId = ClientMessageID(validating: request.clientId.rawValue) else {
            throw ParleyError(.invalidClientId, "clientId must be a UUID.")
        }
        let target: SendTarget
        switch (request.conversationId, request.recipientId) {
        case (let conversation?, nil):
            guard let id = ConversationID(validating: conversation.rawValue) else { throw StoreError.conversationNotFound }
            target = .conversation(id)
        case (nil, let recipient?):
            guard let id = UserID(validating: recipient.rawValue) else { throw StoreError.userNotFound }
            if !newRecipients.contains(id) {
                try await limitNewConversations(sender, with: id)
                newRecipients.insert(id)
            }
            target = .user(id)
        default:
            throw ParleyError(.invalidJSON, "Give exactly one of conversationId and recipientId.")
        }
        let attachments = try AttachmentCheck.validated(request.attachments ?? [])
        // With attachments the text is a caption, which may be empty.
        let text = !attachments.isEmpty && Validation.isBlankMessageText(request.text) ? "" : try Validation.messageText(request.text).get()
        var mentionNames: [String] = []
        if case .conversation(let id) = target, id.isGroup { mentionNames = Validation.mentionedUsernames(in: text) }
        if let reply = request.replyToSeq, reply < 1 { throw StoreError.messageNotFound }
        return NewMessage(
            sender: sender, clientId: clientId, target: target, text: text, mentionNames: mentionNames, replyToSeq: request.replyToSeq,
            attachments: attachments)
    }

    /// Fans a stored message out to live connections (nothing for a duplicate: it went out before).
    private func push(_ outcome: SendOutcome, origin: ClientConnection?) async {
        guard !outcome.duplicate else {
            metrics.duplicateSends.increment()
            return
        }
        metrics.messagesSent.increment()
        hub.publish(outcome.deliveries, answered: origin.flatMap { origin in outcome.sendersStep.map { (origin, $0.position) } })
        hub.stopTyping(user: outcome.message.senderId, in: outcome.message.conversationId)
        if outcome.contactsFormed, let members = try? await store.memberIDs(of: outcome.message.conversationId) {
            try? await PresenceAnnouncer(store: store, hub: hub).introduce(members)
        }
    }

    /// Finds or creates the direct conversation with `other`.
    /// Presence is not shared yet: that waits until both have written (``SendOutcome/contactsFormed``).
    func startConversation(_ user: UserID, with other: UserID) async throws -> ConversationOutcome {
        try await limitNewConversations(user, with: other)
        let outcome = try await store.createDirectConversation(between: user, and: other, now: .now())
        hub.publish(outcome.deliveries)
        return outcome
    }

    /// Spends one of the user's new-conversation tokens, unless the conversation exists already.
    private func limitNewConversations(_ user: UserID, with other: UserID) async throws {
        guard user != other, try await store.memberIDs(of: .direct(user, other)).isEmpty else { return }
        if let wait = conversationLimiter.acquire(user.rawValue) {
            throw ParleyError(.rateLimited, "Too many new conversations; try again in \(wait) s.", retryAfter: wait)
        }
    }

    /// Moves the user's cursors forward; negative values are refused.
    func updateReceipt(_ conversation: ConversationID, member: UserID, deliveredSeq: Int64?, readSeq: Int64?) async throws -> ReceiptUpdate {
        guard deliveredSeq != nil || readSeq != nil else {
            throw ParleyError(.invalidCursor, "Give deliveredSeq, readSeq or both.")
        }
        guard (deliveredSeq ?? 0) >= 0, (readSeq ?? 0) >= 0 else { throw ParleyError(.invalidCursor, "Cursors cannot be negative.") }
        guard let id = ConversationID(validating: conversation.rawValue) else { throw StoreError.conversationNotFound }
        let outcome: ReceiptOutcome
        do {
            outcome = try await store.updateReceipt(in: id, member: member, deliveredSeq: deliveredSeq, readSeq: readSeq, now: .now())
        } catch {
            throw await store.explainingDeparture(error, from: id, for: member)
        }
        hub.publish(outcome.deliveries)
        return outcome.receipt
    }
}

extension SendOutcome {
    /// The message's place in its sender's stream (nil for a duplicate: nothing new was written).
    var sendersStep: StreamStep? {
        deliveries.first { delivery in
            guard delivery.recipient == message.senderId, case .message(let stored) = delivery.event.payload else { return false }
            return stored.id == message.id
        }.map { StreamStep(position: $0.event.position, previous: $0.previous) }
    }
}
