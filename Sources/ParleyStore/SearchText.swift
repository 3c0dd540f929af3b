import Foundation
import ParleyCore

/// What search compares: case, accents and widths folded away, the same for the index and the query.
/// Everything takes its compatibility form first (NFKC, as PostgreSQL's `parley_fold` and
/// `parley_width` do): ① is 1, ﬁ is fi, ㍻ is 平成, half-width ｶﾀｶﾅ is カタカナ, ﾊﾟ is パ. Chinese,
/// Japanese and Korean then keep their marks (folding "accents" off kana would make が a か); the
/// rest loses case and accents, and the letters `unaccent` folds (ł is l, æ is ae:
/// ``unaccentedLetters``), but for letters of their own that `unaccent` keeps (й is not и:
/// ``keptLetters``).
public enum SearchText {
    public static func fold(_ text: String) -> String {
        // Plain ASCII (most messages) has only case to fold: no trip through Foundation's folding,
        // which is most of what indexing a message costs.
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text.lowercased() }
        // The compatibility form first: it may make CJK (㍻ is 平成, ㌀ is アパート), whose marks
        // the Latin fold must not then take off.
        let text = compatibilityForm(text)
        guard text.unicodeScalars.contains(where: { isCJK($0) || isKept($0) }) else { return foldLatin(text) }
        var folded = "", run = ""
        var runKind = Run.other
        for character in text {
            let kind: Run = isCJK(character) ? .cjk : character.unicodeScalars.contains(where: isKept) ? .kept : .other
            if kind != runKind, !run.isEmpty {
                folded += fold(run, kind: runKind)
                run = ""
            }
            runKind = kind
            run.append(character)
        }
        return folded + fold(run, kind: runKind)
    }

    /// What a run of characters is to the fold: CJK as written, ``keptLetters`` lowercased, the rest folded.
    private enum Run { case cjk, kept, other }

    private static func fold(_ run: String, kind: Run) -> String {
        switch kind {
        case .cjk: run
        case .kept: run.lowercased()
        case .other: foldLatin(run)
        }
    }

    /// NFKC. Composed again: Foundation on Linux leaves its voiced marks apart (ﾊﾟ gave ハ and U+309A).
    private static func compatibilityForm(_ text: String) -> String {
        text.precomposedStringWithCompatibilityMapping.precomposedStringWithCanonicalMapping
    }

    private static func foldLatin(_ text: String) -> String {
        unaccented(text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil))
    }

    /// Whether `text` holds Han, Hiragana, Katakana (half-width too) or Hangul.
    public static func hasCJK(_ text: String) -> Bool {
        text.unicodeScalars.contains(where: isCJK)
    }

    /// Whether a character (a scalar and its marks) is CJK.
    static func isCJK(_ character: Character) -> Bool { character.unicodeScalars.contains(where: isCJK) }

    /// Whether `text` is nothing but CJK (and spaces): folding leaves such a term as written, so it
    /// is found in the raw text.
    public static func isOnlyCJK(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { isCJK($0) || $0.properties.isWhitespace }
    }

    static func isCJK(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x3040...0x30FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xAC00...0xD7AF, 0x1100...0x11FF, 0x3130...0x318F, 0xF900...0xFAFF,
            0xFF61...0xFFDC, 0x20000...0x2FA1F:
            true
        default: false
        }
    }

    /// Runs of letters and digits, as a word index splits text.
    public static func tokens(_ text: String) -> [String] {
        text.split { !($0.isLetter || $0.isNumber) }.map(String.init)
    }

    /// Where the terms occur in `text`, as UTF-16 ranges in order, overlaps merged: each term as
    /// written, else each of its tokens, then the same through the fold (``foldedOccurrences(of:in:)``:
    /// `$2` is marked in `item ②`). A word's match starts where a word does, and ends where one does
    /// unless it is a prefix (``isWordAligned(_:in:prefix:)``): `pi` is not marked in
    /// pizza, as it does not find it; CJK is marked wherever it is.
    public static func matches(of terms: [SearchQuery.Term], in text: String) -> [TextRange] {
        let options: String.CompareOptions = [.caseInsensitive, .diacriticInsensitive, .widthInsensitive]
        var ranges: [Range<String.Index>] = []
        for term in terms {
            let aligned = { (found: [Range<String.Index>], prefix: Bool) in
                term.isCJK ? found : found.filter { isWordAligned($0, in: text, prefix: prefix) }
            }
            var found = aligned(occurrences(of: term.text, in: text, options: options), term.isPrefix)
            if found.isEmpty { found = aligned(term.tokens.flatMap { occurrences(of: $0, in: text, options: options) }, true) }
            if found.isEmpty { found = aligned(foldedOccurrences(of: term.text, in: text), term.isPrefix) }
            if found.isEmpty { found = aligned(term.tokens.flatMap { foldedOccurrences(of: $0, in: text) }, true) }
            ranges += found
        }
        var merged: [TextRange] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            let start = text.utf16.distance(from: text.utf16.startIndex, to: range.lowerBound)
            let length = text.utf16.distance(from: range.lowerBound, to: range.upperBound)
            if let last = merged.last, start <= last.start + last.length {
                merged[merged.count - 1].length = max(last.length, start + length - last.start)
            } else {
                merged.append(TextRange(start: start, length: length))
            }
        }
        return merged
    }

    /// Where `term` (folded) is in the folded `text`, mapped back to `text`'s characters: what
    /// Foundation's comparison misses though the index found it (half-width ﾊﾟ is two characters
    /// that fold into one, パ; ② is 2). Each character's fold gives its share of the folded text, a
    /// lone composing mark (ﾟ folds to U+309A) none; when the shares do not add up to the whole
    /// text's fold, nothing is marked rather than the wrong part. Linear, and only for texts up to
    /// 2,000 characters: a hostile message cannot make a search slow.
    static func foldedOccurrences(of term: String, in text: String) -> [Range<String.Index>] {
        let needle = Array(term.unicodeScalars), haystack = Array(fold(text).unicodeScalars)
        guard !needle.isEmpty, needle.count <= haystack.count, text.count <= 2_000 else { return [] }
        var starts: [String.Index] = [], bounds = [0]  // the folded offset at each character boundary
        for index in text.indices {
            let share = fold(String(text[index])).unicodeScalars.count { $0.properties.canonicalCombiningClass == .notReordered }
            starts.append(index)
            bounds.append(bounds[bounds.count - 1] + share)
        }
        starts.append(text.endIndex)
        guard bounds.last == haystack.count else { return [] }
        /// The first boundary whose folded offset satisfies `reaches` (offsets only grow).
        func firstBoundary(where reaches: (Int) -> Bool) -> Int {
            var (low, high) = (0, bounds.count - 1)
            while low < high {
                let middle = (low + high) / 2
                if reaches(bounds[middle]) { high = middle } else { low = middle + 1 }
            }
            return low
        }
        var found: [Range<String.Index>] = []
        var start = 0
        while start + needle.count <= haystack.count, found.count < 50 {
            guard haystack[start..<(start + needle.count)].elementsEqual(needle) else {
                start += 1
                continue
            }
            let from = max(0, firstBoundary { $0 > start } - 1)
            let to = firstBoundary { $0 >= start + needle.count }
            if from < to { found.append(starts[from]..<starts[to]) }
            start += needle.count
        }
        return found
    }

    /// Where Foundation's comparison finds `needle` (folded) in `text`, kept only where the part
    /// found folds to it: Foundation takes the mark off й, which the fold keeps (``keptLetters``).
    private static func occurrences(of needle: String, in text: String, options: String.CompareOptions) -> [Range<String.Index>] {
        guard !needle.isEmpty else { return [] }
        var found: [Range<String.Index>] = []
        var from = text.startIndex
        while from < text.endIndex, let range = text.range(of: needle, options: options, range: from..<text.endIndex), found.count < 50 {
            if fold(String(text[range])) == needle { found.append(range) }
            from = range.upperBound > range.lowerBound ? range.upperBound : text.index(after: from)
        }
        return found
    }
}
