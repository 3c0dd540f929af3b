/// The line being typed and where its cursor is, in whole characters (an emoji with its skin tone,
/// a letter with its accent: one each), so no key can split one.
struct EditedLine {
    private(set) var characters: [Character] = []
    /// How many characters are before the cursor.
    private(set) var cursor = 0

    var text: String { String(characters) }

    /// What a key did: nothing; characters typed at the end (written as they are); the text
    /// changed elsewhere, or only the cursor moved (both: the line drawn again).
    enum Change: Equatable {
        case none, appended(String), edited, moved
        /// Whether the text changed (then typing is announced).
        var changesText: Bool { self != .none && self != .moved }
    }

    mutating func apply(_ key: KeyDecoder.Key) -> Change {
        switch key {
        case .text(let typed) where cursor == characters.count:
            // Joined with the last character and split again: a skin tone or an accent typed after
            // its base character becomes one character with it. Only the end is looked at, so a
            // long paste costs its length, not its length squared.
            let joined = (characters.popLast().map(String.init) ?? "") + typed
            characters += Array(joined)
            cursor = characters.count
            return .appended(typed)
        case .text(let typed):
            let before = String(characters[..<cursor]) + typed
            characters = Array(before + String(characters[cursor...]))
            cursor = min(before.count, characters.count)
            return .edited
        case .erase where cursor > 0:
            characters.remove(at: cursor - 1)
            cursor -= 1
        case .delete where cursor < characters.count:
            characters.remove(at: cursor)
        case .eraseToStart where cursor > 0:
            characters.removeFirst(cursor)
            cursor = 0
        case .left where cursor > 0: cursor -= 1
        case .right where cursor < characters.count: cursor += 1
        case .home where cursor > 0: cursor = 0
        case .end where cursor < characters.count: cursor = characters.count
        default: return .none
        }
        return [.left, .right, .home, .end].contains(key) ? .moved : .edited
    }

    /// Whether the whole line fits in `columns` as drawn (then typing at its end is written as typed).
    func fits(in columns: Int) -> Bool {
        var width = 0
        for character in characters {
            width += Self.width(of: character)
            if width > columns { return false }
        }
        return true
    }

    /// The line as drawn after the prompt, on one row of `columns`: the text (a line break pasted
    /// into it as ↵), then the cursor put back to its place. The terminal saves and restores the
    /// place (ESC 7, ESC 8), so a wide character (東, 👍) moves it as far as the terminal draws
    /// it. A line wider than the row shows the part around the cursor, `…` where it is cut: a
    /// line the terminal wrapped could not be drawn again in place.
    func drawn(columns: Int) -> String {
        var (start, end) = (0, characters.count)
        if !fits(in: columns) {
            let room = max(columns - 2, 4)  // the two ends' marks
            start = cursor
            var width = 0
            while start > 0, width + Self.width(of: characters[start - 1]) <= room * 2 / 3 {
                start -= 1
                width += Self.width(of: characters[start])
            }
            end = cursor
            while end < characters.count, width + Self.width(of: characters[end]) <= room {
                width += Self.width(of: characters[end])
                end += 1
            }
        }
        func shown(_ range: Range<Int>) -> String { String(characters[range]).replacing("\n", with: "↵") }
        let head = start > 0 ? "…" : "", tail = end < characters.count ? "…" : ""
        guard cursor < characters.count else { return head + shown(start..<cursor) }
        return head + shown(start..<cursor) + "\u{1B}7" + shown(cursor..<end) + tail + "\u{1B}8"
    }

    /// Columns a terminal gives a character, erring wide: East Asian wide and emoji 2, combining
    /// marks 0, others 1. A cluster counts as the most of one wide character and the sum of its
    /// scalars, since a terminal may draw each scalar on its own (a run of Hangul jamo, a family
    /// emoji it does not join, repeated skin tones): a row is then broken early, never late.
    static func width(of character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        let asOne = first.properties.isEmojiPresentation || scalars.count > 1 && first.properties.isEmoji ? 2 : width(of: first)
        guard scalars.count > 1 else { return asOne }
        return max(asOne, scalars.reduce(0) { $0 + width(of: $1) })
    }

    /// Columns a terminal gives one scalar drawn on its own, erring wide.
    static func width(of scalar: Unicode.Scalar) -> Int {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark: return 0
        default: break
        }
        if scalar.properties.isEmojiPresentation { return 2 }
        switch scalar.value {
        case 0x1100...0x115F, 0x2E80...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
            0x16FE0...0x18CFF, 0x1AFF0...0x1B2FF, 0x1F000...0x1FAFF, 0x20000...0x3FFFD:
            return 2
        default: return 1
        }
    }
}
