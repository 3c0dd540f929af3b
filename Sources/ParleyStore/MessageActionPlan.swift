import ParleyCore

/// The decision of a message action, made the same way by every backend from what it read, before
/// anything is written (docs/protocol.md "Message actions"). Rules:
/// 1. Membership entries take no action but `hide` (`invalidAction`).
/// 2. `react` and `edit` refuse a deleted message (`messageDeleted`).
/// 3. Only the sender edits (`forbidden`), within the edit window (`editWindowClosed`); the same
///    text again changes nothing; an empty text only removes a caption (a message without photos
///    or files keeps some text: `textEmpty`).
/// 4. The sender deletes for everyone within the delete window (`deleteWindowClosed`); a group's
///    admin or owner at any time; anyone else is `forbidden`. Deleting a deleted message changes nothing.
/// 5. A reaction equal to the one the actor has, clearing none, or hiding a hidden message changes nothing.
public enum MessageActionPlan {
    /// 48 hours, the default of both windows.
    public static let defaultWindowMilliseconds: Int64 = 48 * 3_600_000

    /// What to write.
    public enum Effect: Sendable, Equatable {
        /// Nothing changes; the action is still recorded, so a retry is a duplicate.
        case unchanged
        case setReaction(String)
        case clearReaction
        /// `previous` becomes an earlier version.
        case edit(previous: String, new: String)
        case delete
        case hide

        /// Whether it sets or clears the actor's reaction (a reaction it replaces may have to be
        /// kept for someone who left, as they saw it).
        public var changesReactions: Bool {
            switch self {
            case .setReaction, .clearReaction: true
            default: false
            }
        }
    }

    /// Decides `action` on `message`. `role` is the actor's role in a group (nil in a direct
    /// conversation); `myReaction` the actor's current reaction; `hidden` whether the actor hid it.
    public static func decide(
        _ action: NewMessageAction, on message: ActedMessage, role: MemberRole?, myReaction: String?, hidden: Bool, now: Timestamp
    ) throws -> Effect {
        if message.isEntry, action.change != .hide { throw StoreError.invalidAction }
        let age = now.milliseconds - message.createdAt.milliseconds
        switch action.change {
        case .react(let emoji):
            guard !message.deleted else { throw StoreError.messageDeleted }
            guard let emoji else { return myReaction == nil ? .unchanged : .clearReaction }
            return emoji == myReaction ? .unchanged : .setReaction(emoji)
        case .edit(let text):
            guard !message.deleted else { throw StoreError.messageDeleted }
            guard message.sender == action.actor else { throw StoreError.forbidden("Only the sender can edit a message.") }
            guard age <= action.editWindowMilliseconds else { throw StoreError.editWindowClosed }
            guard !text.isEmpty || message.hasAttachments else { throw Validation.Failure(.textEmpty, "Message text is empty.") }
            return text == message.text ? .unchanged : .edit(previous: message.text, new: text)
        case .delete:
            if message.deleted { return .unchanged }
            let isAdmin = role == .admin || role == .owner
            if message.sender == action.actor, age <= action.deleteWindowMilliseconds || isAdmin { return .delete }
            if isAdmin { return .delete }
            guard message.sender == action.actor else { throw StoreError.forbidden("Only the sender or a group admin can delete a message for everyone.") }
            throw StoreError.deleteWindowClosed
        case .hide:
            return hidden ? .unchanged : .hide
        }
    }
}

extension Message {
    /// The message with `mine` of its reactions set for `viewer` (events carry one rendering to
    /// every recipient).
    public func reactionsSeen(by viewer: UserID) -> Message {
        guard let reactions else { return self }
        var copy = self
        copy.reactions = reactions.map { Reaction(emoji: $0.emoji, count: $0.count, mine: $0.userIds.contains(viewer), userIds: $0.userIds) }
        return copy
    }

    /// The message for `viewer` when `quoteReaders` holds who may see the message it answers (nil
    /// when everyone who sees it may): its quote hidden from anyone else (a member who joined
    /// after the original without the earlier history, or was out of the group when it was written).
    public func quoteSeen(by viewer: UserID, quoteReaders: Set<UserID>?) -> Message {
        guard let quoteReaders, let quote = replyTo, !quoteReaders.contains(viewer) else { return self }
        var copy = self
        copy.replyTo = .hidden(seq: quote.seq, senderId: quote.senderId)
        return copy
    }
}
