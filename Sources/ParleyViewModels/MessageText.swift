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

    /// A message as a list preview or a notice shows it: the first line of its text, after an icon
    /// of its files when it has some, and their words when it has no text: "📷 Photo",
    /// "📎 report.pdf", "🎥 the caption", "📎 2 files" (the web client's `messagePreview`).
    public static func preview(_ text: String, attachments: [Attachment]?) -> String {
        guard let attachments, let first = attachments.first else { return firstLine(text) }
        let sameKind = attachments.allSatisfy { $0.kind == first.kind }
        let words = sameKind ? kindWords[first.kind] : nil
        let icon = words?.icon ?? "📎"
        let caption = firstLine(text)
        if !caption.isEmpty { return "\(icon) \(caption)" }
        if attachments.count == 1 { return "\(icon) \(words?.one ?? first.name)" }
        return "\(icon) \(attachments.count) \(words?.many ?? "files")"
    }

    private static let kindWords: [AttachmentKind: (one: String, many: String, icon: String)] = [
        .image: ("Photo", "photos", "📷"), .video: ("Video", "videos", "🎥"), .audio: ("Audio", "audio files", "🎵"),
    ]
}
