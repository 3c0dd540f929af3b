import Foundation
import ParleySDK
import ParleyCore

/// The composer: the character count, whether the text can go, sending, and typing notifications.
extension ChatViewModel {
    /// Characters as the server counts them, after the same normalization.
    public var characterCount: Int {
        Validation.normalizedMessageText(messageText).count
    }

    /// Characters left before the limit (negative when over).
    public var remainingCharacters: Int { Validation.maxMessageCharacters - characterCount }
    /// Whether to show the counter (near the limit only).
    public var showsCharacterCounter: Bool { characterCount > Validation.messageCounterThreshold }
    /// Whether the composer's text can be sent (not blank, within the limit, and I am still in the
    /// group: see ``cannotSendReason``).
    public var canSend: Bool {
        guard cannotSendReason == nil, case .success = Validation.messageText(messageText) else { return false }
        return true
    }

    /// Sends the composer's text (trimmed, validated like the server does) and clears it: as a reply
    /// while replying, as the new text of my message while editing (``startEditing(_:)``).
    public func send() {
        guard canSend else {
            if let cannotSendReason { errorMessage = cannotSendReason }
            return
        }
        if let editing { return commitEdit(editing) }
        do {
            try client.send(messageText, in: conversation, to: other?.id, replyingTo: replyingTo)
            messageText = ""
            replyingTo = nil
            errorMessage = nil
        } catch {
            errorMessage = error.message
        }
    }

    /// Sends a failed message again.
    public func retry(_ item: TimelineItem) {
        client.retry(item.id)
    }

    /// Deletes a failed message.
    public func delete(_ item: TimelineItem) {
        client.deleteFailed(item.id)
    }

    /// Typing notifications, throttled; an emptied composer stops them at once.
    func textChanged() {
        let typing = !messageText.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
        if typing {
            if lastTypingSent.map({ now().timeIntervalSince($0) >= Self.typingInterval }) ?? true {
                lastTypingSent = now()
                client.setTyping(true, in: conversation)
            }
        } else if lastTypingSent != nil {
            lastTypingSent = nil
            client.setTyping(false, in: conversation)
        }
    }
}
