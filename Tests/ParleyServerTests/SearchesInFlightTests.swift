import ParleyStore
@testable import ParleyServer
import Testing

/// One user's searches cannot fill the database's pool: at most two run at once per user, the rest
/// wait their turn (``SearchesInFlight``'s rules), and a query's repeated terms are searched once.
@Suite struct SearchesInFlightTests {
    @Test func aThirdSearchOfOneUserWaitsForOneOfTheFirstTwo() async {
        let inFlight = SearchesInFlight()
        #expect(await inFlight.enter("ada"))
        #expect(await inFlight.enter("ada"))
        #expect(await inFlight.enter("grace"), "someone else's search does not wait (rule 2)")
        let (entered, entering) = AsyncStream.makeStream(of: Int.self)
        func waitFor(_ count: Int) async { while inFlight.waitingCount(of: "ada") < count { await Task.yield() } }
        let third = Task {
            let got = await inFlight.enter("ada")
            entering.yield(3)
            return got
        }
        await waitFor(1)
        let fourth = Task {
            let got = await inFlight.enter("ada")
            entering.yield(4)
            return got
        }
        await waitFor(2)
        var order = entered.makeAsyncIterator()
        inFlight.leave("ada")  // rule 2: the first waiting takes this place
        #expect(await order.next() == 3)
        #expect(await third.value)
        #expect(inFlight.waitingCount(of: "ada") == 1)
        inFlight.leave("ada")
        #expect(await order.next() == 4)
        #expect(await fourth.value)
    }

    @Test func aWaitingSearchThatIsCancelledStopsWaitingAndHoldsNoPlace() async {
        let inFlight = SearchesInFlight()
        #expect(await inFlight.enter("ada"))
        #expect(await inFlight.enter("ada"))
        let waiting = Task { await inFlight.enter("ada") }
        while inFlight.waitingCount(of: "ada") < 1 { await Task.yield() }
        waiting.cancel()
        #expect(await waiting.value == false, "rule 3")
        inFlight.leave("ada")
        #expect(await inFlight.enter("ada"), "the place went to no one cancelled")
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await inFlight.enter("ada")
        }
        #expect(await cancelledFirst.value == false, "cancelled before it queued: never counted")
    }

    @Test func aRepeatedTermIsSearchedOnce() throws {
        #expect(try SearchQuery.parse(String(repeating: "京 ", count: 16)).terms.map(\.text) == ["京"])
        #expect(try SearchQuery.parse("Tokyo tokyo TOKYO").terms.count == 1)
        #expect(try SearchQuery.parse(#"tokyo "tokyo" tower"#).terms.map(\.isPhrase) == [false, true, false], "a phrase is another term")
        let many = (1...20).map { "word\($0)" }.joined(separator: " ")
        #expect(try SearchQuery.parse(many + " word1").terms.count == SearchQuery.maxTerms)
    }
}
