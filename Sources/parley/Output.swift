import Foundation

/// One line to standard output, written at once. `print` is block-buffered when the output is a
/// pipe or a file, so `parley chat tail | …` would show nothing until exit (and lose it on a kill).
/// In the interactive client the line goes above what the user is typing (``LineEditor``).
func say(_ line: String) {
    LineEditor.shared.printAbove(TerminalText.shown(line))
}

/// What others wrote, made safe to print among the client's own lines, whatever the server sent
/// (its checks are not this client's: a hostile server or a tampered connection can send anything).
enum TerminalText {
    /// Rules, each tested:
    /// 1. A line break (or a line or paragraph separator, U+2028, U+2029) in someone's text starts
    ///    its next line with `  ┆ `, so no text can print a line that looks like another message
    ///    or a group's notice at the start of a row.
    /// 2. Control characters are dropped (C0 but the line break, DEL, C1: escape sequences, bells,
    ///    carriage returns), and a tab becomes a space: nothing can move the cursor, clear the
    ///    screen, set the title or write to the clipboard (OSC 52). Bold on and off (`ESC[1m`,
    ///    `ESC[22m`), which the client prints around search matches, are the only sequences kept.
    /// 3. Direction overrides, embeddings and isolates are dropped, so none can turn around what
    ///    follows them on the row (the marks, the next line) in a terminal that reorders text.
    static func shown(_ line: String) -> String {
        guard line.unicodeScalars.contains(where: { needsCare($0) }) else { return line }
        var shown = String.UnicodeScalarView()
        var scalars = line.unicodeScalars[...]
        while let scalar = scalars.popFirst() {
            if scalar == "\u{1B}", let bold = boldSwitches.first(where: { scalars.starts(with: $0.unicodeScalars) }) {
                shown.append(scalar)
                shown.append(contentsOf: bold.unicodeScalars)
                scalars = scalars.dropFirst(bold.unicodeScalars.count)
            } else if scalar == "\n" || scalar == "\u{2028}" || scalar == "\u{2029}" {  // line and paragraph separators break too
                shown.append(contentsOf: "\n  ┆ ".unicodeScalars)
            } else if scalar == "\t" {
                shown.append(" ")
            } else if !isControl(scalar), !isDirectionControl(scalar) {
                shown.append(scalar)
            }
        }
        return String(shown)
    }

    /// Rule 4, for a terminal of `columns`: a row wider than it is broken by the client (after its
    /// last space when what is carried over is short, else where it is full), its next row starting
    /// with `  ┆ ` as after a line break, so text padded to the edge (or past it) cannot start a row
    /// of its own. Widths err wide (``EditedLine/width(of:)``): a row breaks early, never late.
    /// Bold takes no columns, and a row that breaks in bold ends it and the next takes it up after
    /// its `  ┆ `, so the mark of a continued line is never drawn as part of a match.
    static func wrapped(_ shown: String, columns: Int) -> String {
        guard columns >= 12 else { return shown }
        let continuation = Array("  ┆ ")
        var done = "", row: [Character] = [], width = 0
        // A character wider than a row by itself (a run of jamo is one) is broken between its scalars.
        // A switch is a piece of its own even where a mark follows it.
        let pieces = Self.boldAsMarks(shown).flatMap { character in
            EditedLine.width(of: character) > columns - continuation.count || character.unicodeScalars.first.map(Self.isBoldMark) == true
                ? character.unicodeScalars.map(Character.init) : [character]
        }
        var index = pieces.startIndex
        while index < pieces.endIndex {
            let character = pieces[index]
            index += 1
            if character == "\n" {
                let bold = Self.endsBold(row)
                done += String(row) + (bold ? String(boldOff) : "") + "\n"
                (row, width) = ([], 0)
                if bold {  // taken up after the mark that follows the break (rule 1)
                    let mark = pieces[index...].starts(with: continuation) ? continuation : []
                    index += mark.count
                    (row, width) = (mark + [boldOn], mark.count)
                }
                continue
            }
            let next = character == boldOn || character == boldOff ? 0 : EditedLine.width(of: character)
            if width + next > columns {
                let floor = row.starts(with: continuation) ? continuation.count : 0
                let space = row.lastIndex(of: " ").flatMap { $0 > floor ? $0 : nil }
                let carried = space.map { Array(row[($0 + 1)...]) } ?? []
                let carriedWidth = carried.reduce(0) { $0 + ($1 == boldOn || $1 == boldOff ? 0 : EditedLine.width(of: $1)) }
                let breakAt = space.flatMap { carriedWidth <= columns / 3 && continuation.count + carriedWidth + next <= columns ? $0 : nil }
                let kept = breakAt.map { Array(row[..<$0]) } ?? row
                let bold = Self.endsBold(kept)
                done += String(kept) + (bold ? String(boldOff) : "") + "\n"
                let reopened = bold ? [boldOn] : []
                (row, width) =
                    breakAt != nil
                    ? (continuation + reopened + carried, continuation.count + carriedWidth)
                    : (continuation + reopened, continuation.count)
            }
            row.append(character)
            width += next
        }
        return Self.boldFromMarks(done + String(row))
    }

    /// Bold on and off as one character each while a line is wrapped: two noncharacters, which no
    /// text needs (any in the text are dropped first). Swapped scalar by scalar, so a mark after a
    /// switch cannot hide it inside a character.
    static let onMark = Unicode.Scalar(0xFDD0 as UInt32)!, offMark = Unicode.Scalar(0xFDD1 as UInt32)!
    static let boldOn = Character(onMark), boldOff = Character(offMark)

    static func boldAsMarks(_ line: String) -> String {
        var marked = String.UnicodeScalarView()
        var scalars = line.unicodeScalars[...]
        while let scalar = scalars.popFirst() {
            if isBoldMark(scalar) { continue }
            if scalar == "\u{1B}", let (index, bold) = boldSwitches.enumerated().first(where: { scalars.starts(with: $0.1.unicodeScalars) }) {
                marked.append(index == 0 ? onMark : offMark)
                scalars = scalars.dropFirst(bold.unicodeScalars.count)
            } else {
                marked.append(scalar)
            }
        }
        return String(marked)
    }

    static func boldFromMarks(_ line: String) -> String {
        var shown = String.UnicodeScalarView()
        for scalar in line.unicodeScalars {
            switch scalar {
            case onMark: shown.append(contentsOf: "\u{1B}[1m".unicodeScalars)
            case offMark: shown.append(contentsOf: "\u{1B}[22m".unicodeScalars)
            default: shown.append(scalar)
            }
        }
        return String(shown)
    }

    static func isBoldMark(_ scalar: Unicode.Scalar) -> Bool { scalar == onMark || scalar == offMark }

    /// Whether bold is on after `row` (every row that starts in bold starts with its own switch).
    static func endsBold(_ row: [Character]) -> Bool {
        row.last { $0 == boldOn || $0 == boldOff } == boldOn
    }

    /// What follows ESC in bold on and bold off.
    static let boldSwitches = ["[1m", "[22m"]

    static func needsCare(_ scalar: Unicode.Scalar) -> Bool {
        isControl(scalar) || isDirectionControl(scalar) || scalar == "\n" || scalar == "\t" || scalar == "\u{2028}" || scalar == "\u{2029}"
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 && scalar != "\n" || (0x7F...0x9F).contains(scalar.value)
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
