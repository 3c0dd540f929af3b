import ArgumentParser
import Foundation

/// A duration option such as `--edit-window`: a whole number with a unit, `s`, `m`, `h` or `d`
/// (`48h`, `90m`); a bare number is seconds. From 0 (never) to 365 days.
enum DurationSetting {
    static func parse(_ option: String, _ text: String) throws -> Duration {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        let (digits, unit) = trimmed.last.flatMap { units[$0] }.map { (trimmed.dropLast(), $0) } ?? (Substring(trimmed), 1)
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let value = Int64(digits), value >= 0, value <= 365 * 86_400 / unit else {
            throw ValidationError("\(option) '\(text)' is not a duration from 0 to 365d, like 48h, 90m or 3600.")
        }
        return .seconds(value * unit)
    }
}
