import Foundation
import ParleyCore

/// How changed messages reach what the client holds: `messageUpdated` and `messageHidden` events
/// (live, or replayed on resume in order with the messages) and the `acted` answer to my own action.
///
/// Rules:
/// 1. `messageUpdated` replaces the message where it is held (text, `editedAt`, reactions,
///    tombstone). One not held is not stored (it would leave a hole in the pages held; history pages
///    bring it as it is now anyway).
/// 2. Held messages that quote it get their quote made again from it (its first line, or deleted).
/// 3. When it is a conversation's last message, the list's preview shows it as it is now; the
///    conversation does not move in the list and no unread is counted.
/// 4. `messageHidden` removes the message from the timeline and the cache, and remembers it (hidden
///    messages are never shown or counted again, even if a page or a replay brings them). When it
///    was the last message, the preview falls back to the newest one held, and the conversation is
///    read again for the server's own preview.
/// 5. Deleted and hidden messages never count as unread.
/// 6. `acted` removes the action from the outbox (``MessageOutbox`` rule 7) and applies the answer
///    as rules 1–4 do (a `hide` as rule 4): my timeline does not wait for the stream's copy.
extension ParleyClient {
    /// Rules 1–3 and 5.
    func apply(updated message: Message) {
        let id = message.conversationId
        guard hiddenSeqs[id]?.contains(message.seq) != true else { return }
        var changed: [Message] = []
        if messages[id]?[message.seq] != nil { changed.append(message) }
        let quote = ReplyQuote(seq: message.seq, senderId: message.senderId, text: message.text, deleted: message.isDeleted)
        for var reply in (messages[id] ?? [:]).values where reply.replyTo?.seq == message.seq && reply.replyTo != quote {
            reply.replyTo = quote
            changed.append(reply)
        }
        store(changed)
        if var summary = conversations[id] {
            if summary.lastMessage?.seq == message.seq { summary.lastMessage = message }
            if var last = summary.lastMessage, last.replyTo?.seq == message.seq {
                last.replyTo = quote
                summary.lastMessage = last
            }
            conversations[id] = summary
            try? store.save(conversations: [summary])
            if message.isDeleted { recountUnread(id) }
        }
        emit(.messageUpdated(message))
    }

    /// Rules 4 and 5.
    func apply(hidden ref: MessageRef) {
        let id = ref.conversationId
        hiddenSeqs[id, default: []].insert(ref.seq)
        try? store.save(hiddenMessages: hiddenSeqs)
        messages[id]?[ref.seq] = nil
        try? store.deleteMessage(in: id, seq: ref.seq)
        if var summary = conversations[id], summary.lastMessage?.seq == ref.seq {
            summary.lastMessage = messages[id]?.values.max { $0.seq < $1.seq }
            conversations[id] = summary
            try? store.save(conversations: [summary])
            scheduleRefetch(id)
        }
        recountUnread(id)
        emit(.messageHidden(ref))
    }

    /// Rule 6.
    func applyActed(ref: String?, message: Message) {
        guard let ref, let answered = outbox.confirm(ClientMessageID(rawValue: ref)) else { return }
        saveOutbox()
        if answered.action?.kind == .hide {
            apply(hidden: MessageRef(conversationId: message.conversationId, seq: message.seq))
        } else {
            apply(updated: message)
        }
        flushOutbox()
    }

    /// Rule 4 for a summary read from the server (it may have been read before the hide): its
    /// preview is never a hidden message.
    func hidingPreview(_ summary: ConversationSummary) -> ConversationSummary {
        guard let last = summary.lastMessage, hiddenSeqs[summary.id]?.contains(last.seq) == true else { return summary }
        var summary = summary
        summary.lastMessage = messages[summary.id]?.values.filter { $0.seq < last.seq }.max { $0.seq < $1.seq }
        return summary
    }

    /// Rule 4 for what a page, a snapshot or a replay brings: hidden messages stay out.
    func withoutHidden(_ incoming: [Message]) -> [Message] {
        guard !hiddenSeqs.isEmpty else { return incoming }
        return incoming.filter { hiddenSeqs[$0.conversationId]?.contains($0.seq) != true }
    }
}
