import GRDB
import ParleyCore
import ParleyStore

extension SQLiteStore: EventLog {
    /// Appends an event to `user`'s stream inside the caller's write transaction.
    ///
    /// The position comes from the user's row (`stream_head + 1`), so it is gapless, and because the
    /// row is written in the same transaction, positions are committed in the order they are assigned.
    static func appendEvent(
        _ payload: StreamEvent.Payload, to user: UserID, now: Timestamp, _ statements: WriterStatements
    ) throws -> Delivery {
        guard let position = try statements.nextPosition(of: user.rawValue) else { throw StoreError.userNotFound }
        let insert = statements.insertEvent
        let at = RawValue.int(now.milliseconds)
        switch payload {
        case .message(let message):
            try insert.execute(
                .text(user.rawValue), .int(position), .int(EventKind.message.rawValue), .text(message.conversationId.rawValue),
                .int(message.seq), .null, .null, .null, at)
        case .receipt(let receipt):
            try insert.execute(
                .text(user.rawValue), .int(position), .int(EventKind.receipt.rawValue), .text(receipt.conversationId.rawValue),
                .null, .text(receipt.userId.rawValue), .int(receipt.deliveredSeq), .int(receipt.readSeq), at)
        case .conversation(let info):
            try insert.execute(
                .text(user.rawValue), .int(position), .int(EventKind.conversation.rawValue), .text(info.id.rawValue),
                .null, .null, .null, .null, at)
        case .invitation(let invitation):
            try insert.execute(
                .text(user.rawValue), .int(position), .int(EventKind.invitation.rawValue), .text(invitation.conversationId.rawValue),
                .null, .text(invitation.inviter.id.rawValue), .int(Int64(invitation.memberCount)), .null, at)
        case .receiptSummary(let summary):
            try insert.execute(
                .text(user.rawValue), .int(position), .int(EventKind.receiptSummary.rawValue), .text(summary.conversationId.rawValue),
                .null, .null, .int(summary.everyoneDeliveredSeq), .int(summary.everyoneReadSeq), at)
        case .messageUpdated(let message):
            // Like a message event, it points at the message: a replay shows it as it is then.
            try insert.execute(
                .text(user.rawValue), .int(position), .int(EventKind.messageUpdated.rawValue), .text(message.conversationId.rawValue),
                .int(message.seq), .null, .null, .null, at)
        case .messageHidden(let ref):
            try insert.execute(
                .text(user.rawValue), .int(position), .int(EventKind.messageHidden.rawValue), .text(ref.conversationId.rawValue),
                .int(ref.seq), .null, .null, .null, at)
        }
        return Delivery(recipient: user, event: StreamEvent(position: position, payload: payload))
    }

    public func events(of user: UserID, after: Int64, limit: Int) async throws -> Replay {
        try await pool.read { db in
            guard let bounds = try Row.fetchOne(db, sql: "SELECT stream_head, stream_floor FROM users WHERE id = ?", arguments: [user.rawValue])
            else { throw StoreError.userNotFound }
            let head: Int64 = bounds[0], floor: Int64 = bounds[1]
            guard after >= floor, after <= head else { return .tooOld(head: head) }
            let rows = try Row.fetchAll(db, sql: Self.replaySQL, arguments: [user.rawValue, after, limit])
            var events: [StreamEvent] = []
            events.reserveCapacity(rows.count)
            var departures = MessageRendering.Departures()
            for row in rows {
                let conversation = ConversationID(rawValue: row[2])
                let payload: StreamEvent.Payload
                switch EventKind(rawValue: row[1]) {
                case .message:
                    payload = .message(try MessageRendering.complete(Message(row: row, at: 7), for: user, departures: &departures, db))
                case .messageUpdated:
                    payload = .messageUpdated(try MessageRendering.complete(Message(row: row, at: 7), for: user, departures: &departures, db))
                case .messageHidden:
                    payload = .messageHidden(MessageRef(conversationId: conversation, seq: row[7 + Columns.messageCount]))
                case .receipt:
                    payload = .receipt(
                        ReceiptUpdate(
                            conversationId: conversation, userId: UserID(rawValue: row[3]),
                            deliveredSeq: row[4], readSeq: row[5]))
                case .conversation:
                    payload = .conversation(try Self.conversationInfo(conversation, db).seen(by: user))
                case .invitation:
                    // The invitation as it was sent, with the group's title as it is now.
                    // The title only while the invitation is pending: someone who declined (or joined and
                    // left) does not follow the group's renames through an old event.
                    let title = try String.fetchOne(
                        db,
                        sql: """
                            SELECT c.title FROM conversations c JOIN invitations i ON i.conversation_id = c.id AND i.user_id = ?
                            WHERE c.id = ?
                            """,
                        arguments: [user.rawValue, conversation.rawValue])
                    guard let inviter = try Self.users([UserID(rawValue: row[3])], db).first else { continue }
                    payload = .invitation(
                        Invitation(
                            conversationId: conversation, title: title ?? "", inviter: inviter, memberCount: Int(row[4] as Int64),
                            createdAt: Timestamp(milliseconds: row[6])))
                case .receiptSummary:
                    payload = .receiptSummary(ReceiptSummary(conversationId: conversation, everyoneDeliveredSeq: row[4], everyoneReadSeq: row[5]))
                case nil:
                    continue
                }
                events.append(StreamEvent(position: row[0], payload: payload))
            }
            return .events(events, head: head)
        }
    }

    /// A user's stream after a position: their own event rows, and the group messages stored once
    /// (`messages.pos`, rule 11 of ``send(_:now:_:)``) inside their spans: after the entry that
    /// began a span and before the one that ended it. The scan of a span's group messages starts
    /// past its `joined_pos` (the group's newest message when it began: what came before is not
    /// the member's) and a closed span's stops at its `to_pos` (its member's head when it closed),
    /// so neither a long history before a join nor a busy group left long ago costs a resume
    /// anything; a span closed before positions were kept there (`to_pos` NULL) has no such
    /// messages. Each side is limited before they are merged.
    /// Arguments: user, after, limit.
    static let replaySQL = """
        SELECT * FROM (
            SELECT e.pos, e.kind, e.conversation_id, e.subject_id, e.delivered_seq, e.read_seq, e.created_at, \(Columns.message), e.seq
            FROM events e
            LEFT JOIN messages m ON e.kind IN (\(EventKind.message.rawValue), \(EventKind.messageUpdated.rawValue))
                AND m.conversation_id = e.conversation_id AND m.seq = e.seq
            WHERE e.user_id = ?1 AND e.pos > ?2 ORDER BY e.pos LIMIT ?3)
        UNION ALL
        SELECT * FROM (
            SELECT m.pos, \(EventKind.message.rawValue), m.conversation_id, NULL, NULL, NULL, m.created_at, \(Columns.message), m.seq
            FROM member_spans s
            JOIN messages m ON m.conversation_id = s.conversation_id AND m.pos > MAX(?2, COALESCE(s.joined_pos, 0))
                AND m.pos <= CASE WHEN s.to_seq IS NULL THEN 9223372036854775807 ELSE COALESCE(s.to_pos, 0) END
                AND m.seq > s.joined_seq AND (s.to_seq IS NULL OR m.seq < s.to_seq)
            WHERE s.user_id = ?1 ORDER BY m.pos LIMIT ?3)
        ORDER BY 1 LIMIT ?3
        """

    public func streamHead(of user: UserID) async throws -> Int64 {
        try rawLookup { statements in try Self.streamHead(of: user, statements) }
    }

    static func streamHead(of user: UserID, _ statements: LookupStatements) throws -> Int64 {
        try statements.streamHead.firstRow(.text(user.rawValue)) { $0.int64(0) } ?? 0
    }

    /// Keeps each user's newest `keepPerUser` event rows, counted (`users.event_rows`), not measured
    /// in positions: a group message skips positions, and is a message rather than a row, so it
    /// stays replayable above the floor. Work is proportional to the rows removed.
    public func pruneEvents(keepPerUser: Int) async throws -> Int {
        try await write { db in
            let over = try Row.fetchAll(db, sql: "SELECT id, event_rows FROM users WHERE event_rows > ?", arguments: [keepPerUser])
            var removed = 0
            for row in over {
                let (user, rows): (String, Int) = (row[0], row[1])
                guard
                    let floor = try Int64.fetchOne(
                        db, sql: "SELECT pos FROM events WHERE user_id = ? ORDER BY pos LIMIT 1 OFFSET ?",
                        arguments: [user, rows - keepPerUser - 1])
                else { continue }
                try db.execute(sql: "DELETE FROM events WHERE user_id = ? AND pos <= ?", arguments: [user, floor])
                let gone = db.changesCount
                removed += gone
                try db.execute(
                    sql: "UPDATE users SET stream_floor = MAX(stream_floor, ?), event_rows = event_rows - ? WHERE id = ?",
                    arguments: [floor, gone, user])
            }
            return removed
        }
    }
}
