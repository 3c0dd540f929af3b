import ParleyCore
import ParleyStore

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
    private let clock = ContinuousClock()

    /// Validates and stores a message; returns after commit (guarantee 3), having pushed the new
    /// events to live connections.
    /// - Parameter origin: the connection the send came in on, which is not sent the message's
    ///   event in the sender's stream (its ack stands in for it, at ``SendOutcome/sendersPosition``).
    func send(_ request: SendRequest, from sender: UserID, origin: ClientConnection? = nil) async throws -> SendOutcome {
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
            try await limitNewConversations(sender, with: id)
            target = .user(id)
        default:
            throw ParleyError(.invalidJSON, "Give exactly one of conversationId and recipientId.")
        }
        let text = try Validation.messageText(request.text).get()
        let start = clock.now
        let outcome = try await store.send(NewMessage(sender: sender, clientId: clientId, target: target, text: text), now: .now())
        metrics.sendDuration.recordNanoseconds(Int64((clock.now - start) / .nanoseconds(1)))
        health.writeSucceeded()
        if outcome.duplicate {
            metrics.duplicateSends.increment()
        } else {
            metrics.messagesSent.increment()
            hub.publish(outcome.deliveries, answered: origin.flatMap { origin in outcome.sendersPosition.map { (origin, $0) } })
            hub.stopTyping(user: sender, in: outcome.message.conversationId)
            if outcome.contactsFormed {
                let members = try await store.memberIDs(of: outcome.message.conversationId)
                try? await PresenceAnnouncer(store: store, hub: hub).introduce(members)
            }
        }
        return outcome
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
        let outcome = try await store.updateReceipt(in: id, member: member, deliveredSeq: deliveredSeq, readSeq: readSeq, now: .now())
        hub.publish(outcome.deliveries)
        return outcome.receipt
    }
}

extension SendOutcome {
    /// The message's position in its sender's stream (nil for a duplicate: nothing new was written).
    var sendersPosition: Int64? {
        deliveries.first { delivery in
            guard delivery.recipient == message.senderId, case .message(let stored) = delivery.event.payload else { return false }
            return stored.id == message.id
        }?.event.position
    }
}
