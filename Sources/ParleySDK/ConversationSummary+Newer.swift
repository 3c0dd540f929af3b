import ParleyCore

extension ConversationSummary {
    /// This summary, read from the server, with whatever `known` has that is newer.
    ///
    /// A summary read over HTTP races the stream: a receipt or message applied while the request
    /// was on its way may be newer than the answer. Cursors and the last message only move forward,
    /// so taking the furthest of each never shows a tick going back or a receipt lost.
    func keepingNewer(of known: ConversationSummary?) -> ConversationSummary {
        guard let known else { return self }
        var merged = self
        for index in merged.members.indices {
            guard let seen = known.members.first(where: { $0.userId == merged.members[index].userId }) else { continue }
            merged.members[index].deliveredSeq = Swift.max(merged.members[index].deliveredSeq, seen.deliveredSeq)
            merged.members[index].readSeq = Swift.max(merged.members[index].readSeq, seen.readSeq)
        }
        if known.lastSeq > merged.lastSeq {
            merged.lastSeq = known.lastSeq
            merged.lastMessage = known.lastMessage
            merged.lastActivityAt = known.lastActivityAt
        }
        return merged
    }
}
