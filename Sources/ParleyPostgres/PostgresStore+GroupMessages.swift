import ParleyCore
import ParleyStore
import PostgresNIO

/// Sends and receipts in groups: the rules of the direct path (``PostgresStore/send(_:now:)``), plus
/// mentions and the receipt aggregate. An ordinary send is one server-side function
/// (``PostgresGroupFunctions``); the rest are statements from Swift under the conversation row's lock.
extension PostgresStore {
    func sendToGroup(_ new: NewMessage, _ conversation: ConversationID, now: Timestamp) async throws -> SendOutcome {
        if new.replyToSeq == nil, new.attachments.isEmpty, new.mentionNames.isEmpty,
            let outcome = try await sendOrdinaryToGroup(new, conversation, now: now)
        {
            return outcome
        }
        return try await sendToGroupInSteps(new, conversation, now: now)
    }

    /// Any group send (replies, files, mentions, retries, refusals) as statements from Swift.
    func sendToGroupInSteps(_ new: NewMessage, _ conversation: ConversationID, now: Timestamp) async throws -> SendOutcome {
        try await transaction { db in
            var writer = PostgresGroupWriter(store: self, conversation: conversation, now: now, db: db)
            let state = try await writer.lockGroup()
            if let earlier = try await self.earlierAction(by: new.sender, new.clientId, db) {
                guard earlier.conversationId == conversation, !earlier.isEntry else { throw StoreError.clientIdConflict }
                return SendOutcome(message: try await self.complete(earlier, for: new.sender, db), duplicate: true, deliveries: [])
            }
            guard let state, !state.closed, state.member(new.sender) != nil else { throw StoreError.conversationNotFound }
            if let reply = new.replyToSeq {
                try await self.checkReply(to: reply, in: conversation, from: new.sender, recipient: nil, db)
            }
            let heldBack = try await self.holdsBack(new.sender, in: conversation, db)
            let mentions = try await self.resolveMentions(new.mentionNames, of: new.sender, in: conversation, db)
            let attachments = try await self.claimable(new, db)
            var message = try await writer.insert(
                text: new.text, by: new.sender, new.clientId, entry: nil, mentions: mentions, replyTo: new.replyToSeq)
            if !attachments.isEmpty {
                try await self.claim(attachments, conversation: conversation, seq: message.seq, db)
                message.attachments = attachments
            }
            try await writer.deliver(message)
            if heldBack { try await writer.refreshAggregate() }
            try await self.notify(writer.deliveries, db)
            return SendOutcome(message: message, duplicate: false, deliveries: writer.deliveries)
        }
    }

    /// `parley_group_send` and its commit in one `CALL` (``PostgresCommittedCalls``); nil when it
    /// wrote nothing and the general path must answer (a retry, an error: the function's rule 2).
    func sendOrdinaryToGroup(_ new: NewMessage, _ conversation: ConversationID, now: Timestamp) async throws -> SendOutcome? {
        let id = MessageID.random()
        let rows = try await committedCall(
            """
            CALL parley_group_send_committed(\(new.sender.rawValue), \(new.clientId.rawValue), \(conversation.rawValue), \(new.text),
                \(now.milliseconds), \(id.rawValue), \(nodeID), NULL, NULL, NULL, NULL, NULL, NULL, NULL)
            """)
        guard let row = rows.first else { return nil }
        let (found, members, positions, delivered, read, senders, summaryPositions) = try row.decode(
            (Int64?, [String]?, [Int64]?, Int64?, Int64?, [String]?, [Int64]?).self)
        guard let seq = found, let members, let positions else { return nil }
        let message = Message(
            id: id, conversationId: conversation, seq: seq, senderId: new.sender, clientId: new.clientId, text: new.text, createdAt: now)
        let deliveries = zip(members, positions).map { member, position in
            Delivery(recipient: UserID(rawValue: member), event: StreamEvent(position: position, payload: .message(message)))
        }
        return SendOutcome(
            message: message, duplicate: false,
            deliveries: deliveries + Self.summaries(conversation, delivered, read, to: senders, at: summaryPositions))
    }

    /// The `receiptSummary` events `parley_group_aggregate` wrote (none when it did not move).
    private static func summaries(_ conversation: ConversationID, _ delivered: Int64?, _ read: Int64?, to senders: [String]?, at positions: [Int64]?)
        -> [Delivery]
    {
        guard let delivered, let read, let senders, let positions else { return [] }
        let summary = ReceiptSummary(conversationId: conversation, everyoneDeliveredSeq: delivered, everyoneReadSeq: read)
        return zip(senders, positions).map { sender, position in
            Delivery(recipient: UserID(rawValue: sender), event: StreamEvent(position: position, payload: .receiptSummary(summary)))
        }
    }

    func groupReceipt(in conversation: ConversationID, member: UserID, deliveredSeq: Int64?, readSeq: Int64?, now: Timestamp) async throws
        -> ReceiptOutcome
    {
        if let outcome = try await groupReceiptInOne(in: conversation, member: member, deliveredSeq: deliveredSeq, readSeq: readSeq, now: now) {
            return outcome
        }
        return try await groupReceiptInSteps(in: conversation, member: member, deliveredSeq: deliveredSeq, readSeq: readSeq, now: now)
    }

    /// `parley_group_receipt` and its commit in one `CALL` (``PostgresCommittedCalls``); nil when it
    /// wrote nothing and the statements from Swift must answer (an error: the function's rule 2).
    func groupReceiptInOne(in conversation: ConversationID, member: UserID, deliveredSeq: Int64?, readSeq: Int64?, now: Timestamp) async throws
        -> ReceiptOutcome?
    {
        let rows = try await committedCall(
            """
            CALL parley_group_receipt_committed(\(conversation.rawValue), \(member.rawValue), \(deliveredSeq), \(readSeq),
                \(now.milliseconds), \(nodeID), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
            """)
        guard let row = rows.first else { return nil }
        let (found, read, moved, position, summaryDelivered, summaryRead, senders, summaryPositions) = try row.decode(
            (Int64?, Int64?, Bool?, Int64?, Int64?, Int64?, [String]?, [Int64]?).self)
        guard let delivered = found, let read, let moved else { return nil }
        let receipt = ReceiptUpdate(conversationId: conversation, userId: member, deliveredSeq: delivered, readSeq: read)
        guard moved, let position else { return ReceiptOutcome(receipt: receipt, deliveries: []) }
        let own = Delivery(recipient: member, event: StreamEvent(position: position, payload: .receipt(receipt)))
        return ReceiptOutcome(
            receipt: receipt, deliveries: [own] + Self.summaries(conversation, summaryDelivered, summaryRead, to: senders, at: summaryPositions))
    }

    /// Any group receipt, as statements from Swift.
    func groupReceiptInSteps(in conversation: ConversationID, member: UserID, deliveredSeq: Int64?, readSeq: Int64?, now: Timestamp)
        async throws -> ReceiptOutcome
    {
        try await transaction { db in
            // The group's lock in a statement of its own: a statement that waited for it would read
            // the member's row as it was before the wait, and could move a cursor back.
            guard
                try await db.value(
                    "SELECT 1 FROM conversations WHERE id = \(conversation.rawValue) FOR UPDATE", as: Int32.self, self.logger) != nil,
                let row = try await db.rows(
                    """
                    SELECT m.delivered_seq, m.read_seq, c.last_seq FROM conversation_members m JOIN conversations c ON c.id = m.conversation_id
                    WHERE m.conversation_id = \(conversation.rawValue) AND m.user_id = \(member.rawValue)
                    """, self.logger
                ).first
            else { throw StoreError.conversationNotFound }
            let (oldDelivered, oldRead, lastSeq) = try row.decode((Int64, Int64, Int64).self)
            let (receipt, moved) = try ReceiptUpdate.advancing(
                conversation: conversation, member: member, delivered: oldDelivered, read: oldRead, lastSeq: lastSeq,
                requestedDelivered: deliveredSeq, requestedRead: readSeq)
            guard moved else { return ReceiptOutcome(receipt: receipt, deliveries: []) }
            try await db.query(
                """
                UPDATE conversation_members
                SET delivered_seq = GREATEST(delivered_seq, \(receipt.deliveredSeq)), read_seq = GREATEST(read_seq, \(receipt.readSeq))
                WHERE conversation_id = \(conversation.rawValue) AND user_id = \(member.rawValue)
                """, logger: self.logger)
            // The member's own devices hear of their cursors; the senders it concerns of the aggregate.
            var writer = PostgresGroupWriter(store: self, conversation: conversation, now: now, db: db)
            let own = try await self.appendEvent(.receipt(receipt), to: member, now: now, db)
            try await writer.refreshAggregate()
            let deliveries = [own] + writer.deliveries
            try await self.notify(deliveries, db)
            return ReceiptOutcome(receipt: receipt, deliveries: deliveries)
        }
    }

    private func holdsBack(_ user: UserID, in conversation: ConversationID, _ db: PostgresConnection) async throws -> Bool {
        try await db.value(
            """
            SELECT m.delivered_seq <= c.everyone_delivered_seq OR m.read_seq <= c.everyone_read_seq
            FROM conversation_members m JOIN conversations c ON c.id = m.conversation_id
            WHERE m.conversation_id = \(conversation.rawValue) AND m.user_id = \(user.rawValue)
            """, as: Bool.self, logger) ?? false
    }

    /// The current members (not the sender) whose usernames the text mentions, in order of mention.
    private func resolveMentions(_ names: [String], of sender: UserID, in conversation: ConversationID, _ db: PostgresConnection) async throws
        -> [UserID]?
    {
        let names = Array(names.prefix(50))
        guard !names.isEmpty else { return nil }
        let rows = try await db.rows(
            """
            SELECT u.username, u.id FROM conversation_members m JOIN users u ON u.id = m.user_id
            WHERE m.conversation_id = \(conversation.rawValue) AND m.user_id <> \(sender.rawValue) AND u.username = ANY(\(names))
            """, logger
        ).map { try $0.decode((String, String).self) }
        let byName = Dictionary(rows.map { ($0.0, UserID(rawValue: $0.1)) }, uniquingKeysWith: { first, _ in first })
        let mentioned = names.compactMap { byName[$0] }
        return mentioned.isEmpty ? nil : mentioned
    }
}
