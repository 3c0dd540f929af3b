import Foundation
import ParleyCore
import Testing

@Suite struct SmartDateFormatterTests {
    let berlin = TimeZone(identifier: "Europe/Berlin")!
    var formatter: SmartDateFormatter { SmartDateFormatter(locale: Locale(identifier: "en_US"), timeZone: berlin) }

    func date(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, in zone: TimeZone? = nil) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone ?? berlin
        return calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute))!
    }

    @Test func aroundMidnightTheDayChanges() {
        let now = date(2026, 3, 10, 0, 1)
        #expect(formatter.listTimestamp(date(2026, 3, 10, 0, 0), now: now) == formatter.time(date(2026, 3, 10, 0, 0)))
        #expect(formatter.listTimestamp(date(2026, 3, 9, 23, 59), now: now) == "Yesterday")
        #expect(formatter.daySeparator(date(2026, 3, 9, 23, 59), now: now) == "Yesterday")
        #expect(formatter.daySeparator(date(2026, 3, 10, 0, 0), now: now) == "Today")
    }

    @Test func withinAWeekTheWeekdayThenTheDate() {
        let now = date(2026, 3, 10, 12, 0)  // a Tuesday
        #expect(formatter.listTimestamp(date(2026, 3, 8, 9, 0), now: now) == "Sunday")
        #expect(formatter.listTimestamp(date(2026, 3, 4, 9, 0), now: now) == "Wednesday")
        #expect(formatter.listTimestamp(date(2026, 3, 3, 9, 0), now: now) == "Mar 3")
        #expect(formatter.daySeparator(date(2026, 3, 3, 9, 0), now: now) == "March 3, 2026")
    }

    @Test func acrossYearsTheYearIsShown() {
        let now = date(2027, 1, 1, 0, 30)
        #expect(formatter.listTimestamp(date(2026, 12, 31, 23, 50), now: now) == "Yesterday")
        #expect(formatter.listTimestamp(date(2026, 12, 20, 10, 0), now: now) == "Dec 20, 2026")
    }

    @Test func theReadersTimeZoneDecidesTheDay() {
        // 23:30 in New York on the 9th is already the 10th in Berlin.
        let newYork = TimeZone(identifier: "America/New_York")!
        let message = date(2026, 3, 9, 23, 30, in: newYork)
        let now = date(2026, 3, 10, 12, 0)
        #expect(formatter.daySeparator(message, now: now) == "Today")
        let inNewYork = SmartDateFormatter(locale: Locale(identifier: "en_US"), timeZone: newYork)
        #expect(inNewYork.daySeparator(message, now: now) == "Yesterday")
    }

    @Test func theLocaleShapesTimesAndDates() {
        let german = SmartDateFormatter(locale: Locale(identifier: "de_DE"), timeZone: berlin)
        #expect(german.time(date(2026, 3, 10, 14, 5)) == "14:05")
        #expect(german.listTimestamp(date(2026, 3, 8, 9, 0), now: date(2026, 3, 10, 12, 0)) == "Sonntag")
    }

    @Test func initials() {
        #expect("Ada Lovelace".initials == "AL")
        #expect("grace".initials == "G")
        #expect("  ".initials == "?")
    }
}
