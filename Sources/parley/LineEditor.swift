import Foundation
import Synchronization

/// The interactive client's input line, in raw mode when standard input is a terminal.
///
/// Rules: what the user has typed stays on the last line of the screen; a line printed meanwhile
/// (an incoming message) is written above it, and the input is drawn again below, so the two never
/// mix. Backspace removes a whole character (emoji and accents included); Enter submits; Ctrl-C and
/// Ctrl-D on an empty line quit. Every edit is reported (the chat announces typing while you type).
/// Without a terminal (a pipe, a script) it reads plain lines and changes nothing on screen.
final class LineEditor: Sendable {
    static let shared = LineEditor()

    private struct State {
        var raw = false
        var input: [UInt8] = []
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
            while Foundation.read(STDIN_FILENO, &byte, 1) == 1 {
                switch byte {
                case 0x03:  // Ctrl-C
                    continuation.finish()
                    return
                case 0x04 where state.withLock({ $0.input.isEmpty }):  // Ctrl-D on an empty line
                    continuation.finish()
                    return
                case 0x0D, 0x0A:
                    let line = state.withLock { state in
                        defer { state.input = [] }; return String(decoding: state.input, as: UTF8.self)
                    }
                    write("\r\n" + prompt)
                    onEdit("")
                    continuation.yield(line)
                case 0x7F, 0x08:
                    let text = state.withLock { state in
                        var text = String(decoding: state.input, as: UTF8.self)
                        if !text.isEmpty { text.removeLast() }
                        state.input = Array(text.utf8)
                        return text
                    }
                    redraw()
                    onEdit(text)
                case 0x1B, 0..<0x20:
                    break  // escape sequences and other control keys are not editing
                default:
                    let text = state.withLock { state in
                        state.input.append(byte); return String(decoding: state.input, as: UTF8.self)
                    }
                    write(String(decoding: [byte], as: UTF8.self))
                    if byte < 0x80 || byte >= 0xC0 { onEdit(text) }
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
        let input = state.withLock { String(decoding: $0.input, as: UTF8.self) }
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
        let input = state.withLock { String(decoding: $0.input, as: UTF8.self) }
        write("\r\u{1B}[2K" + prompt + input)
    }

    private func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
