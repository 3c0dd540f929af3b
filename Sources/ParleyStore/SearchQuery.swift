import Foundation
import ParleyCore

/// A parsed search (docs/protocol.md "Search"), the same for every backend: required terms, then
/// filters. Nothing in it is database syntax: backends quote every term.
public struct SearchQuery: Sendable, Equatable {
    /// A required term, folded (``SearchText/fold(_:)``): a word or a quoted phrase.
    public struct Term: Sendable, Equatable {
        public var text: String
        public var isPhrase: Bool
        public init(text: String, isPhrase: Bool) {
            self.text = text
            self.isPhrase = isPhrase
        }
        /// Whether it holds Chinese, Japanese or Korean, found as a substring rather than by words.
        public var isCJK: Bool { SearchText.hasCJK(text) }
        /// Its word tokens (letters and digits), as a word index splits it.
        public var tokens: [String] { SearchText.tokens(text) }
    }

    public var terms: [Term] = []
    public var fromUsername: String?
    /// `has:file`: only messages carrying photos or files (with no words, every such message).
    public var hasFile = false
    public var conversation: ConversationID?
    /// Milliseconds, exclusive.
    public var before: Int64?
    public var after: Int64?
    public var order: SearchOrder = .newest
    /// Only what is older than this hit, in the newest-first order: the page after it.
    public var olderThan: SearchPosition?

    public init() {}

    /// The most characters a query may have.
    public static let maxCharacters = 1_000
    /// Terms beyond this many are ignored (a long paste still searches).
    public static let maxTerms = 16
    /// The newest messages of each conversation a one- or two-character CJK query looks through (a
    /// trigram index needs three characters).
    public static let shortCJKWindow: Int64 = 200

    /// Parses `raw`: words, `"phrases"` (an unbalanced quote runs to the end), `from:`, `in:`,
    /// `before:`, `after:` (UTC days `2026-11-20` or milliseconds). Throws `invalidQuery` for a
    /// query over ``maxCharacters``, one holding control characters, or a date that is neither.
    public static func parse(_ raw: String) throws -> SearchQuery {
        guard raw.count <= maxCharacters else { throw Validation.Failure(.invalidQuery, "A search is at most \(maxCharacters) characters.") }
        guard !Validation.holdsControlCharacters(raw) else { throw Validation.Failure(.invalidQuery, "A search cannot hold control characters.") }
        var query = SearchQuery()
        var rest = Substring(raw)
        while let start = rest.firstIndex(where: { !$0.isWhitespace }) {
            rest = rest[start...]
            if rest.first == "\"" {
                let body = rest.dropFirst()
                let end = body.firstIndex(of: "\"") ?? body.endIndex
                query.add(String(body[..<end]), phrase: true)
                rest = end < body.endIndex ? body[body.index(after: end)...] : body[end...]
                continue
            }
            let end = rest.firstIndex(where: \.isWhitespace) ?? rest.endIndex
            let word = String(rest[..<end])
            rest = rest[end...]
            try query.read(word)
        }
        return query
    }

    private mutating func read(_ word: String) throws {
        guard let colon = word.firstIndex(of: ":"), colon != word.startIndex else { return add(word, phrase: false) }
        let (key, value) = (word[..<colon].lowercased(), String(word[word.index(after: colon)...]))
        switch key {
        case "from" where !value.isEmpty: fromUsername = value.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "@"))
        case "in" where !value.isEmpty: conversation = ConversationID(validating: value) ?? ConversationID(rawValue: value)
        case "before": before = try Self.time(value, endOfDay: false)
        case "after": after = try Self.time(value, endOfDay: true)
        case "has" where ["file", "files", "photo", "photos", "attachment"].contains(value.lowercased()): hasFile = true
        default: add(word, phrase: false)
        }
    }

    private mutating func add(_ text: String, phrase: Bool) {
        let folded = SearchText.fold(text).trimmingCharacters(in: .whitespacesAndNewlines)
        // A CJK term is found as a substring, so punctuation pasted with it (東京。, 「東京」, 東京?)
        // would have to be in the message too: a word's terms are its runs of letters and digits,
        // as a word index splits Latin; a phrase loses only what surrounds it.
        if SearchText.hasCJK(folded) {
            let parts = phrase ? [folded.trimmingCharacters(in: CharacterSet.alphanumerics.inverted)] : SearchText.tokens(folded)
            for part in parts where !part.isEmpty && terms.count < Self.maxTerms { terms.append(Term(text: part, isPhrase: phrase)) }
            return
        }
        guard !folded.isEmpty, terms.count < Self.maxTerms, !SearchText.tokens(folded).isEmpty else { return }
        terms.append(Term(text: folded, isPhrase: phrase))
    }

    /// A day (`2026-11-20`, UTC) or milliseconds; `after:` a day means after its end.
    public static func time(_ value: String, endOfDay: Bool) throws -> Int64 {
        if let millis = Int64(value), millis >= 0 { return millis }
        let parts = value.split(separator: "-").compactMap { Int($0) }
        var components = DateComponents()
        components.timeZone = TimeZone(identifier: "UTC")
        if parts.count == 3, (1970...9999).contains(parts[0]), (1...12).contains(parts[1]), (1...31).contains(parts[2]) {
            (components.year, components.month, components.day) = (parts[0], parts[1], parts[2])
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
            // A day that does not exist (2026-02-30) is refused, not moved into the next month.
            if let date = calendar.date(from: components),
                calendar.dateComponents([.year, .month, .day], from: date) == DateComponents(year: parts[0], month: parts[1], day: parts[2])
            {
                let millis = Int64(date.timeIntervalSince1970 * 1000)
                return endOfDay ? millis + 86_400_000 - 1 : millis
            }
        }
        throw Validation.Failure(.invalidQuery, "Dates are days like 2026-11-20 (UTC) or milliseconds since 1970.")
    }
}

/// What search compares: case, accents and widths folded away, the same for the index and the query.
/// Everything takes its compatibility form first (NFKC, as PostgreSQL's `parley_fold` and
/// `parley_width` do): ① is 1, ﬁ is fi, ㍻ is 平成, half-width ｶﾀｶﾅ is カタカナ, ﾊﾟ is パ. Chinese,
/// Japanese and Korean then keep their marks (folding "accents" off kana would make が a か); the
/// rest loses case and accents.
public enum SearchText {
    public static func fold(_ text: String) -> String {
        // Plain ASCII (most messages) has only case to fold: no trip through Foundation's folding,
        // which is most of what indexing a message costs.
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text.lowercased() }
        // The compatibility form first: it may make CJK (㍻ is 平成, ㌀ is アパート), whose marks
        // the Latin fold must not then take off.
        let text = compatibilityForm(text)
        guard hasCJK(text) else { return foldLatin(text) }
        var folded = "", run = ""
        var runIsCJK = false
        for character in text {
            let isCJK = character.unicodeScalars.contains(where: isCJK)
            if isCJK != runIsCJK, !run.isEmpty {
                folded += runIsCJK ? run : foldLatin(run)
                run = ""
            }
            runIsCJK = isCJK
            run.append(character)
        }
        return folded + (runIsCJK ? run : foldLatin(run))
    }

    /// NFKC. Composed again: Foundation on Linux leaves its voiced marks apart (ﾊﾟ gave ハ and U+309A).
    private static func compatibilityForm(_ text: String) -> String {
        text.precomposedStringWithCompatibilityMapping.precomposedStringWithCanonicalMapping
    }

    private static func foldLatin(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }

    /// Whether `text` holds Han, Hiragana, Katakana (half-width too) or Hangul.
    public static func hasCJK(_ text: String) -> Bool {
        text.unicodeScalars.contains(where: isCJK)
    }

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
    /// written, else each of its tokens.
    public static func matches(of terms: [SearchQuery.Term], in text: String) -> [TextRange] {
        let options: String.CompareOptions = [.caseInsensitive, .diacriticInsensitive, .widthInsensitive]
        var ranges: [Range<String.Index>] = []
        for term in terms {
            var found = occurrences(of: term.text, in: text, options: options)
            if found.isEmpty { found = term.tokens.flatMap { occurrences(of: $0, in: text, options: options) } }
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

    private static func occurrences(of needle: String, in text: String, options: String.CompareOptions) -> [Range<String.Index>] {
        guard !needle.isEmpty else { return [] }
        var found: [Range<String.Index>] = []
        var from = text.startIndex
        while from < text.endIndex, let range = text.range(of: needle, options: options, range: from..<text.endIndex), found.count < 50 {
            found.append(range)
            from = range.upperBound > range.lowerBound ? range.upperBound : text.index(after: from)
        }
        return found
    }
}
