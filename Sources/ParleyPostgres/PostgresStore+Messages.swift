import ParleyCore
import ParleyStore
import PostgresNIO

extension PostgresStore: MessageStore {
    /// Stores a message; the rules are those of the conformance suite (and of SQLite's send):
    /// 1. (sender, client id) seen before → the stored message, nothing written (another target
    ///    conversation is a conflict). Two concurrent first sends of one client id: the loser's
    ///    insert hits the unique key, its transaction runs again and finds the winner's message.
    /// 2. The sender must be a member; a user target creates the direct conversation first.
    /// 3. seq = last seq + 1 under the conversation row's lock, held to commit: gapless and unique.
    /// 4. The sender's cursors move to the new seq; 5. every member gets a `message` event, taking
    ///    the members' user rows in id order (no deadlock between two conversations).
    /// 6. The sender's first message where every member has written forms contacts.
    /// 10. Attachments are complete uploads of the sender's that no message carries, claimed
    ///    (``claimable(_:_:)``, rows locked `FOR UPDATE`) in the send's transaction.
    ///
    /// The transaction is the `parley_send` function (``PostgresSendFunction``) between `BEGIN` and
    /// `COMMIT`: the answer means committed.
    public func send(_ new: NewMessage, now: Timestamp) async throws -> SendOutcome {
        if case .conversation(let id) = new.target, id.isGroup { return try await sendToGroup(new, id, now: now) }
        if Self.isPlain(new) { return try await sendPlain([new], now: now)[0].get() }
        let (conversation, recipient) = Self.directTarget(of: new)
        let statement = Prepared.Send(
            sender: new.sender.rawValue, clientId: new.clientId.rawValue, conversation: conversation.rawValue,
            recipient: recipient?.rawValue, text: new.text, now: now.milliseconds, messageId: MessageID.random().rawValue, node: nodeID)
        // In a transaction of its own: the answer waits for the COMMIT (``PostgresStore``).
        let (row, quote, attachments): (Prepared.Send.Row?, ReplyQuote?, [Attachment]) = try await transaction { connection in
            // A retry is answered by the send function whatever it carries (rule 1); a new reply is checked first.
            if let reply = new.replyToSeq, try await self.earlierAction(by: new.sender, new.clientId, connection) == nil {
                try await self.checkReply(to: reply, in: conversation, from: new.sender, recipient: recipient, connection)
            }
            let row: Prepared.Send.Row? = try await connection.execute(statement, logger: self.logger).reduce(into: []) { $0.append($1) }.first
            guard let row else { return (nil, nil, []) }
            let quote = try await self.keepReply(new.replyToSeq, of: row, connection)
            // Rule 10 after the send's own checks (as SQLite's order of refusals); a refusal rolls it all back.
            guard !row.duplicate, !new.attachments.isEmpty else { return (row, quote, []) }
            let attachments = try await self.claimable(new, connection)
            try await self.claim(
                attachments, conversation: ConversationID(rawValue: row.conversation), seq: row.seq, connection)
            return (row, quote, attachments)
        }
        guard let row else { throw StoreError.conversationNotFound }
        return try await outcome(of: new, row, quote: quote, attachments: attachments, now: now)
    }

    /// The answer to a send from its committed row: the message, and each member's new events.
    func outcome(of new: NewMessage, _ row: Prepared.Send.Row, quote: ReplyQuote?, attachments: [Attachment], now: Timestamp)
        async throws -> SendOutcome
    {
        let message = Message(
            id: MessageID(rawValue: row.messageId), conversationId: ConversationID(rawValue: row.conversation), seq: row.seq,
            senderId: new.sender, clientId: new.clientId, text: row.text, createdAt: Timestamp(milliseconds: row.createdAt), replyTo: quote,
            attachments: attachments.isEmpty ? nil : attachments)
        if row.duplicate {
            // As it is now (edited, deleted, reacted to), as SQLite answers a retry.
            let current = try await read { db in try await self.currentMessage(row.seq, in: message.conversationId, for: new.sender, db) }
            return SendOutcome(message: current ?? message, duplicate: true, deliveries: [])
        }
        let members = row.members.map(UserID.init(rawValue:))
        var deliveries: [Delivery] = []
        if row.created {
            let info = ConversationInfo(id: message.conversationId, kind: .direct, createdAt: now, members: try await users(members))
            for (member, position) in zip(members, row.creationPositions) {
                deliveries.append(Delivery(recipient: member, event: StreamEvent(position: position, payload: .conversation(info))))
            }
        }
        for (member, position) in zip(members, row.positions) {
            deliveries.append(Delivery(recipient: member, event: StreamEvent(position: position, payload: .message(message))))
        }
        return SendOutcome(message: message, duplicate: false, deliveries: deliveries, contactsFormed: row.contactsFormed)
    }

    /// A reply's seq is kept by a second statement of the send's transaction (the function predates
    /// replies); a duplicate answers the original's. Returns the quote.
    private func keepReply(_ requested: Int64?, of row: Prepared.Send.Row, _ db: PostgresConnection) async throws -> ReplyQuote? {
        let conversation = ConversationID(rawValue: row.conversation)
        let reply: Int64?
        if row.duplicate {
            let stored = try await db.rows(
                "SELECT reply_to_seq FROM messages WHERE conversation_id = \(row.conversation) AND seq = \(row.seq)", logger
            ).first
            reply = try stored?.decode(Int64?.self)
        } else {
            reply = requested
        }
        guard let reply else { return nil }
        if !row.duplicate {
            try await db.query("UPDATE messages SET reply_to_seq = \(reply) WHERE conversation_id = \(row.conversation) AND seq = \(row.seq)", logger: logger)
        }
        return try await quote(of: reply, in: conversation, db)
    }

    /// A reply names a message of the conversation that the sender can see and that is not an entry
    /// (SQLite's send rule 9); a sender outside the conversation learns nothing about it.
    /// The original is read `FOR SHARE`: a delete for everyone racing the reply commits before the
    /// quote is read or after the reply, never in between.
    func checkReply(to seq: Int64, in conversation: ConversationID, from sender: UserID, recipient: UserID?, _ db: PostgresConnection) async throws {
        guard try await isMember(sender, of: conversation, db) else {
            // To a user: the send's own checks first (as SQLite's); a conversation that does not
            // exist yet has nothing to answer.
            guard let recipient else { throw StoreError.conversationNotFound }
            guard recipient != sender else { throw StoreError.invalidRecipient }
            guard try await !Self.users([recipient], db, logger).isEmpty else { throw StoreError.userNotFound }
            throw StoreError.messageNotFound
        }
        guard try await canSee(seq, in: conversation, user: sender, db),
            try await db.value(
                "SELECT entry IS NULL FROM messages WHERE conversation_id = \(conversation.rawValue) AND seq = \(seq) FOR SHARE", as: Bool.self, logger)
                == true
        else { throw StoreError.messageNotFound }
    }

    public func messages(in conversation: ConversationID, as user: UserID, query: HistoryQuery) async throws -> MessagePage {
        try await read { db in
            // A group member (or former member) sees the seqs inside their spans only.
            let membership =
                conversation.isGroup
                ? "SELECT 1 FROM member_spans WHERE conversation_id = \(conversation.rawValue) AND user_id = \(user.rawValue) LIMIT 1" as PostgresQuery
                : "SELECT 1 FROM conversation_members WHERE conversation_id = \(conversation.rawValue) AND user_id = \(user.rawValue)"
            guard try await db.value(membership, as: Int32.self, self.logger) != nil else { throw StoreError.conversationNotFound }
            // With `after` the page grows forward from it; otherwise it is the newest part of the range.
            let ascending = query.after != nil
            let sql: PostgresQuery = """
                SELECT \(unescaped: Columns.message) FROM messages m WHERE m.conversation_id = \(conversation.rawValue)
                  AND m.seq > \(query.after ?? -1) AND m.seq < \(query.before ?? Int64.max)
                  AND NOT EXISTS (SELECT 1 FROM hidden_messages h WHERE h.user_id = \(user.rawValue)
                    AND h.conversation_id = m.conversation_id AND h.seq = m.seq)
                  AND (\(!conversation.isGroup) OR (
                    m.seq <= (SELECT MAX(COALESCE(s.to_seq, 9223372036854775807)) FROM member_spans s
                        WHERE s.conversation_id = m.conversation_id AND s.user_id = \(user.rawValue))
                    AND EXISTS (SELECT 1 FROM member_spans s WHERE s.conversation_id = m.conversation_id
                        AND s.user_id = \(user.rawValue) AND m.seq >= s.from_seq AND (s.to_seq IS NULL OR m.seq <= s.to_seq))))
                ORDER BY m.seq \(unescaped: ascending ? "ASC" : "DESC") LIMIT \(query.limit + 1)
                """
            let messages = try await self.complete(db.rows(sql, self.logger).map { Message(try $0.decode(MessageRow.self)) }, for: user, db)
            return MessagePage(fetched: messages, limit: query.limit, newestFirst: !ascending)
        }
    }

    /// Moves cursors forward under the member row's lock (`FOR UPDATE`): two receipts at once
    /// cannot move a cursor back. One round trip: the `parley_receipt` function
    /// (``PostgresReceiptFunction``) in a procedure that commits before it answers
    /// (``committedCall(_:)``); the function applies ``ReceiptUpdate/advancing(conversation:member:delivered:read:lastSeq:requestedDelivered:requestedRead:)``'s rule.
    public func updateReceipt(
        in conversation: ConversationID, member: UserID, deliveredSeq: Int64?, readSeq: Int64?, now: Timestamp
    ) async throws -> ReceiptOutcome {
        if conversation.isGroup {
            return try await groupReceipt(in: conversation, member: member, deliveredSeq: deliveredSeq, readSeq: readSeq, now: now)
        }
        let statement = Prepared.Receipt(
            conversation: conversation.rawValue, member: member.rawValue, delivered: deliveredSeq, read: readSeq,
            now: now.milliseconds, node: nodeID)
        let row = try await committedCall(PostgresQuery(unsafeSQL: Prepared.Receipt.sql, binds: try statement.makeBindings()))
            .first.map { try statement.decodeRow($0) }
        guard let row else { throw StoreError.conversationNotFound }
        let receipt = ReceiptUpdate(conversationId: conversation, userId: member, deliveredSeq: row.delivered, readSeq: row.read)
        guard row.moved else { return ReceiptOutcome(receipt: receipt, deliveries: []) }
        let deliveries = zip(row.members, row.positions).map { user, position in
            Delivery(recipient: UserID(rawValue: user), event: StreamEvent(position: position, payload: .receipt(receipt)))
        }
        return ReceiptOutcome(receipt: receipt, deliveries: deliveries)
    }
}
