import GRDB
import ParleyCore
import ParleyStore

/// A group's receipt aggregate on SQLite: `everyone_delivered_seq` / `everyone_read_seq` on the
/// conversation row, the lowest cursors among the current members, never moving back.
///
/// Rules (docs/protocol.md "Receipts in groups"):
/// 1. Only a change that can move the minimum recomputes it: a receipt, a send by a member whose
///    cursors were the lowest, a membership entry (its actor's cursors move to it), a departure.
/// 2. When it moves, each current member who sent a message in the range that changed status gets
///    one `receiptSummary` event; nobody else. A receipt thus writes O(1) stream entries.
enum GroupReceiptAggregate {
    /// Whether `user`'s cursors are at the aggregate (rule 1: their moving may move it).
    static func holdsBack(_ user: UserID, in conversation: ConversationID, _ db: Database) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT m.delivered_seq <= c.everyone_delivered_seq OR m.read_seq <= c.everyone_read_seq
                    FROM conversation_members m JOIN conversations c ON c.id = m.conversation_id
                    WHERE m.conversation_id = ? AND m.user_id = ?
                    """),
            arguments: [conversation.rawValue, user.rawValue]) ?? false
    }

    /// Recomputes the aggregate; returns the `receiptSummary` events of rule 2.
    static func refresh(_ conversation: ConversationID, now: Timestamp, _ statements: WriterStatements, _ db: Database) throws -> [Delivery] {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT c.everyone_delivered_seq, c.everyone_read_seq, MIN(m.delivered_seq), MIN(m.read_seq)
                        FROM conversations c JOIN conversation_members m ON m.conversation_id = c.id WHERE c.id = ?
                        """),
                arguments: [conversation.rawValue]),
            let lowestDelivered = row[2] as Int64?, let lowestRead = row[3] as Int64?
        else { return [] }
        let (oldDelivered, oldRead): (Int64, Int64) = (row[0], row[1])
        let summary = ReceiptSummary(
            conversationId: conversation, everyoneDeliveredSeq: max(oldDelivered, lowestDelivered), everyoneReadSeq: max(oldRead, lowestRead))
        guard summary.everyoneDeliveredSeq != oldDelivered || summary.everyoneReadSeq != oldRead else { return [] }
        try db.cachedStatement(sql: "UPDATE conversations SET everyone_delivered_seq = ?, everyone_read_seq = ? WHERE id = ?")
            .execute(arguments: [summary.everyoneDeliveredSeq, summary.everyoneReadSeq, conversation.rawValue])
        // The messages whose status changed: delivered in (old, new], read in (old, new].
        let senders = try String.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT DISTINCT msg.sender_id FROM messages msg
                    JOIN conversation_members m ON m.conversation_id = msg.conversation_id AND m.user_id = msg.sender_id
                    WHERE msg.conversation_id = ? AND msg.entry IS NULL
                        AND ((msg.seq > ? AND msg.seq <= ?) OR (msg.seq > ? AND msg.seq <= ?)) ORDER BY msg.sender_id
                    """),
            arguments: [conversation.rawValue, oldDelivered, summary.everyoneDeliveredSeq, oldRead, summary.everyoneReadSeq])
        return try senders.map { try SQLiteStore.appendEvent(.receiptSummary(summary), to: UserID(rawValue: $0), now: now, statements) }
    }
}

extension SQLiteStore {
    /// Rule 8 of a send: the current members (not the sender) whose usernames the text mentions.
    static func resolveMentions(_ names: [String], of sender: UserID, in conversation: ConversationID, _ db: Database) throws -> [UserID]? {
        let names = Array(names.prefix(50))
        guard !names.isEmpty else { return nil }
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT u.username, u.id FROM conversation_members m JOIN users u ON u.id = m.user_id
                WHERE m.conversation_id = ? AND m.user_id != ? AND u.username IN (\(databaseQuestionMarks(count: names.count)))
                """,
            arguments: StatementArguments([conversation.rawValue, sender.rawValue] + names))
        let byName = Dictionary(rows.map { ($0[0] as String, UserID(rawValue: $0[1])) }, uniquingKeysWith: { first, _ in first })
        let mentioned = names.compactMap { byName[$0] }
        return mentioned.isEmpty ? nil : mentioned
    }
}
