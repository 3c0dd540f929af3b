#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// UTC dates as S3 writes them, without Foundation (this module does not use it): the `x-amz-date`
/// stamp a request is signed with and the ISO 8601 `LastModified` of a listing.
enum S3Time {
    /// Seconds since 1970, now.
    static func now() -> Int64 { Int64(time(nil)) }

    /// `yyyyMMdd'T'HHmmss'Z'` (e.g. `20130524T000000Z`) for `seconds` since 1970.
    static func amzDate(_ seconds: Int64) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let second = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        return digits(year, 4) + digits(month, 2) + digits(day, 2) + "T" + digits(second / 3600, 2) + digits(second / 60 % 60, 2)
            + digits(second % 60, 2) + "Z"
    }

    /// Seconds since 1970 of `2013-05-24T00:00:00.000Z` (`Z` or `+00:00`, the fraction optional),
    /// or nil when `text` is not such a date.
    static func parseISO8601(_ text: some StringProtocol) -> Double? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            let year = number(bytes[0..<4]), let month = number(bytes[5..<7]), let day = number(bytes[8..<10]),
            let hour = number(bytes[11..<13]), let minute = number(bytes[14..<16]), let second = number(bytes[17..<19]),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        var fraction = 0.0
        if bytes[index] == UInt8(ascii: ".") {
            var scale = 0.1
            index += 1
            while index < bytes.count, let digit = number(bytes[index..<index + 1]) {
                fraction += Double(digit) * scale
                scale /= 10
                index += 1
            }
        }
        let zone = bytes[index...]
        guard zone.elementsEqual("Z".utf8) || zone.elementsEqual("+00:00".utf8) else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        return Double(days * 86_400 + hour * 3600 + minute * 60 + second) + fraction
    }

    /// Seconds since 1970 of an HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110's IMF-fixdate:
    /// S3's `Last-Modified`), or nil when `text` is not one.
    static func parseHTTPDate(_ text: some StringProtocol) -> Double? {
        let words = text.split(separator: " ")
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard words.count == 6, words[0].hasSuffix(","), words[5] == "GMT", let month = months.firstIndex(of: String(words[2])),
            let day = number(Array(words[1].utf8)[...]), let year = number(Array(words[3].utf8)[...])
        else { return nil }
        let clock = words[4].split(separator: ":", omittingEmptySubsequences: false).map { number(Array($0.utf8)[...]) }
        guard clock.count == 3, let hour = clock[0], let minute = clock[1], let second = clock[2], (1...31).contains(day), hour < 24, minute < 60,
            second < 61
        else { return nil }
        let days = daysFromCivil(year: year, month: Int64(month) + 1, day: day)
        return Double(days * 86_400 + hour * 3600 + minute * 60 + second)
    }

    private static func number(_ bytes: ArraySlice<UInt8>) -> Int64? {
        var value: Int64 = 0
        for byte in bytes {
            guard (48...57).contains(byte) else { return nil }
            value = value * 10 + Int64(byte - 48)
        }
        return bytes.isEmpty ? nil : value
    }

    private static func digits(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }

    // Howard Hinnant's algorithms for the proleptic Gregorian calendar (days since 1970-01-01).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let year = month <= 2 ? year - 1 : year
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
