import Foundation
import ParleyCore

/// Reply, react, edit, delete for everyone and delete for me (docs/protocol.md "Message actions").
///
/// Rules:
/// 1. Every action goes through the ``MessageOutbox`` (rules 8–12 there): it shows in the timeline at
///    once, goes over the live connection in order with the messages when online, waits offline,
///    survives a restart, and is applied once whatever the retries.
/// 2. What the server would refuse for sure is refused here at once, with the same code: reacting
///    with something that is not one emoji (`invalid_emoji`), editing someone else's message or
///    deleting it for everyone unless I am a group admin (`forbidden`), acting on a deleted message
///    (`message_deleted`) or a membership entry (`invalid_action`), anything in a group I left.
/// 3. The rest (the edit and delete windows, a message deleted meanwhile) is the server's to say: a
///    refused action is dropped and reported (``ClientEvent/actionFailed(_:_:)``), and the message
///    shows as the server has it.
extension ParleyClient {
    /// Writes a reply to `original` (a message of the same conversation): it carries a quote of it.
    public func reply(to original: TimelineItem, text: String) throws(Validation.Failure) {
        try send(text, in: original.conversationId, replyingTo: original)
    }

    /// Sets my reaction to `item` to `emoji` (replacing any earlier one), or clears it (`nil`).
    public func react(_ item: TimelineItem, emoji: String?) throws(Validation.Failure) {
        var chosen: String?  // as the server keeps it (a text-style ❤ gets its selector)
        if let emoji { chosen = try Validation.reactionEmoji(emoji).get() }
        try checkActable(item)
        guard !item.isDeleted else { throw Validation.Failure(.messageDeleted, "You can't react to a deleted message.") }
        queue(PendingAction(kind: .react, target: try target(of: item), emoji: chosen), on: item)
    }

    /// Changes the text of one of my messages; an empty text removes a caption from photos or files
    /// (a message without them keeps some text). A message still in the outbox that never went out
    /// is sent with the new text instead (``MessageOutbox`` rule 9).
    public func edit(_ item: TimelineItem, text: String) throws(Validation.Failure) {
        let text = !item.attachments.isEmpty && Validation.isBlankMessageText(text) ? "" : try Validation.messageText(text).get()
        try checkActable(item)
        guard item.senderId == me.id else { throw Validation.Failure(.forbidden, "You can only edit your own messages.") }
        guard !item.isDeleted else { throw Validation.Failure(.messageDeleted, "A deleted message can't be edited.") }
        guard text != item.text else { return }
        if outbox.rewrite(item.id, text: text) {
            saveOutbox()
            return
        }
        queue(PendingAction(kind: .edit, target: try target(of: item)), text: text, on: item)
    }

    /// Deletes a message for everyone: mine, or anyone's as a group admin or owner. One still in the
    /// outbox that never went out is cancelled instead (``MessageOutbox`` rule 10).
    public func deleteForEveryone(_ item: TimelineItem) throws(Validation.Failure) {
        try checkActable(item)
        let admin = myRole(in: item.conversationId) == .admin || myRole(in: item.conversationId) == .owner
        guard item.senderId == me.id || (admin && item.conversationId.isGroup) else {
            throw Validation.Failure(.forbidden, "You can only delete your own messages for everyone.")
        }
        guard !item.isDeleted else { return }
        if cancelPending(item) { return }
        queue(PendingAction(kind: .delete, target: try target(of: item)), on: item)
    }

    /// Deletes a message for me: it leaves my timeline on all my devices, nobody else's.
    public func deleteForMe(_ item: TimelineItem) throws(Validation.Failure) {
        if cancelPending(item) { return }
        queue(PendingAction(kind: .hide, target: try target(of: item)), on: item)
    }

    /// The earlier texts of an edited message, oldest first (for the sender and the members).
    public func versions(of item: TimelineItem) async throws -> [MessageVersion] {
        guard let seq = item.seq ?? (try? target(of: item))?.seq else { return [] }
        return try await api.versions(of: seq, in: item.conversationId, token: session.token)
    }

    /// Forgets every refusal in ``refusedActions`` (the interface showed them).
    public func dismissRefusedAction() {
        refusedActions = []
    }

    /// Forgets the refusals of actions in `conversation` (its chat showed them); others stay.
    public func dismissRefusedActions(in conversation: ConversationID) {
        refusedActions.removeAll { $0.entry.conversationId == conversation }
    }

    // MARK: helpers

    /// Rule 2, what every action but delete-for-me checks.
    private func checkActable(_ item: TimelineItem) throws(Validation.Failure) {
        if conversations[item.conversationId]?.leftSeq != nil { throw Validation.Failure(.forbidden, Self.notAMember) }
        guard item.entry == nil else { throw Validation.Failure(.invalidAction, "That can't be done to a group's notice.") }
    }

    /// The message an action or reply names: its seq, or its client id while it is in my outbox.
    func target(of item: TimelineItem) throws(Validation.Failure) -> MessageTarget {
        if let seq = item.seq { return .seq(seq) }
        if outbox.pendingSend(item.id) != nil { return .pending(item.id) }
        // Confirmed since the item was read.
        if let confirmed = messages[item.conversationId]?.values.first(where: { $0.clientId == item.id && $0.senderId == item.senderId }) {
            return .seq(confirmed.seq)
        }
        throw Validation.Failure(.messageNotFound, "That message is no longer here.")
    }

    /// ``MessageOutbox`` rule 10 for a message of mine that never went out.
    private func cancelPending(_ item: TimelineItem) -> Bool {
        let uploads = uploads(of: item.id)
        guard item.seq == nil, outbox.cancel(item.id) else { return false }
        abandon(uploads)
        saveOutbox()
        flushOutbox()
        return true
    }

    private func queue(_ action: PendingAction, text: String = "", on item: TimelineItem) {
        outbox.enqueue(action, text: text, conversation: item.conversationId, now: .now())
        saveOutbox()
        flushOutbox()
    }
}

/// One of my message actions the server refused: it was dropped from the outbox (``MessageOutbox`` rule 12).
public struct RefusedAction: Sendable, Equatable {
    /// The action as it was queued.
    public var entry: OutboxEntry
    /// The server's reason, safe to show.
    public var reason: String
}
