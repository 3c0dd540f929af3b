import Foundation
import ParleyCore

/// What goes out on the live connection: the outbox's messages and the receipts.
extension ParleyClient {
    /// Sends what the outbox allows now (rule 2 of ``MessageOutbox``).
    func flushOutbox() {
        guard connectionState == .online, connection != nil else { return }
        for entry in outbox.takeSendable(now: .now()) {
            let useRecipient = entry.recipientId != nil && conversations[entry.conversationId] == nil
            sendExpectingAnswer(
                .send(
                    SendRequest(
                        clientId: entry.clientId, conversationId: useRecipient ? nil : entry.conversationId,
                        recipientId: useRecipient ? entry.recipientId : nil, text: entry.text)))
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
