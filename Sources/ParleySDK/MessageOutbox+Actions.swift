import ParleyCore

/// Message actions in the outbox: ``MessageOutbox`` rules 8–12.
extension MessageOutbox {
    /// Rule 8: a new action at the end of the outbox. `text` is an edit's new text.
    @discardableResult
    public mutating func enqueue(_ action: PendingAction, text: String = "", conversation: ConversationID, now: Timestamp) -> OutboxEntry {
        var entry = OutboxEntry(clientId: .random(), conversationId: conversation, recipient: nil, text: text, createdAt: now)
        entry.action = action
        entries.append(entry)
        return entry
    }

    /// Rule 9: gives a message that never went out (or was refused) its new text. False when the
    /// server may hold it already (then the edit is an action waiting for its seq) or it is not here.
    public mutating func rewrite(_ clientId: ClientMessageID, text: String) -> Bool {
        guard let index = rewritableIndex(clientId) else { return false }
        entries[index].text = text
        return true
    }

    /// Rule 10: cancels a message that never went out (or was refused), with what waits for it.
    /// False when the server may hold it already (then the delete waits for its seq) or it is not here.
    public mutating func cancel(_ clientId: ClientMessageID) -> Bool {
        guard let index = rewritableIndex(clientId) else { return false }
        entries.remove(at: index)
        release(clientId)
        return true
    }

    /// The actions waiting in a conversation, in the order taken.
    public func pendingActions(in conversation: ConversationID) -> [OutboxEntry] {
        entries.filter { $0.conversationId == conversation && !$0.isSend }
    }

    /// A send still in the outbox, by client id.
    public func pendingSend(_ clientId: ClientMessageID) -> OutboxEntry? {
        entries.first { $0.clientId == clientId && $0.isSend }
    }

    /// A send that never reached the server for sure: not sent yet, or refused.
    private func rewritableIndex(_ clientId: ClientMessageID) -> Int? {
        guard let index = entries.firstIndex(where: { $0.clientId == clientId && $0.isSend }), !inFlight.contains(clientId) else { return nil }
        if case .failed = entries[index].state { return index }
        return entries[index].wasSent ? nil : index
    }

    /// Rule 11: the entries waiting for a confirmed message learn its seq.
    mutating func resolve(_ clientId: ClientMessageID, to seq: Int64) {
        for index in entries.indices {
            if entries[index].replyTo == .pending(clientId) { entries[index].replyTo = .seq(seq) }
            if entries[index].action?.target == .pending(clientId) { entries[index].action?.target = .seq(seq) }
        }
    }

    /// Rule 10: a message removed unsent takes the actions waiting for it along; replies to it lose the quote.
    mutating func release(_ clientId: ClientMessageID) {
        entries.removeAll { $0.action?.target == .pending(clientId) }
        for index in entries.indices where entries[index].replyTo == .pending(clientId) { entries[index].replyTo = nil }
    }
}

extension OutboxEntry {
    /// Rule 11: it names a message still in the outbox, so it cannot go yet.
    var waitsForPendingMessage: Bool {
        if case .pending? = replyTo { return true }
        if case .pending? = action?.target { return true }
        return false
    }
}
