import ParleyCore

/// The words message actions show, the same in the chat, the list preview and the terminal.
public enum MessageText {
    /// A tombstone: a message deleted for everyone, in its place.
    public static let deleted = "This message was deleted"
    /// The list's preview of my own message deleted for everyone.
    public static let deletedByMe = "You deleted this message"
    /// A reply's quote once its original was deleted.
    public static let deletedQuote = "Deleted message"
    /// A quote of a message from outside my membership of the group (``ReplyQuote/hidden``).
    public static let hiddenQuote = "Earlier message"
    /// The label of an edited message.
    public static let edited = "edited"
    /// The quick reactions a message menu offers first (a fuller picker takes any emoji).
    public static let quickReactions = ["👍", "❤️", "😂", "😮", "😢", "🙏"]

    /// The first line of a text, as quotes and previews show it (a line or paragraph separator,
    /// U+2028 or U+2029, ends it too).
    public static func firstLine(_ text: String) -> String {
        String(text.prefix { $0 != "\n" && $0 != "\u{2028}" && $0 != "\u{2029}" })
    }
}
