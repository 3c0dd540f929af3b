import Foundation

/// Dates as a chat app shows them, in the reader's locale and time zone.
///
/// List timestamps: the time for today, "Yesterday", the weekday within the last week, the date
/// before that. Day separators: "Today", "Yesterday", the weekday within the last week, the full date
/// before that. Days are calendar days in `timeZone`, so 23:59 and 00:01 are a day apart.
public struct SmartDateFormatter: Sendable {
    /// The locale of month and weekday names and of the clock (12 or 24 hours).
    public var locale: Locale
    /// The time zone days are counted in.
    public var timeZone: TimeZone
    private var calendar: Calendar

    /// Creates a formatter for a locale and time zone.
    public init(locale: Locale = .current, timeZone: TimeZone = .current) {
        self.locale = locale
        self.timeZone = timeZone
        var calendar = Calendar(identifier: .gregorian)
        calendar.locale = locale
        calendar.timeZone = timeZone
        self.calendar = calendar
    }

    /// Whole calendar days from `date` to `now` (0 = same day, 1 = yesterday; negative = future).
    public func daysBefore(_ date: Date, now: Date) -> Int {
        calendar.dateComponents([.day], from: calendar.startOfDay(for: date), to: calendar.startOfDay(for: now)).day ?? 0
    }

    /// A conversation list time: the clock time today, "Yesterday", the weekday this week, else the date.
    public func listTimestamp(_ date: Date, now: Date = Date()) -> String {
        switch daysBefore(date, now: now) {
        case ...0: time(date)
        case 1: "Yesterday"
        case 2...6: format(date, "EEEE")
        default: format(date, calendar.isDate(date, equalTo: now, toGranularity: .year) ? "MMMd" : "yMMMd")
        }
    }

    /// A chat's day separator: "Today", "Yesterday", the weekday this week, else the full date.
    public func daySeparator(_ date: Date, now: Date = Date()) -> String {
        switch daysBefore(date, now: now) {
        case ...0: "Today"
        case 1: "Yesterday"
        case 2...6: format(date, "EEEE")
        default: format(date, "yMMMMd")
        }
    }

    /// The time of day in the locale's short style ("14:05", "2:05 PM").
    public func time(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = locale
        formatter.timeZone = timeZone
        formatter.dateStyle = .none
        formatter.timeStyle = .short
        return formatter.string(from: date)
    }

    /// "online", or "last seen today at 14:05", "last seen Yesterday", "last seen Monday", …
    public func lastSeen(_ date: Date?, now: Date = Date()) -> String {
        guard let date else { return "offline" }
        return daysBefore(date, now: now) <= 0 ? "last seen today at \(time(date))" : "last seen \(listTimestamp(date, now: now))"
    }

    private func format(_ date: Date, _ template: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = locale
        formatter.timeZone = timeZone
        formatter.setLocalizedDateFormatFromTemplate(template)
        return formatter.string(from: date)
    }
}

extension String {
    /// Up to two initials of a name, uppercased: "Ada Lovelace" → "AL", "grace" → "G".
    public var initials: String {
        let letters = split(whereSeparator: \.isWhitespace).prefix(2).compactMap(\.first)
        return letters.isEmpty ? "?" : String(letters).uppercased()
    }
}
