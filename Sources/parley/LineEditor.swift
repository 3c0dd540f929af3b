import Foundation
import Synchronization

/// The interactive client's input line, in raw mode when standard input is a terminal.
///
/// Rules: what the user has typed stays on the last line of the screen; a line printed meanwhile
/// (an incoming message) is written above it, and the input is drawn again below, so the two never
/// mix. Characters are echoed whole (東京, é, 👍); Backspace removes a whole character (emoji and
/// accents included); ← → Home End (and Ctrl-A, Ctrl-E) move the cursor, Delete removes the
/// character under it, Ctrl-U what is before it; Enter submits the whole line; Ctrl-C clears a line
/// being typed and quits on an empty one, Ctrl-D quits on an empty line; other escape sequences and
/// pasted terminal codes are ignored whole, never typed. A paste (bracketed paste, which the editor
/// turns on) goes into the line whole, its line breaks kept, and is sent only on Enter: pasted lines
/// never run as commands one by one. A line wider than the terminal scrolls sideways on its one row.
/// Every edit is reported (the chat announces typing while you type; a paste once, at its end).
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
            raw.c_iflag &= ~tcflag_t(ICRNL)  // CR as sent: a pasted CR LF is one line break, not two
            tcsetattr(STDIN_FILENO, TCSANOW, &raw)
            state.raw = true
        }
        write(Self.bracketedPasteOn + prompt)
        leaveTerminalAsItWasOnSignals()
        Thread.detachNewThread { [self] in
            var byte: UInt8 = 0
            var keys = KeyDecoder()
            while Foundation.read(STDIN_FILENO, &byte, 1) == 1 {
                switch keys.feed(byte) {
                case .interrupt where state.withLock({ !$0.line.text.isEmpty }):  // Ctrl-C clears what is typed
                    state.withLock { $0.line = EditedLine() }
                    redraw()
                    onEdit("")
                case .interrupt:
                    continuation.finish()
                    return
                case .pasteEnd:
                    redraw()
                    onEdit(state.withLock { $0.line.text })
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
                case let key where keys.isPasting:  // drawn and reported once, at the paste's end
                    _ = state.withLock { $0.line.apply(key) }
                case let key:
                    let columns = Self.inputColumns
                    let (change, text, fits) = state.withLock { state in
                        let change = state.line.apply(key)
                        return (change, state.line.text, state.line.fits(in: columns))
                    }
                    switch change {
                    case .none: break
                    case .appended(let typed) where fits: write(typed)
                    case .appended, .edited, .moved: redraw()
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
            // `tail` on a terminal wraps as the interactive client does (rule 4 of TerminalText);
            // into a pipe or a file a line stays whole.
            write((isatty(STDOUT_FILENO) == 1 ? TerminalText.wrapped(line, columns: Self.terminalColumns) : line) + "\n")
            return
        }
        let columns = Self.inputColumns
        let input = state.withLock { $0.line.drawn(columns: columns) }
        write("\r\u{1B}[2K" + TerminalText.wrapped(line, columns: Self.terminalColumns) + "\r\n" + prompt + input)
    }

    /// The columns the input may take: the terminal's width, less the prompt and one to spare.
    private static var inputColumns: Int { max(terminalColumns - 3, 8) }

    /// The terminal's width (80 when it does not say).
    private static var terminalColumns: Int {
        var size = winsize()
        return ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 80
    }

    private static let bracketedPasteOn = "\u{1B}[?2004h", bracketedPasteOff = "\u{1B}[?2004l"

    /// Ended by a signal it can catch (SIGTERM, `kill`; SIGHUP, the terminal closed), the process
    /// first leaves the terminal as it was: not in raw mode without echo, with bracketed paste on.
    /// (Nothing can be done for SIGKILL.) What is written offline is saved as it is written.
    private func leaveTerminalAsItWasOnSignals() {
        // One serial queue for both (a closing terminal sends both at once), and `_exit`: the first
        // ends the process there, without running exit handlers while other threads still work.
        let queue = DispatchQueue(label: "parley.chat.signals")
        for number in [SIGTERM, SIGHUP] {
            signal(number, SIG_IGN)  // delivered to the source below instead
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [self] in
                stop()
                _exit(128 + number)
            }
            source.resume()
            Self.signalSources.append(source)
        }
    }

    /// Kept for the process's life (set once, at start).
    nonisolated(unsafe) private static var signalSources: [any DispatchSourceSignal] = []

    /// Leaves the terminal as it was.
    func stop() {
        state.withLock { state in
            guard state.raw else { return }
            tcsetattr(STDIN_FILENO, TCSANOW, &state.original)
            state.raw = false
        }
        write(Self.bracketedPasteOff + "\r\u{1B}[2K")
    }

    private func redraw() {
        let columns = Self.inputColumns
        let input = state.withLock { $0.line.drawn(columns: columns) }
        write("\r\u{1B}[2K" + prompt + input)
    }

    /// All of `text`, or a quiet exit when the reader has gone (`parley chat tail | head -1`).
    private func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Foundation.write(STDOUT_FILENO, $0.baseAddress, $0.count) }
            if written > 0 {
                bytes = bytes.dropFirst(written)
            } else if errno == EPIPE {
                exit(0)
            } else if errno != EINTR && errno != EAGAIN {
                return
            }
        }
    }
}
