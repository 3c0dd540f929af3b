import ParleyCore
import ParleyStore

extension Messenger {
    /// Validates and stores a message action (docs/protocol.md "Message actions"); returns after
    /// commit, having pushed its events. Actions spend the sender's message budget.
    func act(_ request: MessageActionRequest, by actor: UserID) async throws -> ActionOutcome {
        if let wait = sendLimiter.acquire(actor.rawValue) {
            throw ParleyError(.rateLimited, "Too many messages; try again in \(wait) s.", retryAfter: wait)
        }
        let action: NewMessageAction
        do {
            action = try Self.validated(request, by: actor, editWindow: editWindow, deleteWindow: deleteWindow)
        } catch {
            // Someone outside the conversation learns nothing about it, not even that their request was malformed.
            guard let id = ConversationID(validating: request.conversationId.rawValue), try await store.memberIDs(of: id).contains(actor) else {
                throw StoreError.conversationNotFound
            }
            throw error
        }
        let outcome = try await store.act(action, now: .now())
        health.writeSucceeded()
        if !outcome.duplicate { hub.publish(outcome.deliveries) }
        return outcome
    }

    /// The action to store, or why not: each kind takes exactly its own argument.
    static func validated(_ request: MessageActionRequest, by actor: UserID, editWindow: Duration, deleteWindow: Duration) throws -> NewMessageAction {
        guard let clientId = ClientMessageID(validating: request.clientId.rawValue) else {
            throw ParleyError(.invalidClientId, "clientId must be a UUID.")
        }
        guard let conversation = ConversationID(validating: request.conversationId.rawValue) else { throw StoreError.conversationNotFound }
        guard request.seq >= 1 else { throw StoreError.messageNotFound }
        let change: NewMessageAction.Change
        switch request.kind {
        case .react:
            guard request.text == nil else { throw ParleyError(.invalidAction, "A reaction takes an emoji, not text.") }
            change = .react(try request.emoji.map { try Validation.reactionEmoji($0).get() })
        case .edit:
            guard request.emoji == nil, let text = request.text else { throw ParleyError(.invalidAction, "An edit takes the new text.") }
            // An empty text may remove a caption; the store refuses it for a message without files.
            change = .edit(Validation.isBlankMessageText(text) ? "" : try Validation.messageText(text).get())
        case .delete, .hide:
            guard request.emoji == nil, request.text == nil else { throw ParleyError(.invalidAction, "A delete takes no emoji or text.") }
            change = request.kind == .delete ? .delete : .hide
        }
        return NewMessageAction(
            actor: actor, clientId: clientId, conversation: conversation, seq: request.seq, change: change,
            editWindowMilliseconds: Self.milliseconds(editWindow), deleteWindowMilliseconds: Self.milliseconds(deleteWindow))
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}
