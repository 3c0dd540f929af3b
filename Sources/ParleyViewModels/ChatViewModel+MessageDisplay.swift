import Foundation
import ParleySDK
import ParleyCore

/// A message as a chat shows it now: the tombstone, "edited", reaction chips and the reply's quote
/// (rules 1 and 5 of `ChatViewModel+MessageActions.swift`).
extension ChatViewModel {
    /// A reply's quote as shown: who wrote the original and its first line (or "Deleted message").
    public struct Quote: Equatable, Sendable {
        /// The original's seq (`nil` while it is still in my outbox).
        public var seq: Int64?
        /// Its sender's name ("You" for me).
        public var sender: String
        /// Its first line, or ``MessageText/deletedQuote``.
        public var text: String
        /// Whether the original was deleted for everyone.
        public var isDeleted: Bool

        /// A quote, e.g. for SwiftUI previews and tests.
        public init(seq: Int64?, sender: String, text: String, isDeleted: Bool) {
            self.seq = seq
            self.sender = sender
            self.text = text
            self.isDeleted = isDeleted
        }
    }

    /// One emoji under a message: how many reacted with it, and whether I did.
    public struct ReactionChip: Identifiable, Equatable, Sendable {
        /// The emoji (its id).
        public var emoji: String
        /// How many people reacted with it.
        public var count: Int
        /// Whether one of them is me (a tap takes it back).
        public var isMine: Bool
        /// The emoji, stable for lists.
        public var id: String { emoji }

        /// A chip, e.g. for SwiftUI previews and tests.
        public init(emoji: String, count: Int, isMine: Bool) {
            self.emoji = emoji
            self.count = count
            self.isMine = isMine
        }
    }

    /// A message as it is now, ready to show.
    public struct MessageDisplay: Equatable, Sendable {
        /// Its text, or ``MessageText/deleted`` for a tombstone.
        public var text: String
        /// Whether it was deleted for everyone (show the text as a tombstone, no menu but delete for me).
        public var isDeleted: Bool
        /// "edited" when its text was changed.
        public var editedLabel: String?
        /// Its reactions, in order of each emoji's first reaction.
        public var reactions: [ReactionChip]
        /// The quote above a reply.
        public var quote: Quote?
    }

    /// Rule 5.
    public func display(of item: TimelineItem) -> MessageDisplay {
        let chips = item.reactions.map { reaction in
            ReactionChip(
                emoji: reaction.emoji, count: reaction.count,
                isMine: reaction.userIds.isEmpty ? reaction.mine : reaction.userIds.contains(client.me.id))
        }
        return MessageDisplay(
            text: item.isDeleted ? MessageText.deleted : item.text, isDeleted: item.isDeleted,
            editedLabel: item.isEdited && !item.isDeleted ? MessageText.edited : nil, reactions: chips, quote: item.replyTo.map(quote))
    }

    /// The quote above the composer while replying (rule 1).
    public var composerQuote: Quote? {
        guard let original = replyingTo else { return nil }
        let current = client.timeline(conversation).first { $0.id == original.id } ?? original
        return quote(ReplyQuote(seq: current.seq ?? 0, senderId: current.senderId, text: current.text, deleted: current.isDeleted))
    }

    private func quote(_ reply: ReplyQuote) -> Quote {
        Quote(
            seq: reply.seq > 0 ? reply.seq : nil, sender: name(of: reply.senderId),
            text: reply.deleted ? MessageText.deletedQuote : reply.hidden == true ? MessageText.hiddenQuote : MessageText.firstLine(reply.preview),
            isDeleted: reply.deleted)
    }
}
