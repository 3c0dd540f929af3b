import GRDB
import ParleyCore
import ParleyStore

extension SQLiteStore: MessageStore {
    public func send(_ new: NewMessage, now: Timestamp) async throws -> SendOutcome {
        let statements = writerStatements
        return try await batchedWrite { db in try Self.send(new, now: now, statements.on(db), db) }
    }

    /// The whole batch is one job of the group commit. A message that is refused has written nothing
    /// (rule 7 of ``send(_:now:_:)``), so messages need no savepoint of their own: a failure while
    /// writing (disk full, I/O) fails the whole job, whose savepoint the group commit rolls back.
    public func send(_ batch: [NewMessage], now: Timestamp) async -> [Result<SendOutcome, any Error>] {
        let statements = writerStatements
        do {
            return try await batchedWrite { db in
                let statements = try statements.on(db)
                return try batch.map { new -> Result<SendOutcome, any Error> in
                    let checked: Checked
                    do {
                        checked = try Self.check(new, statements, db)
                    } catch {
                        return .failure(Self.classified(error))
                    }
                    return .success(try Self.write(new, checked, now: now, statements, db))
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
    /// 7. Everything that can refuse a message is read before anything is written (``check(_:_:)``).
    /// 9. A reply names a message of the same conversation that the sender can see and that is not
    ///    an entry (``check(_:_:_:)``); the stored message carries the original's current quote.
    /// 10. Attachments are complete uploads of the sender's that no message carries yet
    ///    (``claimable(_:_:)``), claimed for this message in its transaction.
    /// 8. In a group, `@username`s of current members other than the sender become the message's
    ///    `mentions` (and rows of `mentions`, for the mention count); a sender whose cursors were the
    ///    group's lowest moves the receipt aggregate (``GroupReceiptAggregate``).
    /// 11. A group message is stored once (fan-out on read): it takes one stream position, one past
    ///    the highest head among the members and the group's previous message (so a group's
    ///    positions go up with its seqs, which bounds a replay's scan), held in `messages.pos`; each member's head moves to it
    ///    and their delivery names their old head as `previous`. No event row is written per member:
    ///    a replay reads the message through the member's span (``events(of:after:limit:)``), and
    ///    the members are exactly the spans open at its seq, as no span opens or closes at a
    ///    message's own seq.
    static func send(_ new: NewMessage, now: Timestamp, _ statements: WriterStatements, _ db: Database) throws -> SendOutcome {
        try write(new, try check(new, statements, db), now: now, statements, db)
    }

    /// What the reads of a send decided.
    enum Checked {
        /// Sent before (rule 1): this is the outcome, and nothing is to be written.
        case stored(SendOutcome)
        /// To be written to this conversation; `members` is nil when the direct conversation is new,
        /// `heads` (the members with their stream heads) is a group's, which its message needs (rule 11).
        case accepted(ConversationID, members: [UserID]?, heads: [(UserID, Int64)]?, attachments: [Attachment])
    }

    /// Rules 1, 2 and 9, by reading only (rule 7).
    static func check(_ new: NewMessage, _ statements: WriterStatements, _ db: Database) throws -> Checked {
        let targetID: ConversationID =
            switch new.target {
            case .conversation(let id): id
            case .user(let user): .direct(new.sender, user)
            }
        if let existing = try statements.sentBefore.firstRow(.text(new.sender.rawValue), .text(new.clientId.rawValue), read: Message.init(row:)) {
            // A group action's entry under this client id is not this message.
            guard existing.conversationId == targetID, !existing.isEntry else { throw StoreError.clientIdConflict }
            return .stored(SendOutcome(message: try MessageRendering.complete(existing, for: new.sender, db), duplicate: true, deliveries: []))
        }
        if case .user(let recipient) = new.target {
            guard recipient != new.sender else { throw StoreError.invalidRecipient }
            guard try statements.userExists.firstRow(.text(recipient.rawValue), read: { _ in true }) == true else { throw StoreError.userNotFound }
        }
        // A group's members are read with their heads: one pass over them for the check and the write.
        let heads = try targetID.isGroup ? statements.heads(ofMembersOf: targetID.rawValue) : nil
        let members = try heads?.map(\.0) ?? memberIDs(targetID, statements)
        if members.isEmpty, case .user = new.target {
            // Nothing to answer in a conversation that does not exist yet.
            guard new.replyToSeq == nil else { throw StoreError.messageNotFound }
            return .accepted(targetID, members: nil, heads: nil, attachments: try claimable(new, db))
        }
        guard members.contains(new.sender) else { throw StoreError.conversationNotFound }
        if let reply = new.replyToSeq {
            guard try MessageVisibility.canSee(reply, in: targetID, user: new.sender, db),
                try String.fetchOne(
                    db.cachedStatement(sql: "SELECT entry FROM messages WHERE conversation_id = ? AND seq = ?"), arguments: [targetID.rawValue, reply]) == nil
            else { throw StoreError.messageNotFound }
        }
        return .accepted(targetID, members: members, heads: heads, attachments: try claimable(new, db))
    }

    /// Rule 10: the attachments, each a complete upload of the sender's that no message carries (nor a profile photo).
    static func claimable(_ new: NewMessage, _ db: Database) throws -> [Attachment] {
        guard !new.attachments.isEmpty else { return [] }
        return try new.attachments.map { request in
            guard let upload = try upload(request.uploadId, db), upload.owner == new.sender, !upload.isClaimed,
                let attachment = upload.attachment(request)
            else { throw StoreError.invalidAttachment }
            return attachment
        }
    }

    /// Rules 2 to 6, once ``check(_:_:)`` accepted the message (a stored one is returned as it is).
    static func write(
        _ new: NewMessage, _ checked: Checked, now: Timestamp, _ statements: WriterStatements, _ db: Database
    ) throws -> SendOutcome {
        let (targetID, known, heads, attachments): (ConversationID, [UserID]?, [(UserID, Int64)]?, [Attachment])
        switch checked {
        case .stored(let outcome): return outcome
        case .accepted(let id, let members, let groupHeads, let claimed): (targetID, known, heads, attachments) = (id, members, groupHeads, claimed)
        }
        var deliveries: [Delivery] = []
        var members = known ?? []
        if known == nil, case .user(let recipient) = new.target {
            deliveries += try ensureDirect(new.sender, recipient, now: now, statements, db).1
            // The two users just added, in the order the members query gives (user id).
            members = [new.sender, recipient].sorted { $0.rawValue < $1.rawValue }
        }
        guard let seq = try statements.nextSeq(in: targetID.rawValue, at: now.milliseconds) else { throw StoreError.conversationNotFound }
        // Rule 8: in a group, mentions of current members, and whether the sender held back the receipt aggregate.
        let isGroup = targetID.isGroup
        let mentions = isGroup ? try resolveMentions(new.mentionNames, of: new.sender, in: targetID, db) : nil
        let heldBack = try isGroup && GroupReceiptAggregate.holdsBack(new.sender, in: targetID, db)
        let message = Message(
            id: .random(), conversationId: targetID, seq: seq, senderId: new.sender, clientId: new.clientId,
            text: new.text, createdAt: now, mentions: mentions,
            replyTo: try new.replyToSeq.flatMap { try MessageRendering.quote(of: $0, in: targetID, db) },
            attachments: attachments.isEmpty ? nil : attachments)
        // Rule 11: a group message takes one position, beyond every member's head and the group's last.
        let position = try heads.map { max($0.lazy.map(\.1).max() ?? 0, try statements.lastPosition(in: targetID.rawValue)) + 1 }
        try statements.insertMessage.execute(
            .text(message.id.rawValue), .text(targetID.rawValue), .int(seq), .text(new.sender.rawValue),
            .text(new.clientId.rawValue), .text(message.text), .int(now.milliseconds), .null,
            StoredJSON.text(mentions).map(RawValue.text) ?? .null, new.replyToSeq.map(RawValue.int) ?? .null,
            position.map(RawValue.int) ?? .null)
        statements.searchIndex.add(rowid: statements.lastInsertedRowID, text: message.text)
        if !attachments.isEmpty { try claim(attachments, by: message, db) }
        for user in mentions ?? [] {
            try db.cachedStatement(sql: "INSERT INTO mentions (user_id, conversation_id, seq) VALUES (?, ?, ?)")
                .execute(arguments: [user.rawValue, targetID.rawValue, seq])
        }
        let firstSent = try statements.markSenderSeen(seq, in: targetID.rawValue, sender: new.sender.rawValue)
        // Rule 6: the sender's first message where everyone else has written forms contacts.
        let contactsFormed =
            try !isGroup && firstSent == seq
            && Int.fetchOne(
                db.cachedStatement(sql: "SELECT COUNT(*) FROM conversation_members WHERE conversation_id = ? AND first_sent_seq IS NULL"),
                arguments: [targetID.rawValue]) == 0
        let quoteReaders = try MessageRendering.quoteReaders(message, db)
        if let heads, let position {
            // No event row per member: each member's replay reads the message through their span.
            try statements.setHeads(ofMembersOf: targetID.rawValue, to: position)
            let shared = StreamEvent.Payload.message(message)
            for (member, previous) in heads {
                let seen = message.quoteSeen(by: member, quoteReaders: quoteReaders)
                let event = StreamEvent(position: position, payload: seen.replyTo == message.replyTo ? shared : .message(seen))
                deliveries.append(Delivery(recipient: member, event: event, previous: previous))
            }
        } else {
            for member in members {
                deliveries.append(try appendEvent(.message(message.quoteSeen(by: member, quoteReaders: quoteReaders)), to: member, now: now, statements))
            }
        }
        if heldBack { deliveries += try GroupReceiptAggregate.refresh(targetID, now: now, statements, db) }
        return SendOutcome(message: message, duplicate: false, deliveries: deliveries, contactsFormed: contactsFormed)
    }

    /// The members of a conversation, inside a write.
    static func memberIDs(_ conversation: ConversationID, _ statements: WriterStatements) throws -> [UserID] {
        try statements.members.rows(.text(conversation.rawValue)) { UserID(rawValue: $0.text(0)) }
    }

    public func messages(in conversation: ConversationID, as user: UserID, query: HistoryQuery) async throws -> MessagePage {
        try await pool.read { db in
            var sql = "SELECT \(Columns.message) FROM messages m WHERE m.conversation_id = ?"
            var arguments: StatementArguments = [conversation.rawValue]
            if conversation.isGroup {
                // A group member (or former member) sees the seqs inside their spans only.
                guard
                    try Bool.fetchOne(
                        db, sql: "SELECT 1 FROM member_spans WHERE conversation_id = ? AND user_id = ? LIMIT 1",
                        arguments: [conversation.rawValue, user.rawValue]) == true
                else { throw StoreError.conversationNotFound }
                // Bounded by the spans' outer ends first, so a page never walks what came after one's last span.
                sql += """
                     AND m.seq <= (SELECT MAX(COALESCE(s.to_seq, 9223372036854775807)) FROM member_spans s
                        WHERE s.conversation_id = m.conversation_id AND s.user_id = ?)
                     AND m.seq >= (SELECT MIN(s.from_seq) FROM member_spans s WHERE s.conversation_id = m.conversation_id AND s.user_id = ?)
                     AND EXISTS (SELECT 1 FROM member_spans s WHERE s.conversation_id = m.conversation_id AND s.user_id = ?
                    AND m.seq >= s.from_seq AND (s.to_seq IS NULL OR m.seq <= s.to_seq))
                    """
                arguments += [user.rawValue, user.rawValue, user.rawValue]
            } else {
                guard
                    try Bool.fetchOne(
                        db.cachedStatement(sql: "SELECT 1 FROM conversation_members WHERE conversation_id = ? AND user_id = ?"),
                        arguments: [conversation.rawValue, user.rawValue]) == true
                else { throw StoreError.conversationNotFound }
            }
            // Deleted for me: gone from my pages.
            sql += " AND NOT EXISTS (SELECT 1 FROM hidden_messages h WHERE h.user_id = ? AND h.conversation_id = m.conversation_id AND h.seq = m.seq)"
            arguments += [user.rawValue]
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
            let messages = try MessageRendering.complete(
                Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments).map { Message(row: $0) }, for: user, db)
            return MessagePage(fetched: messages, limit: query.limit, newestFirst: !ascending)
        }
    }

    public func updateReceipt(
        in conversation: ConversationID, member: UserID, deliveredSeq: Int64?, readSeq: Int64?, now: Timestamp
    ) async throws -> ReceiptOutcome {
        let statements = writerStatements
        return try await batchedWrite { db in
            let statements = try statements.on(db)
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(
                        sql: """
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
            // In a group only the member's own devices hear of their cursors, and the senders
            // whose messages changed status hear of the aggregate (docs/protocol.md "Receipts in groups").
            guard conversation.isGroup else {
                let deliveries = try Self.memberIDs(conversation, statements).map {
                    try Self.appendEvent(.receipt(receipt), to: $0, now: now, statements)
                }
                return ReceiptOutcome(receipt: receipt, deliveries: deliveries)
            }
            var deliveries = [try Self.appendEvent(.receipt(receipt), to: member, now: now, statements)]
            deliveries += try GroupReceiptAggregate.refresh(conversation, now: now, statements, db)
            return ReceiptOutcome(receipt: receipt, deliveries: deliveries)
        }
    }
}
