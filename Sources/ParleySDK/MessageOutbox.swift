import ParleyCore

/// The messages the user wrote that the server has not confirmed, and the rules for sending them.
///
/// Rules:
/// 1. A message is stored locally first, with status `sending` and a fresh client id, before any
///    network use (the caller persists ``entries`` after every change).
/// 2. It is sent as soon as possible, in order per conversation: at most one message per conversation
///    is in flight, and the next one goes when the previous is confirmed.
/// 3. A lost connection puts in-flight messages back in line; they are sent again after reconnecting
///    (the server's idempotency on client id makes repeats safe).
/// 4. A transient refusal (rate limited, server unavailable or failing) keeps the message `sending` and
///    retries it after a backoff (1 s, 2 s, 4 s … up to 60 s) that also holds back later messages of
///    that conversation, so order is kept.
/// 5. Any other refusal marks it `failed` with the server's reason; it no longer blocks its
///    conversation. ``retry(_:)`` makes it `sending` again; ``delete(_:)`` removes it.
/// 6. Messages still `sending` when the app was killed are loaded with the outbox and sent on start.
/// 7. A confirmation (`sent` ack, or the message arriving on the stream) removes the entry.
public struct MessageOutbox: Sendable, Equatable {
    /// Every unconfirmed message, in the order written.
    public private(set) var entries: [OutboxEntry]
    private var inFlight: Set<ClientMessageID> = []

    /// An outbox holding `entries` (from the local store after a restart: all are sent again).
    public init(entries: [OutboxEntry] = []) {
        self.entries = entries
    }

    /// Rule 1: a new `sending` entry at the end.
    @discardableResult
    public mutating func enqueue(text: String, conversation: ConversationID, recipient: UserID?, now: Timestamp) -> OutboxEntry {
        let entry = OutboxEntry(
            clientId: .random(), conversationId: conversation, recipient: recipient, text: text, createdAt: now)
        entries.append(entry)
        return entry
    }

    /// Rules 2 and 4: the entries to send now, marked in flight.
    public mutating func takeSendable(now: Timestamp) -> [OutboxEntry] {
        var blocked: Set<ConversationID> = Set(entries.filter { inFlight.contains($0.clientId) }.map(\.conversationId))
        var ready: [OutboxEntry] = []
        for entry in entries where entry.state == .sending && !blocked.contains(entry.conversationId) {
            blocked.insert(entry.conversationId)
            if let retryAt = entry.retryAt, retryAt > now { continue }
            inFlight.insert(entry.clientId)
            ready.append(entry)
        }
        return ready
    }

    /// When the earliest held-back entry may go (to schedule the next attempt).
    public var nextRetry: Timestamp? {
        entries.filter { $0.state == .sending }.compactMap(\.retryAt).min()
    }

    /// Rule 3.
    public mutating func connectionLost() {
        inFlight.removeAll()
    }

    /// Rule 7. Returns the entry that was confirmed, if it was here.
    @discardableResult
    public mutating func confirm(_ clientId: ClientMessageID) -> OutboxEntry? {
        inFlight.remove(clientId)
        guard let index = entries.firstIndex(where: { $0.clientId == clientId }) else { return nil }
        return entries.remove(at: index)
    }

    /// Rules 4 and 5.
    public mutating func refuse(_ clientId: ClientMessageID, code: ErrorCode, message: String, now: Timestamp) {
        inFlight.remove(clientId)
        guard let index = entries.firstIndex(where: { $0.clientId == clientId }) else { return }
        if Self.isTransient(code) {
            entries[index].attempts += 1
            let delay = min(60, 1 << min(entries[index].attempts - 1, 6))
            entries[index].retryAt = now.adding(seconds: Double(delay))
        } else {
            entries[index].state = .failed(reason: message)
        }
    }

    /// Rule 5: a failed message is sent again.
    public mutating func retry(_ clientId: ClientMessageID) {
        guard let index = entries.firstIndex(where: { $0.clientId == clientId }), entries[index].state != .sending else { return }
        entries[index].state = .sending
        entries[index].attempts = 0
        entries[index].retryAt = nil
    }

    /// Rule 5: only failed messages can be deleted (one in flight might still be stored).
    @discardableResult
    public mutating func delete(_ clientId: ClientMessageID) -> Bool {
        guard let index = entries.firstIndex(where: { $0.clientId == clientId }), entries[index].state != .sending else { return false }
        entries.remove(at: index)
        return true
    }

    /// The conversation's unconfirmed messages, in the order written.
    public func pending(in conversation: ConversationID) -> [OutboxEntry] {
        entries.filter { $0.conversationId == conversation }
    }

    /// Whether the message was sent on the current connection and awaits its answer.
    public func isInFlight(_ clientId: ClientMessageID) -> Bool { inFlight.contains(clientId) }

    static func isTransient(_ code: ErrorCode) -> Bool {
        [.rateLimited, .unavailable, .storageUnavailable, .internalError].contains(code)
    }
}

extension OutboxEntry {
    init(clientId: ClientMessageID, conversationId: ConversationID, recipient: UserID?, text: String, createdAt: Timestamp) {
        self.init(
            clientId: clientId, conversationId: conversationId, recipientId: recipient, text: text, createdAt: createdAt,
            state: .sending, attempts: 0, retryAt: nil)
    }
}
