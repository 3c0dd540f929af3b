import ParleyCore
import ParleyStore
import PostgresNIO

extension PostgresStore: MessageStore {
    /// The send transaction; the rules are those of the conformance suite (and of SQLite's send):
    /// 1. (sender, client id) seen before → the stored message, nothing written (another target
    ///    conversation is a conflict). Two concurrent first sends of one client id: the loser's
    ///    insert hits the unique key, its transaction runs again and finds the winner's message.
    /// 2. The sender must be a member; a user target creates the direct conversation first.
    /// 3. seq = last seq + 1 under the conversation row's lock, held to commit: gapless and unique.
    /// 4. The sender's cursors move to the new seq; 5. every member gets a `message` event, taking
    ///    the members' user rows in id order (no deadlock between two conversations).
    /// 6. The sender's first message where every member has written forms contacts.
    public func send(_ new: NewMessage, now: Timestamp) async throws -> SendOutcome {
        try await transaction { db in
            let targetID: ConversationID = switch new.target {
            case .conversation(let id): id
            case .user(let user): .direct(new.sender, user)
            }
            if let existing = try await db.rows(
                "SELECT \(unescaped: Columns.message) FROM messages m WHERE m.sender_id = \(new.sender.rawValue) AND m.client_id = \(new.clientId.rawValue)",
                logger
            ).first.map({ Message(try $0.decode(MessageRow.self)) }) {
                guard existing.conversationId == targetID else { throw StoreError.clientIdConflict }
                return SendOutcome(message: existing, duplicate: true, deliveries: [])
            }
            var deliveries: [Delivery] = []
            if case .user(let recipient) = new.target {
                guard recipient != new.sender else { throw StoreError.invalidRecipient }
                guard try await db.value("SELECT 1 FROM users WHERE id = \(recipient.rawValue)", as: Int32.self, logger) != nil
                else { throw StoreError.userNotFound }
                deliveries += try await ensureDirect(new.sender, recipient, now: now, db).1
            }
            guard let seq = try await db.value("""
                UPDATE conversations SET last_seq = last_seq + 1, last_activity_at = \(now.milliseconds)
                WHERE id = \(targetID.rawValue)
                  AND EXISTS (SELECT 1 FROM conversation_members WHERE conversation_id = \(targetID.rawValue) AND user_id = \(new.sender.rawValue))
                RETURNING last_seq
                """, as: Int64.self, logger)
            else { throw StoreError.conversationNotFound }
            let message = Message(
                id: .random(), conversationId: targetID, seq: seq, senderId: new.sender, clientId: new.clientId, text: new.text, createdAt: now)
            try await db.query("""
                INSERT INTO messages (id, conversation_id, seq, sender_id, client_id, text, created_at)
                VALUES (\(message.id.rawValue), \(targetID.rawValue), \(seq), \(new.sender.rawValue), \(new.clientId.rawValue),
                        \(message.text), \(now.milliseconds))
                """, logger: logger)
            let firstSent = try await db.value("""
                UPDATE conversation_members SET delivered_seq = \(seq), read_seq = \(seq), first_sent_seq = COALESCE(first_sent_seq, \(seq))
                WHERE conversation_id = \(targetID.rawValue) AND user_id = \(new.sender.rawValue) RETURNING first_sent_seq
                """, as: Int64.self, logger)
            var contactsFormed = false
            if firstSent == seq {
                contactsFormed = try await db.value(
                    "SELECT COUNT(*) FROM conversation_members WHERE conversation_id = \(targetID.rawValue) AND first_sent_seq IS NULL",
                    as: Int64.self, logger) == 0
            }
            for member in try await memberIDs(targetID, db) {
                deliveries.append(try await appendEvent(.message(message), to: member, now: now, db))
            }
            try await notify(deliveries, db)
            return SendOutcome(message: message, duplicate: false, deliveries: deliveries, contactsFormed: contactsFormed)
        }
    }

    public func messages(in conversation: ConversationID, as user: UserID, query: HistoryQuery) async throws -> MessagePage {
        try await read { db in
            guard try await db.value(
                "SELECT 1 FROM conversation_members WHERE conversation_id = \(conversation.rawValue) AND user_id = \(user.rawValue)",
                as: Int32.self, logger) != nil
            else { throw StoreError.conversationNotFound }
            // With `after` the page grows forward from it; otherwise it is the newest part of the range.
            let ascending = query.after != nil
            let sql: PostgresQuery = """
                SELECT \(unescaped: Columns.message) FROM messages m WHERE m.conversation_id = \(conversation.rawValue)
                  AND m.seq > \(query.after ?? -1) AND m.seq < \(query.before ?? Int64.max)
                ORDER BY m.seq \(unescaped: ascending ? "ASC" : "DESC") LIMIT \(query.limit + 1)
                """
            var messages = try await db.rows(sql, logger).map { Message(try $0.decode(MessageRow.self)) }
            let hasMore = messages.count > query.limit
            if hasMore { messages.removeLast() }
            if !ascending { messages.reverse() }
            return MessagePage(messages: messages, hasMore: hasMore)
        }
    }

    /// Moves cursors forward under the member row's lock (`FOR UPDATE`): two receipts at once
    /// cannot move a cursor back.
    public func updateReceipt(
        in conversation: ConversationID, member: UserID, deliveredSeq: Int64?, readSeq: Int64?, now: Timestamp
    ) async throws -> ReceiptOutcome {
        try await transaction { db in
            guard let row = try await db.rows("""
                SELECT m.delivered_seq, m.read_seq, c.last_seq FROM conversation_members m
                JOIN conversations c ON c.id = m.conversation_id
                WHERE m.conversation_id = \(conversation.rawValue) AND m.user_id = \(member.rawValue) FOR UPDATE OF m
                """, logger).first
            else { throw StoreError.conversationNotFound }
            let (oldDelivered, oldRead, lastSeq) = try row.decode((Int64, Int64, Int64).self)
            let requestedRead = readSeq ?? 0
            let requestedDelivered = max(deliveredSeq ?? 0, requestedRead)
            guard requestedDelivered <= lastSeq else { throw StoreError.cursorBeyondEnd }
            let receipt = ReceiptUpdate(
                conversationId: conversation, userId: member,
                deliveredSeq: max(oldDelivered, requestedDelivered), readSeq: max(oldRead, requestedRead))
            guard receipt.deliveredSeq != oldDelivered || receipt.readSeq != oldRead else {
                return ReceiptOutcome(receipt: receipt, deliveries: [])
            }
            try await db.query("""
                UPDATE conversation_members SET delivered_seq = \(receipt.deliveredSeq), read_seq = \(receipt.readSeq)
                WHERE conversation_id = \(conversation.rawValue) AND user_id = \(member.rawValue)
                """, logger: logger)
            var deliveries: [Delivery] = []
            for user in try await memberIDs(conversation, db) {
                deliveries.append(try await appendEvent(.receipt(receipt), to: user, now: now, db))
            }
            try await notify(deliveries, db)
            return ReceiptOutcome(receipt: receipt, deliveries: deliveries)
        }
    }
}
