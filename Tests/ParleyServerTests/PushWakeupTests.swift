@testable import ParleyServer
import Testing

/// ``PushWakeup``: a signal wakes the waiter, signals while nobody waits collapse into one, the
/// limit ends a wait with no signal, and cancelling the waiter ends it at once.
@Suite struct PushWakeupTests {
    @Test func signalsWakeCollapseAndTheLimitAndCancellationEndAWait() async {
        let wakeup = PushWakeup()
        let clock = ContinuousClock()
        // Signalled before the wait (twice): the next wait returns at once, the one after waits.
        wakeup.signal()
        wakeup.signal()
        let first = await clock.measure { await wakeup.wait(upTo: .seconds(60)) }
        #expect(first < .seconds(30))
        let limited = await clock.measure { await wakeup.wait(upTo: .milliseconds(50)) }
        #expect(limited >= .milliseconds(50), "the two signals were one")
        // A waiter is woken by a signal from elsewhere.
        let waiting = Task { await wakeup.wait(upTo: .seconds(60)) }
        wakeup.signal()
        await waiting.value
        // Cancelled: it returns without a signal or the limit.
        let cancelled = Task { await wakeup.wait(upTo: .seconds(60)) }
        cancelled.cancel()
        let ended = await clock.measure { await cancelled.value }
        #expect(ended < .seconds(30))
    }
}
