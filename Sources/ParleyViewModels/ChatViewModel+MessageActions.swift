import Foundation
import ParleySDK
import ParleyCore

/// Replies, reactions, edits and deletes in a chat (docs/protocol.md "Message actions").
///
/// Rules:
/// 1. Reply: ``startReply(to:)`` puts the original's quote above the composer (``composerQuote``);
///    ``cancelReply()`` takes it away; ``send()`` sends the text as a reply and ends the reply.
/// 2. Edit: ``startEditing(_:)`` (my own message, not deleted) puts its text in the composer;
///    ``send()`` saves the change, ``cancelEditing()`` drops it and empties the composer.
///    ``editLastMessage()`` (the Up arrow in an empty composer) starts editing my newest message.
///    Starting a reply ends an edit and the other way round.
/// 3. Reactions: ``toggleReaction(_:on:)`` sets mine, or takes it back when it is already mine.
/// 4. Delete for everyone is offered for my messages, and in a group to its admins and owner
///    (``canDeleteForEveryone(_:)``); delete for me for any message. Refusals show in ``errorMessage``.
/// 5. Each item shows as it is now (``display(of:)``): the tombstone, "edited", reaction chips, and
///    the quote from the current original ("Deleted message" once it is deleted).
/// 6. ``jumpToOriginal(of:)`` loads older pages until the quoted message is held, and returns it.
extension ChatViewModel {
    // MARK: intents

    /// Rule 1: the composer's next message answers `item`.
    public func startReply(to item: TimelineItem) {
        guard item.entry == nil else { return }
        if editing != nil { cancelEditing() }
        replyingTo = item
    }

    /// Rule 1.
    public func cancelReply() {
        replyingTo = nil
    }

    /// Whether I may edit `item`: my own message, not deleted, not a group's notice.
    public func canEdit(_ item: TimelineItem) -> Bool {
        item.senderId == client.me.id && !item.isDeleted && item.entry == nil && cannotSendReason == nil
    }

    /// Rule 4.
    public func canDeleteForEveryone(_ item: TimelineItem) -> Bool {
        guard !item.isDeleted, item.entry == nil, cannotSendReason == nil else { return false }
        return item.senderId == client.me.id || (isGroup && (myRole == .admin || myRole == .owner))
    }

    /// Rule 2: the composer edits `item`. False when it is not mine to edit.
    @discardableResult
    public func startEditing(_ item: TimelineItem) -> Bool {
        guard canEdit(item) else { return false }
        replyingTo = nil
        editing = item
        messageText = item.text
        return true
    }

    /// Rule 2.
    public func cancelEditing() {
        guard editing != nil else { return }
        editing = nil
        messageText = ""
    }

    /// Rule 2: edits my newest message that can be edited; false when there is none.
    @discardableResult
    public func editLastMessage() -> Bool {
        guard let last = client.timeline(conversation).last(where: canEdit) else { return false }
        return startEditing(last)
    }

    /// Saves the edit in the composer (``send()`` calls it while editing).
    func commitEdit(_ item: TimelineItem) {
        perform { try client.edit(item, text: messageText) }
        if errorMessage == nil {
            editing = nil
            messageText = ""
        }
    }

    /// Sets my reaction to `emoji`, or clears it (`nil`).
    public func react(_ item: TimelineItem, with emoji: String?) {
        perform { try client.react(item, emoji: emoji) }
    }

    /// Rule 3.
    public func toggleReaction(_ emoji: String, on item: TimelineItem) {
        let mine = display(of: item).reactions.contains { $0.emoji == emoji && $0.isMine }
        react(item, with: mine ? nil : emoji)
    }

    /// Deletes `item` for everyone (rule 4).
    public func deleteForEveryone(_ item: TimelineItem) {
        perform { try client.deleteForEveryone(item) }
        if editing?.id == item.id { cancelEditing() }
    }

    /// Deletes `item` for me only.
    public func deleteForMe(_ item: TimelineItem) {
        perform { try client.deleteForMe(item) }
        if editing?.id == item.id { cancelEditing() }
        if replyingTo?.id == item.id { cancelReply() }
    }

    /// The earlier texts of an edited message, oldest first (the info view).
    public func versions(of item: TimelineItem) async -> [MessageVersion] {
        (try? await client.versions(of: item)) ?? []
    }

    /// What to show for my actions the server refused here: the newest reason, and how many more
    /// were refused with it (``dismissActionFailure()`` hides them). Refusals in other chats wait
    /// for their own chat.
    public var actionFailure: String? {
        let refused = client.refusedActions.filter { $0.entry.conversationId == conversation }
        guard let newest = refused.last else { return nil }
        return refused.count == 1 ? newest.reason : "\(newest.reason) (\(refused.count - 1) more of your changes here were refused too.)"
    }

    /// Hides ``actionFailure``: this chat's refusals only.
    public func dismissActionFailure() {
        client.dismissRefusedActions(in: conversation)
    }

    /// Rule 6: the quoted message, loading older pages until it is held; `nil` when it is not
    /// there (hidden, or no longer in the history).
    public func jumpToOriginal(of item: TimelineItem) async -> TimelineItem? {
        // A quote of a message outside my membership (`hidden`) has no original I may load.
        guard let quote = item.replyTo, quote.seq > 0, quote.hidden != true else { return nil }
        return await loadOlder(until: quote.seq)
    }

    /// Runs an intent; a refusal shows in ``errorMessage`` (the client only throws `Validation.Failure`).
    private func perform(_ action: () throws -> Void) {
        do {
            try action()
            errorMessage = nil
        } catch {
            errorMessage = (error as? Validation.Failure)?.message ?? "Something went wrong."
        }
    }
}
