/// Bytes from a raw terminal as keys: whole UTF-8 characters, and escape sequences swallowed whole
/// (`ESC [ … final`, `ESC O x`, `ESC x`), so an arrow key or a pasted colour code never puts
/// `[D` or `[31m` into a message; C1 controls and direction overrides are dropped.
struct KeyDecoder {
    enum Key: Equatable {
        case text(String), submit, erase, interrupt, endOfInput, nothing
        case left, right, home, end, delete, eraseToStart
        /// The end of a bracketed paste (`ESC [ 201 ~`); its start is kept in ``isPasting``.
        case pasteEnd
    }

    private enum Escape { case none, started, csi, ss3 }
    private var escape = Escape.none
    /// Inside a bracketed paste: a line break is text, not Enter, and control keys mean nothing.
    private(set) var isPasting = false
    private var afterCarriageReturn = false
    private var parameters: [UInt8] = []
    private var pending: [UInt8] = []
    private var needed = 0

    mutating func feed(_ byte: UInt8) -> Key {
        switch escape {
        case .started:
            escape = byte == 0x5B ? .csi : byte == 0x4F ? .ss3 : .none
            parameters = []
            return .nothing
        case .csi:
            guard (0x40...0x7E).contains(byte) else {  // parameters, until the final byte
                if parameters.count < 16 { parameters.append(byte) }
                return .nothing
            }
            escape = .none
            switch (byte, String(decoding: parameters, as: UTF8.self)) {
            case (0x7E, "200"):
                isPasting = true
                return .nothing
            case (0x7E, "201"):
                isPasting = false
                return .pasteEnd
            case (_, let parameters): return isPasting ? .nothing : Self.key(final: byte, parameters: parameters)
            }
        case .ss3:
            escape = .none
            return isPasting ? .nothing : Self.key(final: byte, parameters: "")
        case .none: break
        }
        defer { afterCarriageReturn = byte == 0x0D }
        if needed > 0 {
            guard byte & 0xC0 == 0x80 else {  // a broken character is dropped
                (pending, needed) = ([], 0)
                return feed(byte)
            }
            pending.append(byte)
            needed -= 1
            guard needed == 0 else { return .nothing }
            defer { pending = [] }
            let text = String(decoding: pending, as: UTF8.self)
            // C1 controls (a terminal acts on them, and no message may hold one) and direction
            // overrides (they would turn the input line around) are dropped, as in others' text.
            guard let scalar = text.unicodeScalars.first, !TerminalText.isControl(scalar), !TerminalText.isDirectionControl(scalar) else {
                return .nothing
            }
            return .text(text)
        }
        if isPasting, byte < 0x20, byte != 0x1B {  // a pasted line break (CR LF once) or tab; no control key
            switch byte {
            case 0x0A where afterCarriageReturn: return .nothing
            case 0x0D, 0x0A: return .text("\n")
            case 0x09: return .text(" ")
            default: return .nothing
            }
        }
        switch byte {
        case 0x1B: escape = .started
        case 0x01: return .home  // Ctrl-A
        case 0x03: return .interrupt
        case 0x04: return .endOfInput
        case 0x05: return .end  // Ctrl-E
        case 0x15: return .eraseToStart  // Ctrl-U
        case 0x0D, 0x0A: return .submit
        case 0x7F, 0x08: return .erase
        case 0x20..<0x7F: return .text(String(UnicodeScalar(byte)))
        case 0xC2...0xDF: (pending, needed) = ([byte], 1)
        case 0xE0...0xEF: (pending, needed) = ([byte], 2)
        case 0xF0...0xF4: (pending, needed) = ([byte], 3)
        default: break  // other control keys, and bytes that start no UTF-8 character
        }
        return .nothing
    }

    /// The editing keys among escape sequences (xterm's and the VT220's); the rest mean nothing.
    private static func key(final: UInt8, parameters: String) -> Key {
        switch (UnicodeScalar(final), parameters) {
        case ("D", ""): .left
        case ("C", ""): .right
        case ("H", ""), ("~", "1"), ("~", "7"): .home
        case ("F", ""), ("~", "4"), ("~", "8"): .end
        case ("~", "3"): .delete
        default: .nothing
        }
    }
}
