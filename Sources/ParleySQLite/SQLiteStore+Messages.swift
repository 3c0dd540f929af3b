import GRDB
import ParleyCore
import ParleyStore

extension SQLiteStore: MessageStore {
    public func send(_ new: NewMessage, now: Timestamp) async throws -> SendOutcome {
        try await batchedWrite { db in try Self.send(new, now: now, db) }
    }

    /// The whole batch is one job of the group commit; each message has its own savepoint, so one
    /// refused message rolls back only itself.
    public func send(_ batch: [NewMessage], now: Timestamp) async -> [Result<SendOutcome, any Error>] {
        do {
            return try await batchedWrite { db in
                batch.map { new in
                    Result {
                        do {
                            return try db.inCachedSavepoint(named: "message") { try Self.send(new, now: now, db) }
                        } catch {
                            throw Self.classified(error)
                        }
                    }
                }
            }
        } catch {
            return batch.map { _ in .failure(error) }
        }
    }

    /// The send transaction. Rules:
    /// 1. (sender, client id) seen before → the stored message, unchanged, nothing written
    ///    (a different target conversation is a conflict).
    /// 2. The sender must be a member of the target conversation; a user target creates the direct
    ///    conversation first (same transaction: no empty conversation is ever left behind).
    /// 3. seq = last seq + 1 on the conversation row, so seqs are gapless and unique.
    /// 4. The sender has seen what they send: their delivered and read cursors move to the new seq.
    /// 5. Every member gets a `message` event in their stream.
    /// 6. The sender's first message is remembered (`first_sent_seq`); when every member has then
    ///    written, the outcome says contacts were formed (presence is shared from now on).
    static func send(_ new: NewMessage, now: Timestamp, _ db: Database) throws -> SendOutcome {
        let targetID: ConversationID = switch new.target {
        case .conversation(let id): id
        case .user(let user): .direct(new.sender, user)
        }
        if let existing = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT \(Columns.message) FROM messages m WHERE m.sender_id = ? AND m.client_id = ?"),
            arguments: [new.sender.rawValue, new.clientId.rawValue]
        ).map({ Message(row: $0) }) {
            guard existing.conversationId == targetID else { throw StoreError.clientIdConflict }
            return SendOutcome(message: existing, duplicate: true, deliveries: [])
        }

        var deliveries: [Delivery] = []
        switch new.target {
        case .user(let recipient):
            guard recipient != new.sender else { throw StoreError.invalidRecipient }
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM users WHERE id = ?", arguments: [recipient.rawValue]) == true
            else { throw StoreError.userNotFound }
            deliveries += try ensureDirect(new.sender, recipient, now: now, db).1
        case .conversation:
            break
        }
        let members = try memberIDs(targetID, db)
        guard members.contains(new.sender) else { throw StoreError.conversationNotFound }

        guard let seq = try Int64.fetchOne(
            db.cachedStatement(sql: "UPDATE conversations SET last_seq = last_seq + 1, last_activity_at = ? WHERE id = ? RETURNING last_seq"),
            arguments: [now.milliseconds, targetID.rawValue])
        else { throw StoreError.conversationNotFound }
        let message = Message(
            id: .random(), conversationId: targetID, seq: seq, senderId: new.sender, clientId: new.clientId,
            text: new.text, createdAt: now)
        try db.cachedStatement(sql: """
            INSERT INTO messages (id, conversation_id, seq, sender_id, client_id, text, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [message.id.rawValue, targetID.rawValue, seq, new.sender.rawValue, new.clientId.rawValue,
                                     message.text, now.milliseconds])
        let firstSent = try Int64.fetchOne(
            db.cachedStatement(sql: """
                UPDATE conversation_members SET delivered_seq = ?, read_seq = ?, first_sent_seq = COALESCE(first_sent_seq, ?)
                WHERE conversation_id = ? AND user_id = ? RETURNING first_sent_seq
                """),
            arguments: [seq, seq, seq, targetID.rawValue, new.sender.rawValue])
        // Rule 6: the sender's first message where everyone else has written forms contacts.
        let contactsFormed = try firstSent == seq && Int.fetchOne(
            db.cachedStatement(sql: "SELECT COUNT(*) FROM conversation_members WHERE conversation_id = ? AND first_sent_seq IS NULL"),
            arguments: [targetID.rawValue]) == 0
        for member in members {
            deliveries.append(try appendEvent(.message(message), to: member, now: now, db))
        }
        return SendOutcome(message: message, duplicate: false, deliveries: deliveries, contactsFormed: contactsFormed)
    }

    public func messages(in conversation: ConversationID, as user: UserID, query: HistoryQuery) async throws -> MessagePage {
        try await pool.read { db in
            guard try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT 1 FROM conversation_members WHERE conversation_id = ? AND user_id = ?"),
                arguments: [conversation.rawValue, user.rawValue]) == true
            else { throw StoreError.conversationNotFound }
            var sql = "SELECT \(Columns.message) FROM messages m WHERE m.conversation_id = ?"
            var arguments: StatementArguments = [conversation.rawValue]
            if let after = query.after {
                sql += " AND m.seq > ?"
                arguments += [after]
            }
            if let before = query.before {
                sql += " AND m.seq < ?"
                arguments += [before]
            }
            // With `after` the page grows forward from it; otherwise it is the newest part of the range.
            let ascending = query.after != nil
            sql += " ORDER BY m.seq \(ascending ? "ASC" : "DESC") LIMIT ?"
            arguments += [query.limit + 1]
            let messages = try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments).map { Message(row: $0) }
            return MessagePage(fetched: messages, limit: query.limit, newestFirst: !ascending)
        }
    }

    public func updateReceipt(
        in conversation: ConversationID, member: UserID, deliveredSeq: Int64?, readSeq: Int64?, now: Timestamp
    ) async throws -> ReceiptOutcome {
        try await batchedWrite { db in
            guard let row = try Row.fetchOne(
                db.cachedStatement(sql: """
                    SELECT m.delivered_seq, m.read_seq, c.last_seq FROM conversation_members m
                    JOIN conversations c ON c.id = m.conversation_id WHERE m.conversation_id = ? AND m.user_id = ?
                    """),
                arguments: [conversation.rawValue, member.rawValue])
            else { throw StoreError.conversationNotFound }
            let (oldDelivered, oldRead, lastSeq): (Int64, Int64, Int64) = (row[0], row[1], row[2])
            let (receipt, moved) = try ReceiptUpdate.advancing(
                conversation: conversation, member: member, delivered: oldDelivered, read: oldRead, lastSeq: lastSeq,
                requestedDelivered: deliveredSeq, requestedRead: readSeq)
            guard moved else { return ReceiptOutcome(receipt: receipt, deliveries: []) }
            try db.cachedStatement(sql: "UPDATE conversation_members SET delivered_seq = ?, read_seq = ? WHERE conversation_id = ? AND user_id = ?")
                .execute(arguments: [receipt.deliveredSeq, receipt.readSeq, conversation.rawValue, member.rawValue])
            let deliveries = try Self.memberIDs(conversation, db).map { try Self.appendEvent(.receipt(receipt), to: $0, now: now, db) }
            return ReceiptOutcome(receipt: receipt, deliveries: deliveries)
        }
    }
}
