import ParleyCore
import ParleyStore
import PostgresNIO

extension PostgresStore: EventLog {
    /// Appends an event to `user`'s stream inside the caller's transaction.
    ///
    /// The position comes from the user's row (`stream_head + 1`) under its row lock, held until
    /// commit: positions are gapless, and a later position never commits before an earlier one.
    func appendEvent(_ payload: StreamEvent.Payload, to user: UserID, now: Timestamp, _ db: PostgresConnection) async throws -> Delivery {
        guard
            let position = try await db.value(
                "UPDATE users SET stream_head = stream_head + 1 WHERE id = \(user.rawValue) RETURNING stream_head", as: Int64.self, logger)
        else { throw StoreError.userNotFound }
        let row: (EventKind, String, Int64?, String?, Int64?, Int64?) =
            switch payload {
            case .message(let message): (.message, message.conversationId.rawValue, message.seq, nil, nil, nil)
            case .receipt(let receipt):
                (.receipt, receipt.conversationId.rawValue, nil, receipt.userId.rawValue, receipt.deliveredSeq, receipt.readSeq)
            case .conversation(let info): (.conversation, info.id.rawValue, nil, nil, nil, nil)
            case .invitation(let invitation):
                (.invitation, invitation.conversationId.rawValue, nil, invitation.inviter.id.rawValue, Int64(invitation.memberCount), nil)
            case .receiptSummary(let summary):
                (.receiptSummary, summary.conversationId.rawValue, nil, nil, summary.everyoneDeliveredSeq, summary.everyoneReadSeq)
            case .messageUpdated(let message): (.messageUpdated, message.conversationId.rawValue, message.seq, nil, nil, nil)
            case .messageHidden(let ref): (.messageHidden, ref.conversationId.rawValue, ref.seq, nil, nil, nil)
            }
        try await db.query(
            """
            INSERT INTO events (user_id, pos, kind, conversation_id, seq, subject_id, delivered_seq, read_seq, created_at)
            VALUES (\(user.rawValue), \(position), \(row.0.rawValue), \(row.1), \(row.2), \(row.3), \(row.4), \(row.5), \(now.milliseconds))
            """, logger: logger)
        return Delivery(recipient: user, event: StreamEvent(position: position, payload: payload))
    }

    /// Tells every node, on commit only, the events committed: carried whole when they fit and
    /// every node reads them (``PostgresCarriedEvents``), else whose streams moved and how far
    /// (``ClusterWire/eventPayloads(_:node:)``). One statement, the payloads notified in order.
    func notify(_ deliveries: [Delivery], _ db: PostgresConnection) async throws {
        guard !deliveries.isEmpty else { return }
        // Both forms go with the statement: which one is sent depends on the nodes beating now,
        // which the database knows at commit time and this node would need a query to learn.
        let carried = ClusterWire.eventPayloads(deliveries, node: nodeID)
        let positions = ClusterWire.streamPayloads(Self.heads(of: deliveries), node: nodeID)
        try await db.query(
            """
            SELECT pg_notify(\(ClusterWire.channel), payload)
            FROM unnest(CASE WHEN parley_cluster_carries() THEN \(carried) ELSE \(positions) END) AS t(payload)
            """, logger: logger)
    }

    static func heads(of deliveries: [Delivery]) -> [UserID: Int64] {
        deliveries.reduce(into: [:]) { $0[$1.recipient] = max($0[$1.recipient] ?? 0, $1.event.position) }
    }

    /// One round trip for the bounds and the events (``Prepared/Replay``); conversation events
    /// (rare: one per new conversation) read the conversation's members after.
    public func events(of user: UserID, after: Int64, limit: Int) async throws -> Replay {
        let statement = Prepared.Replay(user: user.rawValue, after: after, limit: Int64(limit))
        let rows = try await read { [logger] connection in
            try await connection.execute(statement, logger: logger).reduce(into: []) { $0.append($1) }
        }
        guard let first = rows.first else { throw StoreError.userNotFound }
        let (head, floor) = (first.0, first.1)
        guard after >= floor, after <= head else { return .tooOld(head: head) }
        var events: [StreamEvent] = []
        events.reserveCapacity(rows.count)
        for c in rows {
            guard let position = c.2, let kind = c.3, let conversationID = c.4 else { continue }
            let conversation = ConversationID(rawValue: conversationID)
            let payload: StreamEvent.Payload
            switch EventKind(rawValue: kind) {
            case .message:
                // A message event whose message is missing cannot happen (same transaction); skip rather than crash.
                guard let id = c.8, let messageConversation = c.9, let seq = c.10, let sender = c.11, let clientID = c.12,
                    let text = c.13, let created = c.14
                else { continue }
                let message = Message((id, messageConversation, seq, sender, clientID, text, created, c.15, c.16, c.18, c.19, c.20, c.21 ?? 0, c.23))
                payload = .message(message)
            case .messageUpdated:
                guard let id = c.8, let messageConversation = c.9, let seq = c.10, let sender = c.11, let clientID = c.12,
                    let text = c.13, let created = c.14
                else { continue }
                let message = Message((id, messageConversation, seq, sender, clientID, text, created, c.15, c.16, c.18, c.19, c.20, c.21 ?? 0, c.23))
                payload = .messageUpdated(message)
            case .messageHidden:
                guard let seq = c.22 else { continue }
                payload = .messageHidden(MessageRef(conversationId: conversation, seq: seq))
            case .receipt:
                payload = .receipt(
                    ReceiptUpdate(
                        conversationId: conversation, userId: UserID(rawValue: c.5 ?? ""), deliveredSeq: c.6 ?? 0, readSeq: c.7 ?? 0))
            case .conversation:
                payload = .conversation(try await read { db in try await self.conversationInfo(conversation, db) }.seen(by: user))
            case .invitation:
                // The invitation as it was sent, with the group's title as it is now.
                guard let inviter = try await users([UserID(rawValue: c.5 ?? "")]).first else { continue }
                // The title only while the invitation is pending (see SQLite's replay).
                let title = try await read { db in
                    try await db.value(
                        """
                        SELECT c.title FROM conversations c JOIN invitations i ON i.conversation_id = c.id AND i.user_id = \(user.rawValue)
                        WHERE c.id = \(conversation.rawValue)
                        """, as: String?.self, self.logger)
                }
                payload = .invitation(
                    Invitation(
                        conversationId: conversation, title: (title ?? nil) ?? "", inviter: inviter, memberCount: Int(c.6 ?? 0),
                        createdAt: Timestamp(milliseconds: c.17 ?? 0)))
            case .receiptSummary:
                payload = .receiptSummary(ReceiptSummary(conversationId: conversation, everyoneDeliveredSeq: c.6 ?? 0, everyoneReadSeq: c.7 ?? 0))
            case nil:
                continue
            }
            events.append(StreamEvent(position: position, payload: payload))
        }
        return .events(try await completingMessages(of: events, for: user), head: head)
    }

    /// The replay's messages as the viewer sees them now (``complete(_:for:_:)``): one connection for
    /// all of them, and one departure lookup per group, however many of its messages need it.
    private func completingMessages(of events: [StreamEvent], for user: UserID) async throws -> [StreamEvent] {
        let indices = events.indices.filter {
            switch events[$0].payload {
            case .message(let message), .messageUpdated(let message): message.needsRendering
            default: false
            }
        }
        guard !indices.isEmpty else { return events }
        let messages: [Message] = indices.compactMap {
            switch events[$0].payload {
            case .message(let message), .messageUpdated(let message): message
            default: nil
            }
        }
        let completed = try await read { db in try await self.complete(messages, for: user, db) }
        var events = events
        for (index, message) in zip(indices, completed) {
            switch events[index].payload {
            case .message: events[index] = StreamEvent(position: events[index].position, payload: .message(message))
            default: events[index] = StreamEvent(position: events[index].position, payload: .messageUpdated(message))
            }
        }
        return events
    }

    public func streamHead(of user: UserID) async throws -> Int64 {
        try await read { db in
            try await db.value("SELECT stream_head FROM users WHERE id = \(user.rawValue)", as: Int64.self, self.logger) ?? 0
        }
    }

    public func pruneEvents(keepPerUser: Int) async throws -> Int {
        try await transaction { db in
            try await db.query(
                "UPDATE users SET stream_floor = stream_head - \(keepPerUser) WHERE stream_head - \(keepPerUser) > stream_floor",
                logger: self.logger)
            return try await db.value(
                """
                WITH gone AS (DELETE FROM events e USING users u WHERE u.id = e.user_id AND e.pos <= u.stream_floor RETURNING 1)
                SELECT COUNT(*) FROM gone
                """, as: Int64.self, self.logger
            ).map(Int.init) ?? 0
        }
    }
}
