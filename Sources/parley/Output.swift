import Foundation

/// One line to standard output, written at once. `print` is block-buffered when the output is a
/// pipe or a file, so `parley chat tail | …` would show nothing until exit (and lose it on a kill).
/// In the interactive client the line goes above what the user is typing (``LineEditor``).
func say(_ line: String) {
    LineEditor.shared.printAbove(line)
}

/// A failure at run time (the server refused, a user does not exist): one line and exit status 1,
/// unlike a mistake in the command line, which prints the usage and exits 64.
struct ChatFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
