import ParleyCore
import Testing

/// docs/protocol.md "Message actions" rule 2: a reaction is one grapheme cluster that is an emoji.
@Suite struct ReactionValidationTests {
    @Test(arguments: ["👍", "❤️", "😂", "👍🏽", "👨‍👩‍👧", "🇯🇵", "🇪🇺", "🇺🇳", "🇽🇰", "1️⃣", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "✔️", "🫠", "🧑🏿‍🚀"])
    func singleEmojiAreAccepted(emoji: String) {
        #expect((try? Validation.reactionEmoji(emoji).get()) == emoji)
    }

    @Test(arguments: [
        "", "a", "1", "#", "🏻", "👍👍", "👍 ", " 👍", "ok", "\u{200D}", "\u{FE0F}", "a\u{301}", "\u{1F44D}\u{0301}",
        "👍\u{200D}", "👍\u{FE0F}\u{FE0F}\u{FE0F}\u{FE0F}", "🇯", "🇯🇵🇯", "👨\u{200D}\u{200D}👩",
        "👍🏻🏻", "👍🏻🏻🏻🏻🏻🏻🏻🏻🏻🏻", "😂🏻", "👍\u{FE0F}🏻", "1\u{FE0F}", "#\u{FE0F}", "1\u{20E3}\u{20E3}",
        // No region's flag (two boxed letters), and the hair styles alone (a swatch, like a lone skin tone).
        "🇦🇦", "🇺🇺", "🇿🇿", "🇶🇴", "🦰", "🦱", "🦳", "🦲", "🦰\u{FE0F}",
        // Tags that spell no flag, a tag hidden after a face, a keycap on a face.
        "🏴\u{E0075}\u{E0073}\u{E0074}\u{E0078}\u{E007F}", "🏴\u{E0061}\u{E0061}\u{E007F}", "😀\u{E0041}", "😀\u{20E3}",
    ])
    func anythingElseIsRefused(text: String) {
        #expect(throws: Validation.Failure(.invalidEmoji, "A reaction is a single emoji.")) { try Validation.reactionEmoji(text).get() }
    }

    /// Every region with a flag (ISO 3166-1 and Unicode's nine more) is one reaction.
    @Test func everyRegionsFlagIsAReaction() {
        let flag = { (code: String) in String(String.UnicodeScalarView(code.unicodeScalars.map { Unicode.Scalar($0.value - 0x41 + 0x1F1E6)! })) }
        for code in ["US", "JP", "UA", "GB", "AC", "TA", "EU", "AQ", "BV"] { #expect((try? Validation.reactionEmoji(flag(code)).get()) == flag(code)) }
        #expect(["👩\u{200D}🦰", "🧑🏽\u{200D}🦲"].allSatisfy { (try? Validation.reactionEmoji($0).get()) == $0 }, "hair after a joiner is a person's")
    }

    /// As some keyboards send them: the same reaction as with U+FE0F, so one chip.
    @Test func aLoneTextStyleEmojiGetsItsSelector() {
        #expect((try? Validation.reactionEmoji("❤").get()) == "❤️")
        #expect((try? Validation.reactionEmoji("☺").get()) == "☺️")
        #expect((try? Validation.reactionEmoji("✔").get()) == "✔️")
    }

    /// The same emoji sent two ways is one reaction, so one chip: the fully-qualified form.
    @Test(arguments: [
        ("👍\u{FE0F}", "👍"), ("😂\u{FE0F}", "😂"), ("1\u{20E3}", "1️⃣"), ("#\u{20E3}", "#️⃣"), ("1️⃣", "1️⃣"),
        ("🏳️‍🌈", "🏳️‍🌈"), ("🏳\u{200D}🌈", "🏳️‍🌈"), ("🤷🏻\u{200D}♀", "🤷🏻‍♀️"), ("🏃\u{200D}➡", "🏃‍➡️"), ("👁\u{200D}🗨", "👁️‍🗨️"),
        ("👍\u{FE0E}", "👍"), ("⛓\u{200D}💥", "⛓️‍💥"), ("🏴󠁧󠁢󠁷󠁬󠁳󠁿", "🏴󠁧󠁢󠁷󠁬󠁳󠁿"), ("❤️‍🔥", "❤️‍🔥"), ("👁️‍🗨️", "👁️‍🗨️"), ("🧑‍⚕️", "🧑‍⚕️"), ("☝🏻", "☝🏻"), ("✌🏽", "✌🏽"), ("🕵🏻‍♀️", "🕵🏻‍♀️"),
    ])
    func oneEmojiHasOneForm(sent: String, stored: String) {
        #expect((try? Validation.reactionEmoji(sent).get()) == stored)
    }

    @Test func aReplyQuoteIsTheCurrentFirstLineCut() {
        let long = String(repeating: "x", count: 300)
        let quote = ReplyQuote(seq: 1, senderId: .random(), text: "\(long)\nsecond", deleted: false)
        #expect(quote.preview.count == ReplyQuote.previewCharacters && !quote.preview.contains("\n"))
        #expect(ReplyQuote(seq: 1, senderId: .random(), text: "gone", deleted: true).preview.isEmpty)
    }
}
