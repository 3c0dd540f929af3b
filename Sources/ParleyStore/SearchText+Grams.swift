extension SearchText {
    /// Whether a CJK term is too short for a trigram index (under three code points, as trigrams
    /// count): such a term is looked up among the text's ``cjkGrams(_:)`` instead.
    public static func isShortCJK(_ term: String) -> Bool { term.unicodeScalars.count < 3 }

    /// What a one- or two-character CJK search looks up (docs/protocol.md "Search"): each CJK code
    /// point of the folded text, and each two neighbours holding one (no whitespace), once each,
    /// in the order first seen. A short term is letters and digits only (``SearchQuery`` splits
    /// the rest off), so wherever it occurs in the text it is one of these: found at any age, where
    /// a trigram index cannot find it. Linear in the text.
    public static func cjkGrams(_ folded: String) -> [String] {
        var grams: [String] = [], seen: Set<String> = []
        func add(_ gram: String) { if seen.insert(gram).inserted { grams.append(gram) } }
        var previous: Unicode.Scalar?
        for scalar in folded.unicodeScalars {
            let cjk = isCJK(scalar)
            if cjk { add(String(scalar)) }
            if scalar.properties.isWhitespace {
                previous = nil
                continue
            }
            if let previous, cjk || isCJK(previous) {
                var pair = String.UnicodeScalarView()
                pair.append(previous)
                pair.append(scalar)
                add(String(pair))
            }
            previous = scalar
        }
        return grams
    }

    /// ``cjkGrams(_:)`` as one text of words, for a full-text index.
    public static func cjkGramsText(_ folded: String) -> String { cjkGrams(folded).joined(separator: " ") }
}
