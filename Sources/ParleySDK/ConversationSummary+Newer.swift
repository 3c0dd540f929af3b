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
        // A group's aggregate only grows too (a newcomer starts at the seq before their span; a
        // departed member stops counting).
        merged.everyoneDeliveredSeq = Self.furthest(merged.everyoneDeliveredSeq, known.everyoneDeliveredSeq)
        merged.everyoneReadSeq = Self.furthest(merged.everyoneReadSeq, known.everyoneReadSeq)
        if known.lastSeq > merged.lastSeq {
            merged.lastSeq = known.lastSeq
            merged.lastMessage = known.lastMessage
            merged.lastActivityAt = known.lastActivityAt
            // The stream is ahead of this read: what it told of the group is newer too.
            merged.unreadCount = known.unreadCount
            merged.mentionCount = known.mentionCount
            merged.title = known.title ?? merged.title
            if known.leftSeq != nil {
                merged.leftSeq = known.leftSeq
                merged.members = known.members
            }
        }
        return merged
    }

    private static func furthest(_ a: Int64?, _ b: Int64?) -> Int64? {
        guard let a else { return b }
        return Swift.max(a, b ?? a)
    }
}
