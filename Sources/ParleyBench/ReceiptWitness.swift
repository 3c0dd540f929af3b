import ParleyCore

/// What a crash-check client does with read receipts: it reads as a person does (a read receipt
/// for the newest message it has seen, after every fourth message, one in flight at a time) and
/// checks what the server says back (rule 11 of ``CrashCheck``):
/// - an acknowledged read cursor is stored (``CrashCheck/storedReadCheck(_:index:api:)``, against the member list);
/// - the client's own cursors, as its `receipt` events tell them, never move back;
/// - a group's receipt summary (`receiptSummary`) never moves back.
struct ReceiptWitness: Sendable {
    /// The highest read cursor the server acknowledged (`ack`).
    private(set) var acknowledgedRead: Int64 = 0
    private(set) var acknowledged = 0
    private(set) var violations: [String] = []
    private var inFlight: (ref: String, seq: Int64)?
    private var sent = 0, sinceLast = 0, newestSeen: Int64 = 0, ownRead: Int64 = 0
    private var summary: (delivered: Int64, read: Int64) = (0, 0)

    /// A message of `conversation` was seen (delivered or acknowledged): the receipt to send, if it
    /// is time and there is a socket to send it on (a replay can arrive before the socket is stored).
    mutating func saw(_ seq: Int64, in conversation: ConversationID, canSend: Bool = true) -> ClientFrame? {
        newestSeen = max(newestSeen, seq)
        sinceLast += 1
        guard canSend, inFlight == nil, sinceLast >= 4 else { return nil }
        sinceLast = 0
        sent += 1
        inFlight = ("r\(sent)", newestSeen)
        return .receipt(ref: "r\(sent)", conversationId: conversation, deliveredSeq: nil, readSeq: newestSeen)
    }

    /// Whether `ref` is the receipt in flight; it no longer is.
    mutating func answered(_ ref: String?, applied: Bool) -> Bool {
        guard let current = inFlight, current.ref == ref else { return false }
        if applied {
            acknowledgedRead = max(acknowledgedRead, current.seq)
            acknowledged += 1
        }
        inFlight = nil
        return true
    }

    /// The connection closed: its receipt may or may not have been applied.
    mutating func disconnected() { inFlight = nil }

    /// A stream event: receipts and summaries of `conversation` are checked for moving back.
    mutating func observe(_ payload: StreamEvent.Payload, me: UserID, in conversation: ConversationID) {
        switch payload {
        case .receipt(let receipt) where receipt.userId == me && receipt.conversationId == conversation:
            if receipt.readSeq < ownRead { violations.append("my read cursor moved back from \(ownRead) to \(receipt.readSeq)") }
            ownRead = max(ownRead, receipt.readSeq)
        case .receiptSummary(let update) where update.conversationId == conversation:
            if update.everyoneReadSeq < summary.read || update.everyoneDeliveredSeq < summary.delivered {
                violations.append("the group's receipt summary moved back to \(update.everyoneDeliveredSeq)/\(update.everyoneReadSeq)")
            }
            summary = (max(summary.delivered, update.everyoneDeliveredSeq), max(summary.read, update.everyoneReadSeq))
        default:
            break
        }
    }
}
