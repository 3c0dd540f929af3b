/// The text rule of ``FileSniffer``: plain text is valid UTF-8 without binary control characters
/// that does not open like markup.
enum PlainText {
    /// Whether `bytes` are plain text. `mayContinue`: the bytes are a cut prefix of a longer file,
    /// so the last UTF-8 sequence may be incomplete (not invalid).
    static func isPlainText(_ bytes: [UInt8], mayContinue: Bool) -> Bool {
        // Nothing is not text: an empty file is a generic one.
        !bytes.isEmpty && isCleanUTF8(bytes, mayContinue: mayContinue) && !looksLikeMarkup(bytes)
    }

    /// Valid UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF, per Unicode's table
    /// 3-7) holding no control character but tab, LF, FF, CR and ESC (terminal colour codes), and
    /// no NUL: the bytes that make WHATWG's sniffing call a resource binary, plus DEL and the C1
    /// controls, which no text needs either.
    static func isCleanUTF8(_ bytes: [UInt8], mayContinue: Bool) -> Bool {
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            if lead < 0x80 {
                if lead < 0x20 && lead != 0x09 && lead != 0x0A && lead != 0x0C && lead != 0x0D && lead != 0x1B { return false }
                if lead == 0x7F { return false }
                index += 1
                continue
            }
            // The sequence's length and the range its second byte must fall in; the rest are 80...BF.
            let length: Int
            let second: ClosedRange<UInt8>
            switch lead {
            case 0xC2...0xDF: (length, second) = (2, 0x80...0xBF)
            case 0xE0: (length, second) = (3, 0xA0...0xBF)
            case 0xE1...0xEC, 0xEE...0xEF: (length, second) = (3, 0x80...0xBF)
            case 0xED: (length, second) = (3, 0x80...0x9F)
            case 0xF0: (length, second) = (4, 0x90...0xBF)
            case 0xF1...0xF3: (length, second) = (4, 0x80...0xBF)
            case 0xF4: (length, second) = (4, 0x80...0x8F)
            default: return false
            }
            let available = min(length, bytes.count - index)
            for offset in 1..<available {
                let byte = bytes[index + offset]
                guard offset == 1 ? second.contains(byte) : (0x80...0xBF).contains(byte) else { return false }
            }
            if available < length { return mayContinue }
            // U+0080...U+009F, the C1 controls, are C2 80...C2 9F.
            if lead == 0xC2 && bytes[index + 1] < 0xA0 { return false }
            index += length
        }
        return true
    }

    /// Tag names whose opening makes a file markup (WHATWG's HTML sniffing list, with SVG and
    /// MathML added): each must be followed by a byte that ends a tag name, as in a browser.
    private static let tags = [
        "html", "head", "body", "script", "iframe", "svg", "math", "title", "style", "table", "div", "a", "b", "p", "br", "h1", "font",
        "object", "embed", "meta", "link", "img", "form", "base",
    ]

    /// Whether the bytes open, after an optional UTF-8 byte order mark and whitespace, like HTML, SVG
    /// or XML: a tag from ``tags``, or `<!` (a doctype or comment) or `<?` (an XML declaration or
    /// another processing instruction) followed by anything. Such a file served as text/plain is
    /// one content-type mistake away from running script, so it is a generic file instead.
    static func looksLikeMarkup(_ bytes: [UInt8]) -> Bool {
        var index = bytes.matches([0xEF, 0xBB, 0xBF]) ? 3 : 0
        while index < bytes.count, [0x09, 0x0A, 0x0C, 0x0D, 0x20].contains(bytes[index]) { index += 1 }
        guard bytes.byte(at: index) == UInt8(ascii: "<"), let next = bytes.byte(at: index + 1) else { return false }
        if next == UInt8(ascii: "!") || next == UInt8(ascii: "?") { return true }
        let nameStart = index + 1
        for tag in tags where matchesIgnoringCase(bytes, tag, at: nameStart) {
            // The end of the bytes counts as a terminator: the rest of the tag is past the prefix.
            guard let after = bytes.byte(at: nameStart + tag.utf8.count) else { return true }
            if [0x09, 0x0A, 0x0C, 0x0D, 0x20, UInt8(ascii: ">"), UInt8(ascii: "/")].contains(after) { return true }
        }
        return false
    }

    /// Whether the ASCII lowercase `text` appears at `offset`, with ASCII letters of any case. A name
    /// cut off by the end of the bytes matches as far as it goes (`<scr`): the rest may follow.
    private static func matchesIgnoringCase(_ bytes: [UInt8], _ text: String, at offset: Int) -> Bool {
        guard offset >= 0, offset < bytes.count else { return false }
        return zip(bytes[offset...], text.utf8).allSatisfy { lowercased($0) == $1 }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
    }
}
