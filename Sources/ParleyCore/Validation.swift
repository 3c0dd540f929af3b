import Foundation

/// The rules for user input, shared by the server (which enforces them) and clients (which apply
/// them before sending, so the two can never disagree).
public enum Validation {
    /// At most this many `Character`s (grapheme clusters) in a message, after trimming.
    public static let maxMessageCharacters = 10_000
    /// Clients show a counter past this many characters.
    public static let messageCounterThreshold = 9_000

    /// Why a value was refused, as the API reports it.
    public struct Failure: Error, Equatable, Sendable {
        /// The error code the API answers with.
        public var code: ErrorCode
        /// A safe message for the user.
        public var message: String
        /// Creates a failure.
        public init(_ code: ErrorCode, _ message: String) {
            self.code = code
            self.message = message
        }
    }

    /// Normalizes and checks a message text.
    ///
    /// Rules, in order: line endings `\r\n` and `\r` become `\n`; leading and trailing whitespace and
    /// newlines are trimmed; the result must show something (not only invisible characters:
    /// ``isBlankMessageText(_:)``), be at most ``maxMessageCharacters`` characters,
    /// free of control characters other than newline and tab (C0, DEL, C1), and without a character
    /// of more than ``maxScalarsPerCharacter`` scalars.
    /// Swift strings are always valid Unicode, so invalid UTF-8 is refused where bytes become strings.
    /// - Returns: the text to store.
    public static func messageText(_ raw: String) -> Result<String, Failure> {
        let text = normalizedMessageText(raw)
        if text.isEmpty { return .failure(Failure(.textEmpty, "Message text is empty.")) }
        if text.unicodeScalars.contains(where: isForbiddenControl) {
            return .failure(Failure(.textInvalidCharacters, "Message text contains control characters."))
        }
        if !showsSomething(text) { return .failure(Failure(.textEmpty, "Message text has only invisible characters.")) }
        // Count characters only when the UTF-8 size could exceed the limit: cheap for short texts.
        if text.utf8.count > maxMessageCharacters, text.count > maxMessageCharacters {
            return .failure(Failure(.textTooLong, "Message text is longer than \(maxMessageCharacters) characters."))
        }
        if holdsOverloadedCharacter(text) {
            return .failure(Failure(.textInvalidCharacters, "Message text has a character carrying more than \(maxScalarsPerCharacter) accents or marks."))
        }
        return .success(text)
    }

    /// The most Unicode scalars one character (grapheme cluster) may hold in a message, a name or a
    /// title. Unicode's stream-safe text (UAX #15) puts at most 30 combining marks on a character and
    /// the longest emoji sequences have 10 scalars; beyond that is a pile of marks, which made one
    /// "character" of 200 KB that every quote of it repeated in every frame and page.
    public static let maxScalarsPerCharacter = 32

    /// Whether some character of `text` holds more than ``maxScalarsPerCharacter`` scalars.
    public static func holdsOverloadedCharacter(_ text: String) -> Bool {
        // Cheap for most texts: too few scalars, or ASCII (a character is one scalar, or "\r\n").
        guard text.unicodeScalars.count > maxScalarsPerCharacter, text.utf8.contains(where: { $0 >= 0x80 }) else { return false }
        return text.contains { $0.unicodeScalars.count > maxScalarsPerCharacter }
    }

    /// Whether `raw` would be an empty bubble: nothing but whitespace and invisible characters
    /// (zero-width spaces, Hangul fillers, the blank Braille pattern: ``isInvisible(_:)``). A file's
    /// caption like that is no caption; a message like that is refused (``messageText(_:)``).
    public static func isBlankMessageText(_ raw: String) -> Bool {
        !showsSomething(raw)
    }

    /// The first two steps of ``messageText(_:)``: line endings unified, then trimmed. Clients count
    /// characters on this to show how many are left.
    public static func normalizedMessageText(_ raw: String) -> String {
        // Scalars, not Characters: "\r\n" is one Character, which `contains("\r")` does not find.
        trimmed(raw.unicodeScalars.contains("\r") ? raw.replacing("\r\n", with: "\n").replacing("\r", with: "\n") : raw)
    }

    /// Usernames: 3–32 characters of `a–z`, `0–9`, `_` and `.`, compared case-insensitively (stored lowercase).
    public static func username(_ raw: String) -> Result<String, Failure> {
        let name = raw.lowercased()
        let allowed = name.unicodeScalars.allSatisfy { s in
            (s >= "a" && s <= "z") || (s >= "0" && s <= "9") || s == "_" || s == "."
        }
        guard (3...32).contains(name.unicodeScalars.count), allowed else {
            return .failure(Failure(.invalidUsername, "Username must be 3–32 characters: letters, digits, '_' or '.'."))
        }
        return .success(name)
    }

    /// Display names: trimmed, 1–64 characters, no control characters, not "You" (which every
    /// client shows for the user's own messages, so another's name "You" would pass for theirs),
    /// no "@" in any width nor letters in circles (clients add "(@username)" to names that read
    /// alike, ``LookAlikeNames``: a name "Ada (@ada)" would fake it), no fillers
    /// (``isFiller(_:)``), and each run of spaces kept as one (``spacesCollapsed(_:)``).
    public static func displayName(_ raw: String) -> Result<String, Failure> {
        let name = spacesCollapsed(trimmed(raw))
        guard (1...64).contains(name.count), !name.unicodeScalars.contains(where: isForbiddenInName), showsSomething(name) else {
            return .failure(
                Failure(.invalidDisplayName, "Display name must be 1–64 characters, something visible, without control or direction-override characters."))
        }
        guard !holdsOverloadedCharacter(name) else {
            return .failure(Failure(.invalidDisplayName, "Display name has a character carrying more than \(maxScalarsPerCharacter) accents or marks."))
        }
        guard !isReservedName(name) else {
            return .failure(Failure(.invalidDisplayName, "\"You\" is how Parley shows everyone their own messages: choose another display name."))
        }
        guard !name.decomposedStringWithCompatibilityMapping.unicodeScalars.contains("@"), !name.unicodeScalars.contains(where: isDrawnLikeAt) else {
            return .failure(Failure(.invalidDisplayName, "Display name cannot contain \"@\" or letters in circles: they mark usernames."))
        }
        guard !name.unicodeScalars.contains(where: isFiller) else {
            return .failure(Failure(.invalidDisplayName, "Display name cannot hold blank fillers or zero-width spaces."))
        }
        return .success(name)
    }

    /// Letters in circles and enclosing marks (`ⓐ`, `Ⓐ`, `a` + U+20DD), which draw like "@": a name
    /// "Ada (ⓐada)" would fake the clients' username mark (``LookAlikeNames``).
    static func isDrawnLikeAt(_ scalar: Unicode.Scalar) -> Bool {
        // Letters in circles or parentheses (not digits: "Room ①"), and enclosing marks but the keycap ("Team 1️⃣").
        let circled: [ClosedRange<UInt32>] = [0x249C...0x24E9, 0x1F12B...0x1F12F, 0x1F150...0x1F169]
        return circled.contains { $0.contains(scalar.value) } || scalar.properties.generalCategory == .enclosingMark && scalar.value != 0x20E3
    }

    /// What a name has no use for and pads with: blank fillers (U+2800, the Hangul fillers), the
    /// object replacement character (drawn as nothing), zero-width spaces and joiners of words, the
    /// Mongolian vowel separator. Runs of them pushed a look-alike name's "(@username)" out of sight.
    static func isFiller(_ scalar: Unicode.Scalar) -> Bool {
        [0x2800, 0x115F, 0x1160, 0x3164, 0xFFA0, 0xFFFC, 0x200B, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xFEFF, 0x180E].contains(scalar.value)
    }

    /// A name with each run of spaces (of any width: U+3000, U+2003, no-break) kept as its first
    /// space: a double space is a typo, and a run of them padding.
    static func spacesCollapsed(_ name: String) -> String {
        var kept = String.UnicodeScalarView()
        for scalar in name.unicodeScalars {
            if scalar.properties.isWhitespace, let last = kept.last, last.properties.isWhitespace { continue }
            kept.append(scalar)
        }
        return String(kept)
    }

    /// Whether a name reads "You" (any case, any width, with accents, invisible characters or
    /// spaces in it, or letters of other alphabets that look like y, o and u: "Yοu" with a Greek
    /// omicron): the name clients give the user themselves. Clients showing a name from a server
    /// that let one through add the username to it.
    public static func isReservedName(_ name: String) -> Bool {
        let visible = name.decomposedStringWithCompatibilityMapping.unicodeScalars.filter { !isInvisible($0) }
        guard visible.count == 3 else { return false }
        let letters = visible.map { Character(lookalikes[$0] ?? $0).lowercased() }
        return letters.joined() == "you"
    }

    /// Letters drawn like a Latin letter in common fonts, as that letter: some of Unicode's
    /// confusables (Greek, Cyrillic, Armenian, Cherokee, small capitals, digits, …). y, o and u
    /// for ``isReservedName(_:)``; the rest for ``LookAlikeNames``. The web client has the same
    /// table (format.js `LOOKALIKES`).
    static let lookalikes: [Unicode.Scalar: Unicode.Scalar] = {
        var table: [Unicode.Scalar: Unicode.Scalar] = [:]
        let groups: [(Unicode.Scalar, [UInt32])] = [
            ("y", [0x03A5, 0x03D2, 0x03B3, 0x04AE, 0x04AF, 0x0423, 0x0443, 0x028F, 0x0263, 0x13A9, 0x10E7, 0x1EFF]),
            ("o", [0x0030, 0x039F, 0x03BF, 0x03C3, 0x03C2, 0x041E, 0x043E, 0x0555, 0x0585, 0x05E1, 0x1D0F, 0x1D11, 0x2C9E, 0x2C9F, 0x0D20, 0x0B20, 0x101D]),
            ("u", [0x03C5, 0x054D, 0x057D, 0x1D1C, 0x028A, 0x028B, 0xA79F, 0xAB4E, 0x1959, 0x144C, 0x118D8]),
            ("a", [0x0391, 0x03B1, 0x0410, 0x0430]),
            ("b", [0x0392, 0x0412, 0x042C]),
            ("c", [0x0421, 0x0441, 0x03F2, 0x03F9]),
            ("d", [0x0501]),
            ("e", [0x0395, 0x0415, 0x0435]),
            ("g", [0x0261]),
            ("h", [0x0397, 0x041D, 0x04BA, 0x04BB]),
            ("j", [0x0408, 0x0458, 0x03F3, 0x0237]),
            ("k", [0x039A, 0x03BA, 0x041A]),
            // I and l are drawn alike, and I is i's capital: all three (and their look-alikes) are one.
            ("l", [0x0049, 0x0069, 0x0031, 0x007C, 0x01C0, 0x0399, 0x0406, 0x04C0, 0x04CF, 0x0131, 0x03B9, 0x0456]),
            ("m", [0x039C, 0x041C]),
            ("n", [0x039D]),
            ("p", [0x03A1, 0x03C1, 0x0420, 0x0440]),
            ("q", [0x051A, 0x051B]),
            ("s", [0x0405, 0x0455]),
            ("t", [0x03A4, 0x0422]),
            ("v", [0x03BD]),
            ("w", [0x051C, 0x051D]),
            ("x", [0x03A7, 0x03C7, 0x0425, 0x0445]),
            ("z", [0x0396]),
            // Latin small capitals, Cherokee, Lisu, Canadian syllabics, Coptic and a few symbols drawn like Latin letters.
            ("a", [0xA4EE]), ("b", [0xA4D0]), ("c", [0xA4DA]), ("d", [0xA4D3]), ("e", [0xA4F0]), ("g", [0xA4D6]), ("h", [0xA4E7]),
            ("j", [0xA4D9]), ("k", [0xA4D7]), ("l", [0xA4F2, 0xA4E1]), ("m", [0xA4DF]), ("n", [0xA4E0]), ("o", [0xA4F3, 0x0966, 0x1040]),
            ("p", [0xA4D1]), ("r", [0xA4E3]), ("s", [0xA4E2]), ("t", [0xA4D4]), ("u", [0xA4F4]), ("v", [0xA4E6]), ("w", [0xA4EA]),
            ("x", [0xA4EB]), ("y", [0xA4EC]), ("z", [0xA4DC]),
            ("a", [0x1D00, 0x0251, 0x237A, 0x13AA, 0x15C5, 0x2C80, 0x2C81]),
            ("b", [0x0299, 0x13F4, 0x15F7, 0x2C82]),
            ("c", [0x1D04, 0x13DF, 0x1455, 0x2CA4, 0x2CA5]),
            ("d", [0x1D05, 0x13A0, 0x15EA]),
            ("e", [0x1D07, 0x13AC, 0x2C88]),
            ("g", [0x0262, 0x13C0]),
            ("h", [0x029C, 0x13BB, 0x157C, 0x2C8E]),
            ("j", [0x1D0A, 0x13AB, 0x148D]),
            ("k", [0x1D0B, 0x13E6, 0x2C94]),
            ("l", [0x026A, 0x029F, 0x0269, 0x13DE, 0x14AA, 0x2C92, 0x2CD0]),
            ("m", [0x1D0D, 0x13B7, 0x2C98]),
            ("n", [0x0274, 0x2C9A]),
            ("p", [0x1D18, 0x13E2, 0x146D, 0x2CA2, 0x2CA3]),
            ("r", [0x0280, 0x13D2]),
            ("s", [0xA731, 0x13DA, 0x1515]),
            ("t", [0x1D1B, 0x13A2, 0x2CA6]),
            ("v", [0x1D20, 0x0474, 0x0475, 0x13D9, 0x142F, 0x2228]),
            ("w", [0x1D21, 0x13B3, 0x15EF]),
            ("x", [0x2CAC]),
            ("z", [0x1D22, 0x13C3]),
            // Found by a hostile pass: more e's, the zeros of other Indic scripts, Thai, Lao, Khmer and the
            // Arabic-Indic five, a syllabic d.
            ("e", [0x0454, 0x04BD, 0x04D9, 0x0259, 0x212E, 0xAB32]),
            ("o", [0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6, 0x0D66, 0x0E50, 0x0ED0, 0x17E0, 0x0665]),
            ("d", [0x146F]),
        ]
        for (latin, codes) in groups {
            for code in codes { if let scalar = Unicode.Scalar(code) { table[scalar] = latin } }
        }
        // Cherokee's small letters are drawn as its capitals (U+AB70… for U+13A0…, U+13F8… for U+13F0…).
        for (scalar, latin) in table {
            let offset: UInt32? =
                switch scalar.value {
                case 0x13A0...0x13EF: 0xAB70 - 0x13A0
                case 0x13F0...0x13F5: 8
                default: nil
                }
            if let offset, let small = Unicode.Scalar(scalar.value + offset) { table[small] = latin }
        }
        return table
    }()

    /// Longest password, in Unicode scalars (servers pre-hash before bcrypt, so all of it counts).
    public static let maxPasswordLength = 128

    /// Passwords: 8–128 Unicode scalars without control characters (a NUL would end the password
    /// early in C libraries: `"abc\0xyz"` could match `"abc"`).
    public static func password(_ raw: String) -> Result<String, Failure> {
        guard (8...maxPasswordLength).contains(raw.unicodeScalars.count) else {
            return .failure(Failure(.invalidPassword, "Password must be 8–\(maxPasswordLength) characters long."))
        }
        guard !raw.unicodeScalars.contains(where: { isForbiddenControl($0) || $0 == "\n" || $0 == "\t" }) else {
            return .failure(Failure(.invalidPassword, "Password must not contain control characters."))
        }
        return .success(raw)
    }

    /// Shortest user search: one- and two-letter searches would list the whole directory.
    public static let minSearchLength = 3

    /// User searches: 3–64 Unicode scalars (as typed: clients trim), no control characters.
    /// Returns the lowercased query.
    public static func searchQuery(_ raw: String) -> Result<String, Failure> {
        guard (minSearchLength...64).contains(raw.unicodeScalars.count), !raw.unicodeScalars.contains(where: isForbiddenControl) else {
            return .failure(Failure(.invalidQuery, "'query' must be \(minSearchLength)–64 characters without control characters."))
        }
        return .success(raw.lowercased())
    }

    /// Whether `text` holds a control character other than a tab or a line break: NUL among them,
    /// which PostgreSQL refuses in text. Searches, addresses and ids holding one are refused where
    /// they arrive, with the route's own error.
    public static func holdsControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0 != "\r" && isForbiddenControl($0) }
    }

    static func isForbiddenControl(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if v == 0x0A || v == 0x09 { return false }
        return v < 0x20 || v == 0x7F || (0x80...0x9F).contains(v)
    }

    /// Characters that reorder the text around them: in a name they make it read as another name
    /// ("Ada\u{202E}nimda" shows as "Adaadmin"), so names refuse them (message text keeps them).
    static func isDirectionOverride(_ scalar: Unicode.Scalar) -> Bool {
        (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }

    /// Message text as a notification or another plain display draws it: a direction override
    /// (U+202D, U+202E) made a zero-width space, so "file \u{202E}gpj.exe" cannot read "file
    /// exe.jpg" (the web client's `shownText`). Message text keeps them as sent.
    public static func overridesNeutralized(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0 == "\u{202D}" || $0 == "\u{202E}" }) else { return text }
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars { scalars.append(scalar == "\u{202D}" || scalar == "\u{202E}" ? "\u{200B}" : scalar) }
        return String(scalars)
    }

    /// What a name (display name, group title) may not hold: controls, line breaks, direction overrides.
    static func isForbiddenInName(_ scalar: Unicode.Scalar) -> Bool {
        isForbiddenControl(scalar) || scalar == "\n" || scalar == "\t" || scalar == "\u{2028}" || scalar == "\u{2029}" || isDirectionOverride(scalar)
    }

    /// Whether a name shows anything: some scalar that is not invisible (``isInvisible(_:)``).
    static func showsSomething(_ name: String) -> Bool {
        name.unicodeScalars.contains { !isInvisible($0) }
    }

    /// Spaces, format characters, marks with nothing to sit on, and the fillers that draw nothing
    /// (Hangul fillers U+115F, U+1160, U+3164, U+FFA0 and other default-ignorable scalars; the
    /// blank Braille pattern U+2800).
    static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.properties.isDefaultIgnorableCodePoint || scalar.value == 0x2800 { return true }
        switch scalar.properties.generalCategory {
        case .format, .nonspacingMark, .enclosingMark, .spaceSeparator, .lineSeparator, .paragraphSeparator, .control: return true
        default: return false
        }
    }

    static func trimmed(_ s: String) -> String {
        guard let first = s.firstIndex(where: { !$0.isWhitespace }) else { return "" }
        let last = s.lastIndex(where: { !$0.isWhitespace }) ?? first
        return String(s[first...last])
    }
}
