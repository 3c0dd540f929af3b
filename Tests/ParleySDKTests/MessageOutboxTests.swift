@testable import ParleySDK
import ParleyCore
import Testing

/// One test per rule in ``MessageOutbox``'s doc comment.
@Suite struct MessageOutboxTests {
    let a = ConversationID.direct(.random(), .random()), b = ConversationID.direct(.random(), .random())
    let now = Timestamp(milliseconds: 1_000_000)

    @Test func rule1_newMessagesAreSendingWithFreshClientIds() {
        var outbox = MessageOutbox()
        let first = outbox.enqueue(text: "one", conversation: a, recipient: nil, now: now)
        let second = outbox.enqueue(text: "two", conversation: a, recipient: nil, now: now)
        #expect(first.state == .sending && second.state == .sending && first.clientId != second.clientId)
        #expect(outbox.entries.map(\.text) == ["one", "two"])
    }

    @Test func rule2_oneInFlightPerConversationInOrder() {
        var outbox = MessageOutbox()
        let one = outbox.enqueue(text: "a1", conversation: a, recipient: nil, now: now)
        outbox.enqueue(text: "a2", conversation: a, recipient: nil, now: now)
        outbox.enqueue(text: "b1", conversation: b, recipient: nil, now: now)
        let first = outbox.takeSendable(now: now), second = outbox.takeSendable(now: now)
        #expect(first.map(\.text) == ["a1", "b1"])
        #expect(second.isEmpty, "nothing more until a1 is confirmed")
        outbox.confirm(one.clientId)
        let third = outbox.takeSendable(now: now)
        #expect(third.map(\.text) == ["a2"])
    }

    @Test func rule3_aLostConnectionSendsInFlightMessagesAgain() {
        var outbox = MessageOutbox()
        outbox.enqueue(text: "a1", conversation: a, recipient: nil, now: now)
        let before = outbox.takeSendable(now: now)
        outbox.connectionLost()
        let after = outbox.takeSendable(now: now)
        #expect(before.count == 1 && after.map(\.text) == ["a1"])
    }

    @Test func rule4_transientRefusalsBackOffAndHoldTheConversationBack() {
        var outbox = MessageOutbox()
        let one = outbox.enqueue(text: "a1", conversation: a, recipient: nil, now: now)
        outbox.enqueue(text: "a2", conversation: a, recipient: nil, now: now)
        _ = outbox.takeSendable(now: now)
        outbox.refuse(one.clientId, code: .rateLimited, message: "slow down", now: now)
        #expect(outbox.entries[0].state == .sending)
        let early = outbox.takeSendable(now: now.adding(seconds: 0.5))
        #expect(early.isEmpty, "a2 waits behind a1")
        #expect(outbox.nextRetry == now.adding(seconds: 1))
        let due = outbox.takeSendable(now: now.adding(seconds: 1))
        #expect(due.map(\.text) == ["a1"])
        outbox.refuse(one.clientId, code: .unavailable, message: "busy", now: now)
        #expect(outbox.nextRetry == now.adding(seconds: 2), "the backoff doubles")
    }

    @Test func rule5_otherRefusalsFailWithTheReasonAndCanBeRetriedOrDeleted() {
        var outbox = MessageOutbox()
        let one = outbox.enqueue(text: "a1", conversation: a, recipient: nil, now: now)
        outbox.enqueue(text: "a2", conversation: a, recipient: nil, now: now)
        _ = outbox.takeSendable(now: now)
        outbox.refuse(one.clientId, code: .textInvalidCharacters, message: "control characters", now: now)
        #expect(outbox.entries[0].state == .failed(reason: "control characters"))
        let next = outbox.takeSendable(now: now)
        #expect(next.map(\.text) == ["a2"], "a failed message does not block its conversation")
        let deletedSending = outbox.delete(outbox.entries[1].clientId)
        #expect(!deletedSending, "a message being sent cannot be deleted")
        outbox.retry(one.clientId)
        #expect(outbox.entries[0].state == .sending)
        outbox.refuse(one.clientId, code: .textInvalidCharacters, message: "again", now: now)
        let deleted = outbox.delete(one.clientId)
        #expect(deleted)
        #expect(outbox.entries.map(\.text) == ["a2"])
    }

    @Test func rule6_entriesLoadedFromStorageAreSentAgain() {
        var original = MessageOutbox()
        original.enqueue(text: "a1", conversation: a, recipient: nil, now: now)
        _ = original.takeSendable(now: now)  // in flight when the app died
        var restored = MessageOutbox(entries: original.entries)
        let resent = restored.takeSendable(now: now)
        #expect(resent.map(\.text) == ["a1"])
    }

    @Test func rule7_confirmationRemovesTheEntryOnce() {
        var outbox = MessageOutbox()
        let one = outbox.enqueue(text: "a1", conversation: a, recipient: nil, now: now)
        let confirmed = outbox.confirm(one.clientId), again = outbox.confirm(one.clientId)
        #expect(confirmed?.text == "a1")
        #expect(again == nil, "a second confirmation (echo, replay) changes nothing")
        #expect(outbox.entries.isEmpty)
    }
}

/// ``Heartbeat`` rules, on the watch's own clock.
@Suite struct LineWatchTests {
    let heartbeat = Heartbeat(idleInterval: .seconds(20), timeout: .seconds(10))
    let start = ContinuousClock.now

    @Test func rule1_silenceAsksForAPing() {
        let watch = LineWatch(now: start)
        #expect(watch.verdict(at: start + .seconds(19), heartbeat) == .fine)
        #expect(watch.verdict(at: start + .seconds(20), heartbeat) == .ping)
    }

    @Test func rules2and3_anUnansweredFrameMakesTheLineDeadAnyFrameAnswers() {
        var watch = LineWatch(now: start)
        watch.expectAnswer(at: start + .seconds(1))
        watch.expectAnswer(at: start + .seconds(5))  // a second frame does not restart the wait
        #expect(watch.verdict(at: start + .seconds(10), heartbeat) == .fine)
        #expect(watch.verdict(at: start + .seconds(11), heartbeat) == .dead)
        watch.received(at: start + .seconds(10))
        #expect(watch.verdict(at: start + .seconds(11), heartbeat) == .fine)
        #expect(watch.verdict(at: start + .seconds(30), heartbeat) == .ping)
    }

    @Test func rule2_aFrameCountsWhenItCameOffTheSocket() {
        var watch = LineWatch(now: start)
        watch.expectAnswer(at: start + .seconds(5))
        watch.arrived(at: start + .seconds(4))  // came before the wait: no answer to it
        #expect(watch.verdict(at: start + .seconds(15), heartbeat) == .dead)
        watch.arrived(at: start + .seconds(6))  // came after: the answer, not handled yet
        #expect(watch.verdict(at: start + .seconds(15), heartbeat) == .fine)
        #expect(watch.verdict(at: start + .seconds(26), heartbeat) == .ping)
        watch.arrived(at: start + .seconds(2))  // an older stamp does not move the last frame back
        #expect(watch.verdict(at: start + .seconds(25), heartbeat) == .fine)
    }

    @Test func rule4_aConnectionThatNeverOpensCountsAsDead() async throws {
        await #expect(throws: ParleyClientError.self) {
            try await withDeadline(.milliseconds(100)) { () async throws -> Int in
                try await Task.sleep(for: .seconds(30))
                return 1
            }
        }
        #expect(try await withDeadline(.seconds(5)) { 7 } == 7)
    }
}
