extension Validation {
    /// Most members a group may have on any server (`--max-group-members` is at most this).
    public static let maxGroupMembersCeiling = 1_024
    /// Members of a group unless the server is configured otherwise.
    public static let defaultMaxGroupMembers = 256
    /// Longest group title, in `Character`s.
    public static let maxTitleCharacters = 100

    /// Group titles: trimmed, 1–100 characters, no control characters (newlines and tabs included),
    /// and something visible (not only zero-width or direction marks).
    public static func groupTitle(_ raw: String) -> Result<String, Failure> {
        let title = trimmed(raw)
        guard (1...maxTitleCharacters).contains(title.count), !title.unicodeScalars.contains(where: isForbiddenInName), showsSomething(title) else {
            return .failure(
                Failure(.invalidTitle, "Title must be 1–\(maxTitleCharacters) characters, something visible, without control or direction-override characters.")
            )
        }
        guard !holdsOverloadedCharacter(title) else {
            return .failure(Failure(.invalidTitle, "Title has a character carrying more than \(maxScalarsPerCharacter) accents or marks."))
        }
        return .success(title)
    }

    /// The usernames a text mentions: `@` followed by a username's characters (`a–z`, `0–9`, `_`,
    /// `.`), 3–32 of them, lowercased, where the `@` does not follow a letter, digit or `_` (so an
    /// e-mail address mentions nobody). A trailing `.` ends the sentence, not the name. Each name
    /// once, in order of first appearance.
    public static func mentionedUsernames(in text: String) -> [String] {
        guard text.utf8.contains(UInt8(ascii: "@")) else { return [] }
        let scalars = Array(text.unicodeScalars)
        var names: [String] = []
        var index = 0
        while index < scalars.count {
            defer { index += 1 }
            guard scalars[index] == "@" else { continue }
            if index > 0 {
                let before = scalars[index - 1]
                if before.properties.isAlphabetic || before.properties.numericType != nil || before == "_" { continue }
            }
            var end = index + 1
            while end < scalars.count, isUsernameScalar(scalars[end]) { end += 1 }
            var name = String(String.UnicodeScalarView(scalars[(index + 1)..<end])).lowercased()
            while name.hasSuffix(".") { name.removeLast() }
            if (3...32).contains(name.count), !names.contains(name) { names.append(name) }
            index = end - 1
        }
        return names
    }

    private static func isUsernameScalar(_ s: Unicode.Scalar) -> Bool {
        (s >= "a" && s <= "z") || (s >= "A" && s <= "Z") || (s >= "0" && s <= "9") || s == "_" || s == "."
    }
}
