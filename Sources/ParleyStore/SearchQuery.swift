import Foundation
import ParleyCore

/// A parsed search (docs/protocol.md "Search"), the same for every backend: required terms, then
/// filters. Nothing in it is database syntax: backends quote every term.
public struct SearchQuery: Sendable, Equatable {
    /// A required term, folded (``SearchText/fold(_:)``): a word or a quoted phrase.
    public struct Term: Sendable, Equatable {
        public var text: String
        public var isPhrase: Bool
        /// As the user wrote it (trimmed, not folded): for a backend that folds in its own way, on
        /// the index and the query alike (PostgreSQL's `parley_words`).
        public var written: String
        public init(text: String, isPhrase: Bool, written: String? = nil) {
            self.text = text
            self.isPhrase = isPhrase
            self.written = written ?? text
        }
        /// Whether it holds Chinese, Japanese or Korean, found as a substring rather than by words.
        public var isCJK: Bool { SearchText.hasCJK(text) }
        /// Its word tokens (letters and digits), as a word index splits it.
        public var tokens: [String] { SearchText.tokens(text) }
        /// Whether it also finds the words its last token begins (`piz` finds pizza, as one types):
        /// an unquoted word whose last token has ``prefixLength`` characters or more. A shorter
        /// start would find most messages (a word index merges every word it begins), and a
        /// quoted phrase is as written.
        public var isPrefix: Bool { !isPhrase && (tokens.last?.count ?? 0) >= SearchQuery.prefixLength }
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
    /// The fewest characters of a word's last token that find the longer words it begins.
    public static let prefixLength = 3

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
            for part in parts where !part.isEmpty { append(Term(text: part, isPhrase: phrase)) }
            return
        }
        guard !folded.isEmpty, !SearchText.tokens(folded).isEmpty else { return }
        append(Term(text: folded, isPhrase: phrase, written: text.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    /// Up to ``maxTerms``; a term already there finds nothing more (`京 京 京` is `京`), and each copy
    /// cost PostgreSQL a scan of its own.
    private mutating func append(_ term: Term) {
        guard terms.count < Self.maxTerms, !terms.contains(where: { $0.text == term.text && $0.isPhrase == term.isPhrase }) else { return }
        terms.append(term)
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
