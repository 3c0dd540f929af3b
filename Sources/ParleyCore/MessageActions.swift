/// What a reply shows above itself: the answered message as it is now (docs/protocol.md "Message actions").
public struct ReplyQuote: Hashable, Codable, Sendable {
    /// The answered message's seq, in the same conversation.
    public var seq: Int64
    /// Who wrote it.
    public var senderId: UserID
    /// Its first line, at most ``previewCharacters`` characters; empty once it was deleted.
    public var preview: String
    /// Whether it was deleted for everyone (clients show "Deleted message").
    public var deleted: Bool
    /// Set when the answered message lies outside the viewer's membership of the group (written
    /// before they joined, or while they were out): its preview is then empty (clients show
    /// "Earlier message"). Absent otherwise.
    public var hidden: Bool?

    /// The most characters of the first line a quote carries.
    public static let previewCharacters = 120

    /// Creates a value.
    public init(seq: Int64, senderId: UserID, preview: String, deleted: Bool) {
        self.seq = seq
        self.senderId = senderId
        self.preview = preview
        self.deleted = deleted
    }

    /// The quote of a message the viewer may not see: who wrote it, and nothing of what it says.
    public static func hidden(seq: Int64, senderId: UserID) -> ReplyQuote {
        var quote = ReplyQuote(seq: seq, senderId: senderId, preview: "", deleted: false)
        quote.hidden = true
        return quote
    }

    /// The quote of a message whose current text is `text` (deleted when `deletedAt` is set).
    public init(seq: Int64, senderId: UserID, text: String, deleted: Bool) {
        let firstLine = text.prefix { $0 != "\n" }
        self.init(seq: seq, senderId: senderId, preview: deleted ? "" : String(firstLine.prefix(Self.previewCharacters)), deleted: deleted)
    }
}

/// One emoji's reactions on a message.
public struct Reaction: Hashable, Codable, Sendable {
    /// The emoji (one grapheme cluster).
    public var emoji: String
    /// How many people reacted with it.
    public var count: Int
    /// Whether one of them is the user the message was rendered for.
    public var mine: Bool
    /// Who reacted with it, oldest first (for the info view).
    public var userIds: [UserID]

    /// Creates a value.
    public init(emoji: String, count: Int, mine: Bool, userIds: [UserID]) {
        self.emoji = emoji
        self.count = count
        self.mine = mine
        self.userIds = userIds
    }

    /// Aggregates (user, emoji) pairs, given oldest first, as `viewer` sees them: emoji in order of
    /// their first reaction.
    public static func aggregate(_ pairs: [(user: UserID, emoji: String)], for viewer: UserID) -> [Reaction] {
        var order: [String] = []
        var users: [String: [UserID]] = [:]
        for (user, emoji) in pairs {
            if users[emoji] == nil { order.append(emoji) }
            users[emoji, default: []].append(user)
        }
        return order.map { emoji in
            let ids = users[emoji] ?? []
            return Reaction(emoji: emoji, count: ids.count, mine: ids.contains(viewer), userIds: ids)
        }
    }
}

/// What a message action does.
public enum MessageActionKind: String, Codable, Sendable, CaseIterable {
    /// Set my reaction (`emoji`), replacing any earlier one; without `emoji`, clear it.
    case react
    /// Replace the text of my own message (`text`), within the edit window.
    case edit
    /// Delete for everyone: mine within the delete window, or anyone's by a group admin.
    case delete
    /// Delete for me: hide the message on all my devices.
    case hide
}

/// A message action as it travels: `POST /v1/conversations/{id}/messages/{seq}/actions` (the body
/// without `conversationId`, `seq` and `ref`) or the WebSocket frame `action`.
public struct MessageActionRequest: Codable, Equatable, Sendable {
    /// Echoed in the answer (`acted` or `error`).
    public var ref: String?
    /// The idempotency key: made once per action, reused for every retry.
    public var clientId: ClientMessageID
    /// The conversation of the message.
    public var conversationId: ConversationID
    /// The message acted on.
    public var seq: Int64
    /// What to do.
    public var kind: MessageActionKind
    /// For `react`: the emoji, or absent to clear my reaction.
    public var emoji: String?
    /// For `edit`: the new text (validated as a message text).
    public var text: String?

    /// Creates a value.
    public init(
        ref: String? = nil, clientId: ClientMessageID, conversationId: ConversationID, seq: Int64, kind: MessageActionKind,
        emoji: String? = nil, text: String? = nil
    ) {
        self.ref = ref
        self.clientId = clientId
        self.conversationId = conversationId
        self.seq = seq
        self.kind = kind
        self.emoji = emoji
        self.text = text
    }
}

/// A message a user deleted for themselves (the `messageHidden` event).
public struct MessageRef: Hashable, Codable, Sendable {
    /// Its conversation.
    public var conversationId: ConversationID
    /// Its seq.
    public var seq: Int64

    /// Creates a value.
    public init(conversationId: ConversationID, seq: Int64) {
        self.conversationId = conversationId
        self.seq = seq
    }
}

/// An earlier text of an edited message.
public struct MessageVersion: Hashable, Codable, Sendable {
    /// The text as it was.
    public var text: String
    /// When that text was written (the send, or the edit that made it).
    public var createdAt: Timestamp
    /// When an edit replaced it.
    public var replacedAt: Timestamp

    /// Creates a value.
    public init(text: String, createdAt: Timestamp, replacedAt: Timestamp) {
        self.text = text
        self.createdAt = createdAt
        self.replacedAt = replacedAt
    }
}

extension Validation {
    /// The most UTF-8 bytes a reaction may take (the longest emoji ZWJ and tag sequences fit).
    public static let maxReactionBytes = 64

    /// Checks a reaction: exactly one grapheme cluster that is an emoji (shown as one by default, or
    /// made one by U+FE0F or a keycap), nothing else. A lone emoji that is text by default (`❤`,
    /// as some keyboards send it) gets its U+FE0F, so it is the same reaction as `❤️`, and every
    /// reaction takes one form (``canonicalEmoji(_:)``); a lone skin tone or hair style is not an
    /// emoji of its own.
    public static func reactionEmoji(_ sent: String) -> Result<String, Failure> {
        let refused = Failure(.invalidEmoji, "A reaction is a single emoji.")
        guard sent.utf8.count <= 2 * maxReactionBytes else { return .failure(refused) }
        let raw = selectorsCompleted(sent)  // `❤` alone is `❤️` from here on
        guard raw.utf8.count <= maxReactionBytes, raw.count == 1, let first = raw.unicodeScalars.first, !first.properties.isEmojiModifier,
            !isHairComponent(first)
        else {
            return .failure(refused)
        }
        let scalars = raw.unicodeScalars
        // Shown as an emoji by a selector, a keycap or a skin tone (`✌🏽`, `☝🏻`: text by default alone).
        let selected =
            scalars.contains { $0.value == 0xFE0F || $0.value == 0x20E3 }
            || (first.properties.isEmojiModifierBase && scalars.dropFirst().first?.properties.isEmojiModifier == true)
        guard first.properties.isEmoji, first.properties.isEmojiPresentation || selected else { return .failure(refused) }
        // Every other scalar is part of an emoji sequence: emoji, joiner, selector, skin tone, tag or keycap.
        let joinable = scalars.dropFirst().allSatisfy { scalar in
            scalar.properties.isEmoji || scalar.properties.isEmojiModifier || scalar.value == 0x200D || scalar.value == 0xFE0F
                || scalar.value == 0x20E3 || (0xE0020...0xE007F).contains(scalar.value)
        }
        guard joinable, isWellFormedSequence(Array(scalars)) else { return .failure(refused) }
        // A digit, `#` or `*` is an emoji only as a keycap (`1️` draws a plain digit), and a keycap only on one of them.
        if first.value <= 0x7F, ![[0x20E3], [0xFE0F, 0x20E3]].contains(scalars.dropFirst().map(\.value)) { return .failure(refused) }
        if first.value > 0x7F, scalars.contains(where: { $0.value == 0x20E3 }) { return .failure(refused) }
        // Tags spell a subdivision's flag after a black flag: England, Scotland and Wales are the ones there are.
        let tagged = scalars.contains { (0xE0020...0xE007F).contains($0.value) }
        if tagged, !Self.subdivisionFlags.contains(String(scalars)) { return .failure(refused) }
        return .success(canonicalEmoji(Array(scalars)))
    }

    /// The subdivision flags (a black flag and tags): England, Scotland, Wales.
    static let subdivisionFlags: Set<String> = ["gbeng", "gbsct", "gbwls"].map { code in
        String(String.UnicodeScalarView(["🏴"] + code.unicodeScalars.compactMap { Unicode.Scalar($0.value + 0xE0000) } + ["\u{E007F}"]))
    }.reduce(into: []) { $0.insert($1) }

    /// A sequence as keyboards and older systems send it, made whole: a text-style selector
    /// (U+FE0E) dropped, and U+FE0F after each emoji that is text by default and has neither it nor
    /// a skin tone (`🤷🏻‍♀` is `🤷🏻‍♀️`, `🏳‍🌈` is `🏳️‍🌈`), so one emoji is one chip.
    static func selectorsCompleted(_ raw: String) -> String {
        let scalars = Array(raw.unicodeScalars.filter { $0.value != 0xFE0E })
        var completed = String.UnicodeScalarView()
        for (index, scalar) in scalars.enumerated() {
            completed.append(scalar)
            let next = index + 1 < scalars.count ? scalars[index + 1] : nil
            if scalar.value > 0x7F, scalar.properties.isEmoji, !scalar.properties.isEmojiPresentation, next?.value != 0xFE0F,
                next?.properties.isEmojiModifier != true
            {
                completed.append("\u{FE0F}")
            }
        }
        return String(completed)
    }

    /// One form per emoji, so one reaction is one chip whichever keyboard sent it: a selector after
    /// an emoji that is shown as one by default goes (`👍️` is `👍`), and a keycap gets its selector
    /// (`1⃣` is `1️⃣`), as Unicode's fully-qualified sequences have them.
    private static func canonicalEmoji(_ scalars: [Unicode.Scalar]) -> String {
        var canonical = String.UnicodeScalarView()
        for (index, scalar) in scalars.enumerated() {
            if scalar.value == 0xFE0F, index > 0, scalars[index - 1].properties.isEmojiPresentation { continue }
            canonical.append(scalar)
            if scalar.value <= 0x7F, index + 1 < scalars.count, scalars[index + 1].value == 0x20E3 { canonical.append("\u{FE0F}") }
        }
        return String(canonical)
    }

    /// Refuses what renders like another emoji and would show as a second chip of it: a joiner at
    /// the end or doubled, a selector repeated, a skin tone not right after an emoji that takes one
    /// (`👍🏻🏻` is one cluster, drawn as a thumb and a swatch), a lone regional indicator (flags are
    /// pairs), a pair that is no region's flag (``flagRegions``).
    private static func isWellFormedSequence(_ scalars: [Unicode.Scalar]) -> Bool {
        let isIndicator = { (scalar: Unicode.Scalar) in (0x1F1E6...0x1F1FF).contains(scalar.value) }
        if scalars.contains(where: isIndicator) { return scalars.count == 2 && scalars.allSatisfy(isIndicator) && isFlag(scalars) }
        guard scalars.last?.value != 0x200D else { return false }
        return !zip(scalars, scalars.dropFirst()).contains { pair in
            (pair.0.value == 0x200D || pair.0.value == 0xFE0F) && pair.0.value == pair.1.value
                || pair.1.properties.isEmojiModifier && !pair.0.properties.isEmojiModifierBase
        }
    }
}
