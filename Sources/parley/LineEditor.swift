import Foundation
import Synchronization

/// The interactive client's input line, in raw mode when standard input is a terminal.
///
/// Rules: what the user has typed stays on the last line of the screen; a line printed meanwhile
/// (an incoming message) is written above it, and the input is drawn again below, so the two never
/// mix. Characters are echoed whole (東京, é, 👍); Backspace removes a whole character (emoji and
/// accents included); ← → Home End (and Ctrl-A, Ctrl-E) move the cursor, Delete removes the
/// character under it, Ctrl-U what is before it; Enter submits the whole line; Ctrl-C and Ctrl-D on
/// an empty line quit; other escape sequences and pasted terminal codes are ignored whole, never
/// typed. Every edit is reported (the chat announces typing while you type).
/// Without a terminal (a pipe, a script) it reads plain lines and changes nothing on screen.
final class LineEditor: Sendable {
    static let shared = LineEditor()

    private struct State {
        var raw = false
        var line = EditedLine()
        var original = termios()
    }

    private let state = Mutex(State())
    let prompt = "› "

    var isRaw: Bool { state.withLock { $0.raw } }

    /// Lines submitted, and every edit of the line being typed (as the text so far).
    func start(onEdit: @escaping @Sendable (String) -> Void) -> AsyncStream<String> {
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
            Thread.detachNewThread {
                while let line = readLine() { continuation.yield(line) }
                continuation.finish()
            }
            return lines
        }
        state.withLock { state in
            tcgetattr(STDIN_FILENO, &state.original)
            var raw = state.original
            raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG)
            tcsetattr(STDIN_FILENO, TCSANOW, &raw)
            state.raw = true
        }
        write(prompt)
        Thread.detachNewThread { [self] in
            var byte: UInt8 = 0
            var keys = KeyDecoder()
            while Foundation.read(STDIN_FILENO, &byte, 1) == 1 {
                switch keys.feed(byte) {
                case .interrupt:
                    continuation.finish()
                    return
                case .endOfInput where state.withLock({ $0.line.text.isEmpty }):  // Ctrl-D on an empty line
                    continuation.finish()
                    return
                case .submit:
                    let line = state.withLock { state in
                        defer { state.line = EditedLine() }; return state.line.text
                    }
                    write("\r\n" + prompt)
                    onEdit("")
                    continuation.yield(line)
                case .endOfInput, .nothing:
                    break
                case let key:
                    let (change, text) = state.withLock { state in (state.line.apply(key), state.line.text) }
                    switch change {
                    case .none: break
                    case .appended(let typed): write(typed)
                    case .edited, .moved: redraw()
                    }
                    if change.changesText { onEdit(text) }
                }
            }
            continuation.finish()
        }
        return lines
    }

    /// Prints a line above the input being typed (or plainly, without a terminal).
    func printAbove(_ line: String) {
        guard isRaw else {
            write(line + "\n")
            return
        }
        let input = state.withLock { $0.line.drawn }
        write("\r\u{1B}[2K" + line + "\r\n" + prompt + input)
    }

    /// Leaves the terminal as it was.
    func stop() {
        state.withLock { state in
            guard state.raw else { return }
            tcsetattr(STDIN_FILENO, TCSANOW, &state.original)
            state.raw = false
        }
        write("\r\u{1B}[2K")
    }

    private func redraw() {
        let input = state.withLock { $0.line.drawn }
        write("\r\u{1B}[2K" + prompt + input)
    }

    private func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

/// Bytes from a raw terminal as keys: whole UTF-8 characters, and escape sequences swallowed whole
/// (`ESC [ … final`, `ESC O x`, `ESC x`), so an arrow key or a pasted colour code never puts
/// `[D` or `[31m` into a message.
struct KeyDecoder {
    enum Key: Equatable {
        case text(String), submit, erase, interrupt, endOfInput, nothing
        case left, right, home, end, delete, eraseToStart
    }

    private enum Escape { case none, started, csi, ss3 }
    private var escape = Escape.none
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
            return Self.key(final: byte, parameters: String(decoding: parameters, as: UTF8.self))
        case .ss3:
            escape = .none
            return Self.key(final: byte, parameters: "")
        case .none: break
        }
        if needed > 0 {
            guard byte & 0xC0 == 0x80 else {  // a broken character is dropped
                (pending, needed) = ([], 0)
                return feed(byte)
            }
            pending.append(byte)
            needed -= 1
            guard needed == 0 else { return .nothing }
            defer { pending = [] }
            return .text(String(decoding: pending, as: UTF8.self))
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
