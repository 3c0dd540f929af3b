import Foundation

/// One line to standard output, written at once. `print` is block-buffered when the output is a
/// pipe or a file, so `parley chat tail | …` would show nothing until exit (and lose it on a kill).
/// In the interactive client the line goes above what the user is typing (``LineEditor``).
func say(_ line: String) {
    LineEditor.shared.printAbove(TerminalText.shown(line))
}

/// What others wrote, made safe to print among the client's own lines. The server refuses control
/// characters in texts but line breaks and tabs, and lets direction marks through.
enum TerminalText {
    /// A line break in someone's text starts its next line with `  ┆ `, so no text can print a
    /// line that looks like another message or a group's notice at the start of a row; direction
    /// overrides, embeddings and isolates are dropped, so none can turn around what follows them
    /// on the row (the marks, the next line) in a terminal that reorders text.
    static func shown(_ line: String) -> String {
        guard line.unicodeScalars.contains(where: { $0 == "\n" || $0 == "\r" || isDirectionControl($0) }) else { return line }
        var shown = String.UnicodeScalarView()
        for scalar in line.unicodeScalars where !isDirectionControl(scalar) && scalar != "\r" {
            shown.append(scalar)
            if scalar == "\n" { shown.append(contentsOf: "  ┆ ".unicodeScalars) }
        }
        return String(shown)
    }

    static func isDirectionControl(_ scalar: Unicode.Scalar) -> Bool {
        (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }
}

/// A failure at run time (the server refused, a user does not exist): one line and exit status 1,
/// unlike a mistake in the command line, which prints the usage and exits 64.
struct ChatFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
