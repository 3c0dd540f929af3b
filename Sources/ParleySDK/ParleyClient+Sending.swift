import Foundation
import ParleyCore

/// What goes out on the live connection: the outbox's messages and actions, and the receipts.
extension ParleyClient {
    /// Writes a message: stored locally at once as `sending`, sent when possible. `recipient` is needed
    /// only for the first message of a new conversation; `original` makes it a reply to that message
    /// (of this conversation, and not a group's notice).
    /// A group I am no longer a member of refuses at once (`forbidden`).
    public func send(
        _ text: String, in conversation: ConversationID, to recipient: UserID? = nil, replyingTo original: TimelineItem? = nil
    ) throws(Validation.Failure) {
        let text = try Validation.messageText(text).get()
        if conversations[conversation]?.leftSeq != nil { throw Validation.Failure(.forbidden, Self.notAMember) }
        var replyTo: MessageTarget?
        if let original {
            guard original.conversationId == conversation, original.entry == nil else {
                throw Validation.Failure(.messageNotFound, "You can only reply to a message of this conversation.")
            }
            replyTo = try target(of: original)
        }
        outbox.enqueue(
            text: text, conversation: conversation, recipient: conversations[conversation] == nil ? recipient : nil, replyTo: replyTo, now: .now())
        saveOutbox()
        flushOutbox()
    }

    /// Sends a failed message again (same client id: it can never be stored twice).
    public func retry(_ clientId: ClientMessageID) {
        outbox.retry(clientId)
        saveOutbox()
        flushOutbox()
    }

    /// Removes a failed message from the outbox; false if it is not (or no longer) failed.
    @discardableResult
    public func deleteFailed(_ clientId: ClientMessageID) -> Bool {
        defer { saveOutbox() }
        let uploads = uploads(of: clientId)
        guard outbox.delete(clientId) else { return false }
        abandon(uploads)
        return true
    }

    /// Sends what the outbox allows now (rules 2 and 8 of ``MessageOutbox``): messages as `send`
    /// frames, actions as `action` frames whose `ref` is the action's client id (the `acted` answer
    /// echoes it). The outbox is saved first, so an entry on the wire is known to have gone out.
    func flushOutbox() {
        pumpUploads()
        guard connectionState == .online, connection != nil else { return }
        let ready = outbox.takeSendable(now: .now())
        guard !ready.isEmpty else { return }
        saveOutbox()
        for entry in ready {
            if let action = entry.action {
                guard let seq = action.target.seq else { continue }  // never: waiting entries are not taken
                sendExpectingAnswer(
                    .action(
                        MessageActionRequest(
                            ref: entry.clientId.rawValue, clientId: entry.clientId, conversationId: entry.conversationId, seq: seq,
                            kind: action.kind, emoji: action.emoji, text: action.kind == .edit ? entry.text : nil)))
                continue
            }
            let useRecipient = entry.recipientId != nil && conversations[entry.conversationId] == nil
            sendExpectingAnswer(
                .send(
                    SendRequest(
                        clientId: entry.clientId, conversationId: useRecipient ? nil : entry.conversationId,
                        recipientId: useRecipient ? entry.recipientId : nil, text: entry.text, replyToSeq: entry.replyTo?.seq,
                        attachments: entry.attachments?.compactMap(\.request))))
        }
    }

    /// Wakes the outbox when its next held-back message may go.
    func scheduleOutboxRetry() {
        guard let next = outbox.nextRetry else { return }
        retryTimer?.cancel()
        let delay = max(0, Double(next.milliseconds - Timestamp.now().milliseconds) / 1000)
        retryTimer = Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(Int64(delay * 1000) + 10))
            guard !Task.isCancelled else { return }
            self?.flushOutbox()
        }
    }

    /// Rule 5: delivered receipts are batched briefly, then sent with the read ones.
    func scheduleDeliveredReceipts() {
        guard deliveredTimer == nil else { return }
        deliveredTimer = Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(50))
            self?.deliveredTimer = nil
            self?.flushReceipts()
        }
    }

    func flushReceipts() {
        guard connectionState == .online, let connection else { return }
        for id in Set(deliveredPending.keys).union(readPending.keys) {
            connection.send(.receipt(ref: nil, conversationId: id, deliveredSeq: deliveredPending[id], readSeq: readPending[id]))
        }
        deliveredPending.removeAll()
        readPending.removeAll()
    }
}
