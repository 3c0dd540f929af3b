extension SearchText {
    /// What a word index holds for a folded text (``fold(_:)``): the text with a space wherever CJK
    /// meets anything but a space. Chinese and Japanese write no spaces, and Korean glues its
    /// particles to the word before, so a Latin word or a number written against them
    /// (`iPhoneを買った`, `iPhone을`, `mixed日本語English`, `3時`) would otherwise be part of one long
    /// word and never found by itself. CJK is found by substring through its own indexes, so
    /// splitting its runs from the rest loses nothing. Text without CJK comes back as it is.
    public static func wordIndexText(_ folded: String) -> String {
        guard hasCJK(folded) else { return folded }
        var spaced = ""
        spaced.reserveCapacity(folded.utf8.count + 8)
        var previousIsCJK: Bool?  // of the character before, nil after a space
        for character in folded {
            guard !character.isWhitespace else {
                previousIsCJK = nil
                spaced.append(character)
                continue
            }
            let cjk = isCJK(character)
            if let previousIsCJK, previousIsCJK != cjk { spaced.append(" ") }
            spaced.append(character)
            previousIsCJK = cjk
        }
        return spaced
    }

    /// Whether `range` of `text` starts where a word does (and ends where one does, unless
    /// `prefix`), as the word indexes split words: at a character that is not a letter or a
    /// digit, at the text's ends, or where CJK meets the rest (``wordIndexText(_:)``).
    static func isWordAligned(_ range: Range<String.Index>, in text: String, prefix: Bool) -> Bool {
        func isWord(_ character: Character) -> Bool { character.isLetter || character.isNumber }
        func boundary(_ before: Character?, _ after: Character?) -> Bool {
            guard let before, let after, isWord(before), isWord(after) else { return true }
            return isCJK(before) != isCJK(after)
        }
        guard range.lowerBound < range.upperBound else { return false }
        let first = text[range.lowerBound], last = text[text.index(before: range.upperBound)]
        let before = range.lowerBound > text.startIndex ? text[text.index(before: range.lowerBound)] : nil
        let after = range.upperBound < text.endIndex ? text[range.upperBound] : nil
        return boundary(before, first) && (prefix || boundary(last, after))
    }
}
