import ParleyStore
@testable import ParleyServer
import Testing

/// One user's searches cannot fill the database's pool: at most two run at once per user, and a
/// query's repeated terms are searched once.
@Suite struct SearchesInFlightTests {
    @Test func aThirdSearchOfOneUserWaitsForOneOfTheFirstTwo() {
        let inFlight = SearchesInFlight()
        #expect(inFlight.enter("ada") && inFlight.enter("ada"))
        #expect(!inFlight.enter("ada"), "a third at once is refused")
        #expect(inFlight.enter("grace"), "someone else's search is not")
        inFlight.leave("ada")
        #expect(inFlight.enter("ada"), "one ended: the next may run")
        #expect(!inFlight.enter("ada"))
    }

    @Test func aRepeatedTermIsSearchedOnce() throws {
        #expect(try SearchQuery.parse(String(repeating: "京 ", count: 16)).terms.map(\.text) == ["京"])
        #expect(try SearchQuery.parse("Tokyo tokyo TOKYO").terms.count == 1)
        #expect(try SearchQuery.parse(#"tokyo "tokyo" tower"#).terms.map(\.isPhrase) == [false, true, false], "a phrase is another term")
        let many = (1...20).map { "word\($0)" }.joined(separator: " ")
        #expect(try SearchQuery.parse(many + " word1").terms.count == SearchQuery.maxTerms)
    }
}
