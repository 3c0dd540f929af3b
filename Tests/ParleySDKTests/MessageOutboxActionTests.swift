import Foundation
@testable import ParleySDK
import ParleyCore
import Testing

/// One test per message-action rule (8–12) in ``MessageOutbox``'s doc comment.
@Suite struct MessageOutboxActionTests {
    let a = ConversationID.direct(.random(), .random()), b = ConversationID.direct(.random(), .random())
    let now = Timestamp(milliseconds: 1_000_000)

    @Test func rule8_actionsGoInOrderWithSendsAndAreRemovedWhenAnswered() {
        var outbox = MessageOutbox()
        let one = outbox.enqueue(text: "a1", conversation: a, recipient: nil, now: now)
        let react = outbox.enqueue(PendingAction(kind: .react, target: .seq(7), emoji: "👍"), conversation: a, now: now)
        outbox.enqueue(text: "a2", conversation: a, recipient: nil, now: now)
        #expect(outbox.takeSendable(now: now).map(\.clientId) == [one.clientId])
        outbox.confirm(one.clientId, seq: 8)
        let second = outbox.takeSendable(now: now)
        #expect(second.map(\.clientId) == [react.clientId], "the action goes before the later message")
        #expect(outbox.takeSendable(now: now).isEmpty, "one entry in flight per conversation, actions included")
        #expect(outbox.confirm(react.clientId) != nil)
        #expect(outbox.takeSendable(now: now).map(\.text) == ["a2"])
        #expect(outbox.pending(in: a).map(\.text) == ["a2"], "actions are not messages of the timeline")
    }

    @Test func rule8_queuedActionsSurviveARestartAndGoAgainWithTheSameClientId() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("parley-outbox-\(UUID().uuidString)/store.sqlite").path
        var outbox = MessageOutbox()
        let edit = outbox.enqueue(PendingAction(kind: .edit, target: .seq(3)), text: "fixed", conversation: a, now: now)
        _ = outbox.takeSendable(now: now)  // on the wire when the app died
        try LocalStore(path: path).save(outbox: outbox.entries)
        var restored = MessageOutbox(entries: try LocalStore(path: path).outbox())
        let resent = restored.takeSendable(now: now)
        #expect(resent.map(\.clientId) == [edit.clientId] && resent.first?.action?.kind == .edit && resent.first?.text == "fixed")
        #expect(resent.first?.wasSent == true)
    }

    @Test func rule9_editingAnUnsentMessageChangesItsText() {
        var outbox = MessageOutbox()
        let one = outbox.enqueue(text: "helo", conversation: a, recipient: nil, now: now)
        let rewritten = outbox.rewrite(one.clientId, text: "hello")
        #expect(rewritten)
        #expect(outbox.entries.map(\.text) == ["hello"] && outbox.entries.count == 1, "one send, the new text, no edit action")
        #expect(outbox.takeSendable(now: now).map(\.text) == ["hello"])
    }

    @Test func rule9_aMessageThatWentOutIsNotRewrittenButARefusedOneIs() {
        var outbox = MessageOutbox()
        let one = outbox.enqueue(text: "helo", conversation: a, recipient: nil, now: now)
        _ = outbox.takeSendable(now: now)
        let inFlight = outbox.rewrite(one.clientId, text: "hello")
        #expect(!inFlight, "in flight: the server may have it")
        outbox.connectionLost()
        let sentOnce = outbox.rewrite(one.clientId, text: "hello")
        #expect(!sentOnce, "sent once without an answer: the server may have it")
        outbox.refuse(one.clientId, code: .textInvalidCharacters, message: "no", now: now)
        let refused = outbox.rewrite(one.clientId, text: "hello")
        #expect(refused, "refused: the server surely does not have it")
        #expect(outbox.entries.first?.text == "hello")
    }

    @Test func rule10_deletingAnUnsentMessageCancelsItWithWhatWaitsForIt() {
        var outbox = MessageOutbox()
        let one = outbox.enqueue(text: "oops", conversation: a, recipient: nil, now: now)
        outbox.enqueue(PendingAction(kind: .react, target: .pending(one.clientId), emoji: "👍"), conversation: a, now: now)
        let reply = outbox.enqueue(text: "about that", conversation: a, recipient: nil, replyTo: .pending(one.clientId), now: now)
        let cancelled = outbox.cancel(one.clientId)
        #expect(cancelled)
        #expect(outbox.entries.map(\.clientId) == [reply.clientId], "the message and the reaction to it are gone")
        #expect(outbox.entries.first?.replyTo == nil, "the reply goes without its quote")
        #expect(outbox.takeSendable(now: now).map(\.text) == ["about that"])
    }

    @Test func rule10_aMessageThatWentOutIsNotCancelled() {
        var outbox = MessageOutbox()
        let one = outbox.enqueue(text: "oops", conversation: a, recipient: nil, now: now)
        _ = outbox.takeSendable(now: now)
        let cancelled = outbox.cancel(one.clientId)
        #expect(!cancelled)
        #expect(outbox.entries.count == 1)
    }

    @Test func rule11_actionsAndRepliesOnAPendingMessageWaitForItsSeq() {
        var outbox = MessageOutbox()
        let one = outbox.enqueue(text: "question", conversation: a, recipient: nil, now: now)
        let react = outbox.enqueue(PendingAction(kind: .react, target: .pending(one.clientId), emoji: "❤️"), conversation: a, now: now)
        let reply = outbox.enqueue(text: "answer", conversation: a, recipient: nil, replyTo: .pending(one.clientId), now: now)
        #expect(outbox.takeSendable(now: now).map(\.clientId) == [one.clientId])
        outbox.connectionLost()
        #expect(outbox.takeSendable(now: now).map(\.clientId) == [one.clientId], "still nothing but the message itself")
        outbox.confirm(one.clientId, seq: 41)
        #expect(outbox.entries.first { $0.clientId == react.clientId }?.action?.target == .seq(41))
        #expect(outbox.entries.first { $0.clientId == reply.clientId }?.replyTo == .seq(41))
        #expect(outbox.takeSendable(now: now).map(\.clientId) == [react.clientId])
        outbox.confirm(react.clientId)
        #expect(outbox.takeSendable(now: now).map(\.clientId) == [reply.clientId])
    }

    @Test func rule11_whatWaitsForAFailedMessageWaitsWithItWithoutHoldingBackTheRest() {
        var outbox = MessageOutbox()
        let one = outbox.enqueue(text: "bad", conversation: a, recipient: nil, now: now)
        outbox.enqueue(PendingAction(kind: .react, target: .pending(one.clientId), emoji: "👍"), conversation: a, now: now)
        outbox.enqueue(text: "next", conversation: a, recipient: nil, now: now)
        _ = outbox.takeSendable(now: now)
        outbox.refuse(one.clientId, code: .textInvalidCharacters, message: "no", now: now)
        #expect(outbox.takeSendable(now: now).map(\.text) == ["next"])
        #expect(outbox.entries.count == 3, "the reaction still waits for the failed message")
    }

    @Test func rule12_aRefusedActionIsDroppedAndReturnedATransientOneRetried() {
        var outbox = MessageOutbox()
        let edit = outbox.enqueue(PendingAction(kind: .edit, target: .seq(2)), text: "late", conversation: a, now: now)
        let delete = outbox.enqueue(PendingAction(kind: .delete, target: .seq(3)), conversation: b, now: now)
        _ = outbox.takeSendable(now: now)
        let dropped = outbox.refuse(edit.clientId, code: .editWindowClosed, message: "Too late to edit.", now: now)
        #expect(dropped?.clientId == edit.clientId && !outbox.entries.contains { $0.clientId == edit.clientId })
        let kept = outbox.refuse(delete.clientId, code: .rateLimited, message: "slow down", now: now)
        #expect(kept == nil && outbox.entries.first?.clientId == delete.clientId && outbox.entries.first?.state == .sending)
        #expect(outbox.takeSendable(now: now.adding(seconds: 1)).map(\.clientId) == [delete.clientId], "retried after the backoff")
    }

    @Test func entriesFromBeforeActionsStillLoadAndCountAsSent() throws {
        let clientId = "7d3f4c9e-0000-4000-8000-000000000001"
        let old = #"{"clientId":"\#(clientId)","conversationId":"\#(a.rawValue)","text":"hi","createdAt":1000,"state":{"sending":{}},"attempts":0}"#
        let entry = try JSONDecoder().decode(OutboxEntry.self, from: Data(old.utf8))
        #expect(entry.text == "hi" && entry.isSend && entry.replyTo == nil && entry.wasSent)
    }
}
