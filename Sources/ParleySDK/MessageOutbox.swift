import ParleyCore

/// The messages the user wrote and the actions they took on messages that the server has not
/// confirmed, and the rules for sending them.
///
/// Rules:
/// 1. A message is stored locally first, with status `sending` and a fresh client id, before any
///    network use (the caller persists ``entries`` after every change).
/// 2. It is sent as soon as possible, in order per conversation: at most one entry per conversation
///    is in flight, and the next one goes when the previous is confirmed.
/// 3. A lost connection puts in-flight entries back in line; they are sent again after reconnecting
///    (the server's idempotency on client id makes repeats safe).
/// 4. A transient refusal (rate limited, server unavailable or failing) keeps the entry `sending` and
///    retries it after a backoff (1 s, 2 s, 4 s … up to 60 s) that also holds back later entries of
///    that conversation, so order is kept.
/// 5. Any other refusal of a message marks it `failed` with the server's reason; it no longer blocks
///    its conversation. ``retry(_:)`` makes it `sending` again; ``delete(_:)`` removes it.
/// 6. Entries still `sending` when the app was killed are loaded with the outbox and sent on start,
///    with the same client ids.
/// 7. A confirmation (`sent` ack, the message arriving on the stream, `acted` for an action) removes
///    the entry.
///
/// Message actions (docs/protocol.md "Message actions"):
/// 8. React, edit, delete for everyone and delete for me are entries too, each with its own client id:
///    in order with the messages of their conversation (rule 2), persisted, sent again after a lost
///    connection or a restart with the same client id (rules 3 and 6), removed once answered (rule 7).
/// 9. Editing a message still in the outbox that never went out (or was refused) changes its text:
///    one send, with the new text, and no edit action. Once it was sent, even without an answer, the
///    server may hold it, so the edit is an action that waits for its seq (rule 11).
/// 10. Deleting (for everyone or for me) a message still in the outbox that never went out (or was
///    refused) cancels it: nothing reaches the server. The actions waiting for it go with it; replies
///    waiting for it are sent without the quote. Once it was sent, the delete waits for its seq.
/// 11. A reaction, reply or action on a message still in the outbox names it by its client id and is
///    not sent before that message is confirmed; the confirmation gives every such entry the seq.
///    While that message is `failed`, they wait with it without holding back the rest.
/// 12. A refused action (any refusal but the transient ones of rule 4) is dropped from the outbox and
///    returned by ``refuse(_:code:message:now:)`` to be reported: it is never retried forever.
///
/// Files (docs/protocol.md "Files"):
/// 13. A message with files is not sent before each file is uploaded, and holds back its
///    conversation meanwhile (order is kept). Upload progress is persisted with the entry (the
///    upload's id as soon as the server made it), so after a restart the upload goes on from the
///    server's offset and the message is then sent once, with its client id.
/// 14. ``retry(_:)`` of a message with files asks the server again about each file before the send:
///    an upload that expired or was removed while the message waited (the send was refused) is
///    made again from the file on this device, hashed again (so a file changed since it was first
///    sent goes as it is now, instead of failing its old promise again).
public struct MessageOutbox: Sendable, Equatable {
    /// Every unconfirmed message and action, in the order written.
    public internal(set) var entries: [OutboxEntry]
    var inFlight: Set<ClientMessageID> = []

    /// An outbox holding `entries` (from the local store after a restart: all are sent again).
    public init(entries: [OutboxEntry] = []) {
        self.entries = entries
    }

    /// Rule 1: a new `sending` entry at the end.
    @discardableResult
    public mutating func enqueue(
        text: String, conversation: ConversationID, recipient: UserID?, replyTo: MessageTarget? = nil, attachments: [PendingAttachment]? = nil,
        now: Timestamp
    ) -> OutboxEntry {
        var entry = OutboxEntry(clientId: .random(), conversationId: conversation, recipient: recipient, text: text, createdAt: now)
        entry.replyTo = replyTo
        entry.attachments = attachments
        entries.append(entry)
        return entry
    }

    /// Rules 2, 4 and 11: the entries to send now, marked in flight and sent (persist ``entries``
    /// before putting them on the wire).
    public mutating func takeSendable(now: Timestamp) -> [OutboxEntry] {
        var blocked: Set<ConversationID> = Set(entries.filter { inFlight.contains($0.clientId) }.map(\.conversationId))
        var ready: [OutboxEntry] = []
        for index in entries.indices where entries[index].state == .sending && !blocked.contains(entries[index].conversationId) {
            if entries[index].waitsForPendingMessage { continue }
            blocked.insert(entries[index].conversationId)
            if !entries[index].isUploaded { continue }
            if let retryAt = entries[index].retryAt, retryAt > now { continue }
            inFlight.insert(entries[index].clientId)
            entries[index].wasSent = true
            ready.append(entries[index])
        }
        return ready
    }

    /// Rule 13: the next file to upload — of the first entry still `sending` whose files are not all
    /// on the server — or nil.
    public func nextUpload() -> (clientId: ClientMessageID, index: Int, attachment: PendingAttachment)? {
        for entry in entries where entry.state == .sending {
            guard let attachments = entry.attachments, let index = attachments.firstIndex(where: { !$0.uploaded }) else { continue }
            return (entry.clientId, index, attachments[index])
        }
        return nil
    }

    /// Rule 13: records an upload's progress (its id once made, or done).
    public mutating func updateAttachment(_ clientId: ClientMessageID, at index: Int, _ change: (inout PendingAttachment) -> Void) {
        guard let entry = entries.firstIndex(where: { $0.clientId == clientId }), var files = entries[entry].attachments, files.indices.contains(index)
        else { return }
        change(&files[index])
        entries[entry].attachments = files
    }

    /// When the earliest held-back entry may go (to schedule the next attempt).
    public var nextRetry: Timestamp? {
        entries.filter { $0.state == .sending }.compactMap(\.retryAt).min()
    }

    /// Rule 3.
    public mutating func connectionLost() {
        inFlight.removeAll()
    }

    /// Rules 7 and 11. `seq` is the confirmed message's (entries waiting for it get it). Returns the
    /// entry that was confirmed, if it was here.
    @discardableResult
    public mutating func confirm(_ clientId: ClientMessageID, seq: Int64? = nil) -> OutboxEntry? {
        inFlight.remove(clientId)
        guard let index = entries.firstIndex(where: { $0.clientId == clientId }) else { return nil }
        let confirmed = entries.remove(at: index)
        if let seq { resolve(clientId, to: seq) }
        return confirmed
    }

    /// Rules 4, 5 and 12. Returns a refused action, dropped for good, to report.
    @discardableResult
    public mutating func refuse(_ clientId: ClientMessageID, code: ErrorCode, message: String, now: Timestamp) -> OutboxEntry? {
        inFlight.remove(clientId)
        guard let index = entries.firstIndex(where: { $0.clientId == clientId }) else { return nil }
        if Self.isTransient(code) {
            entries[index].attempts += 1
            let delay = min(60, 1 << min(entries[index].attempts - 1, 6))
            entries[index].retryAt = now.adding(seconds: Double(delay))
        } else if entries[index].isSend {
            entries[index].state = .failed(reason: message)
        } else {
            return entries.remove(at: index)
        }
        return nil
    }

    /// Rules 5 and 14: a failed message is sent again, its files checked again first.
    public mutating func retry(_ clientId: ClientMessageID) {
        guard let index = entries.firstIndex(where: { $0.clientId == clientId }), entries[index].state != .sending else { return }
        entries[index].state = .sending
        entries[index].attempts = 0
        entries[index].retryAt = nil
        if let files = entries[index].attachments {
            entries[index].attachments = files.map { file in
                var file = file
                file.uploaded = false
                file.sha256 = nil
                return file
            }
        }
    }

    /// Rule 5: only failed messages can be deleted (one in flight might still be stored). What waits
    /// for it goes as in rule 10.
    @discardableResult
    public mutating func delete(_ clientId: ClientMessageID) -> Bool {
        guard let index = entries.firstIndex(where: { $0.clientId == clientId }), entries[index].state != .sending else { return false }
        entries.remove(at: index)
        release(clientId)
        return true
    }

    /// The conversation's unconfirmed messages, in the order written (actions are not messages:
    /// ``pendingActions(in:)``).
    public func pending(in conversation: ConversationID) -> [OutboxEntry] {
        entries.filter { $0.conversationId == conversation && $0.isSend }
    }

    /// Whether the message was sent on the current connection and awaits its answer.
    public func isInFlight(_ clientId: ClientMessageID) -> Bool { inFlight.contains(clientId) }

    static func isTransient(_ code: ErrorCode) -> Bool {
        [.rateLimited, .unavailable, .storageUnavailable, .internalError].contains(code)
    }
}

extension OutboxEntry {
    init(clientId: ClientMessageID, conversationId: ConversationID, recipient: UserID?, text: String, createdAt: Timestamp) {
        self.init(
            clientId: clientId, conversationId: conversationId, recipientId: recipient, text: text, createdAt: createdAt,
            state: .sending, attempts: 0, retryAt: nil)
    }
}
