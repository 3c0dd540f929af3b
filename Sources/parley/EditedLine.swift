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
        case .text(let typed):
            // Joined with its neighbours and split again: a skin tone or an accent typed after its
            // base character becomes one character with it.
            let atEnd = cursor == characters.count
            let before = String(characters[..<cursor]) + typed
            characters = Array(before + String(characters[cursor...]))
            cursor = min(before.count, characters.count)
            return atEnd ? .appended(typed) : .edited
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

    /// The line as drawn after the prompt: the text, then the cursor put back to its place. The
    /// terminal saves and restores the place (ESC 7, ESC 8), so a wide character (東, 👍) moves it
    /// as far as the terminal draws it.
    var drawn: String {
        cursor == characters.count ? text : String(characters[..<cursor]) + "\u{1B}7" + String(characters[cursor...]) + "\u{1B}8"
    }
}
