import ParleyCore

/// Rules every backend applies the same way, kept here so they are written once.
extension ReceiptUpdate {
    /// The member's cursors after a receipt request (guarantee 4): cursors only move forward, and
    /// read implies delivered. `moved` is false when neither cursor moves (no event is due).
    /// - Throws: ``StoreError/cursorBeyondEnd`` for a cursor past the conversation's last seq.
    public static func advancing(
        conversation: ConversationID, member: UserID, delivered oldDelivered: Int64, read oldRead: Int64, lastSeq: Int64,
        requestedDelivered: Int64?, requestedRead: Int64?
    ) throws -> (receipt: ReceiptUpdate, moved: Bool) {
        let read = requestedRead ?? 0
        let delivered = max(requestedDelivered ?? 0, read)
        guard delivered <= lastSeq else { throw StoreError.cursorBeyondEnd }
        let receipt = ReceiptUpdate(
            conversationId: conversation, userId: member, deliveredSeq: max(oldDelivered, delivered), readSeq: max(oldRead, read))
        return (receipt, receipt.deliveredSeq != oldDelivered || receipt.readSeq != oldRead)
    }
}

extension MessagePage {
    /// A page from rows fetched with `LIMIT limit + 1` (the extra row says there is more), in seq
    /// order: rows fetched newest first (no `after`) are turned around.
    public init(fetched rows: [Message], limit: Int, newestFirst: Bool) {
        var messages = rows
        let hasMore = messages.count > limit
        if hasMore { messages.removeLast() }
        if newestFirst { messages.reverse() }
        self.init(messages: messages, hasMore: hasMore)
    }
}
