import ParleyCore
import ParleyStore
import PostgresNIO

/// The writes of one group action (or group send) on PostgreSQL, inside its transaction; the same
/// order as SQLite's `GroupWriter`: members join before the entry, a newcomer's `conversation`
/// event before the entry, a departing member leaves after it. The conversation row is locked
/// first (``lockGroup()``), so actions on one group run one at a time.
struct PostgresGroupWriter {
    let store: PostgresStore
    let conversation: ConversationID
    let now: Timestamp
    let db: PostgresConnection
    private(set) var deliveries: [Delivery] = []
    private var logger: Logger { store.logger }

    init(store: PostgresStore, conversation: ConversationID, now: Timestamp, db: PostgresConnection) {
        self.store = store
        self.conversation = conversation
        self.now = now
        self.db = db
    }

    /// The group as the rules need it, under the conversation row's lock; nil if there is no such group.
    func lockGroup() async throws -> GroupState? {
        guard conversation.isGroup,
            let row = try await db.rows(
                "SELECT title, closed FROM conversations WHERE id = \(conversation.rawValue) AND kind = 'group' FOR UPDATE", logger
            ).first
        else { return nil }
        let (title, closed) = try row.decode((String?, Bool).self)
        let members = try await db.rows(
            """
            SELECT m.user_id, m.role, COALESCE(s.joined_seq, 0) FROM conversation_members m
            LEFT JOIN member_spans s ON s.conversation_id = m.conversation_id AND s.user_id = m.user_id AND s.to_seq IS NULL
            WHERE m.conversation_id = \(conversation.rawValue)
            """, logger
        ).map { row in
            let (user, role, joinedAt) = try row.decode((String, String?, Int64).self)
            return GroupMemberState(userId: UserID(rawValue: user), role: role.flatMap(MemberRole.init(rawValue:)) ?? .member, joinedAt: joinedAt)
        }
        let invitees = try await db.values(
            "SELECT user_id FROM invitations WHERE conversation_id = \(conversation.rawValue)", as: String.self, logger)
        return GroupState(title: title ?? "", closed: closed, members: members, invitees: Set(invitees.map(UserID.init(rawValue:))))
    }

    /// A new member whose cursors start at the last seq (see SQLite's `GroupWriter`).
    func addMember(_ user: UserID, role: MemberRole) async throws {
        let id = conversation.rawValue
        try await db.query(
            """
            INSERT INTO conversation_members (conversation_id, user_id, joined_at, role, delivered_seq, read_seq)
            SELECT id, \(user.rawValue), \(now.milliseconds), \(role.rawValue), last_seq, last_seq FROM conversations WHERE id = \(id)
            """, logger: logger)
        try await db.query("DELETE FROM former_members WHERE user_id = \(user.rawValue) AND conversation_id = \(id)", logger: logger)
        try await db.query("DELETE FROM invitations WHERE user_id = \(user.rawValue) AND conversation_id = \(id)", logger: logger)
    }

    /// Appends the entry at the next seq, opens the spans of `joined`, closes the one of `departing`.
    mutating func append(
        _ entry: GroupEntry, by actor: UserID, _ clientId: ClientMessageID, joined: [UserID], shareHistory: Bool, departing: UserID?
    ) async throws -> Message {
        if !joined.isEmpty {
            let info = try await store.conversationInfo(conversation, db)
            for user in joined { deliveries.append(try await store.appendEvent(.conversation(info), to: user, now: now, db)) }
        }
        let message = try await insert(text: "", by: actor, clientId, entry: entry, mentions: nil)
        for user in joined {
            try await db.query(
                """
                INSERT INTO member_spans (conversation_id, user_id, from_seq, joined_seq)
                VALUES (\(conversation.rawValue), \(user.rawValue), \(shareHistory ? 1 : message.seq), \(message.seq))
                """, logger: logger)
        }
        try await deliver(message)
        if let departing {
            try await leave(departing, at: message.seq)
        } else {
            // The actor's cursors moved to the entry: they may have been the lowest.
            try await refreshAggregate()
        }
        return message
    }

    /// Stores a message or entry at the next seq; the author's cursors move to it.
    func insert(
        text: String, by author: UserID, _ clientId: ClientMessageID, entry: GroupEntry?, mentions: [UserID]?, replyTo: Int64? = nil
    ) async throws -> Message {
        guard
            let seq = try await db.value(
                """
                UPDATE conversations SET last_seq = last_seq + 1, last_activity_at = \(now.milliseconds)
                WHERE id = \(conversation.rawValue) RETURNING last_seq
                """, as: Int64.self, logger)
        else { throw StoreError.conversationNotFound }
        var quote: ReplyQuote?
        if let replyTo { quote = try await store.quote(of: replyTo, in: conversation, db) }
        let message = Message(
            id: .random(), conversationId: conversation, seq: seq, senderId: author, clientId: clientId, text: text, createdAt: now,
            entry: entry, mentions: mentions, replyTo: quote)
        try await db.query(
            """
            INSERT INTO messages (id, conversation_id, seq, sender_id, client_id, text, created_at, entry, mentions, reply_to_seq)
            VALUES (\(message.id.rawValue), \(conversation.rawValue), \(seq), \(author.rawValue), \(clientId.rawValue), \(text),
                \(now.milliseconds), \(entry.map(StoredJSON.text)), \(StoredJSON.text(mentions)), \(replyTo))
            """, logger: logger)
        for user in mentions ?? [] {
            try await db.query(
                "INSERT INTO mentions (user_id, conversation_id, seq) VALUES (\(user.rawValue), \(conversation.rawValue), \(seq))", logger: logger)
        }
        try await db.query(
            """
            UPDATE conversation_members SET delivered_seq = \(seq), read_seq = \(seq), first_sent_seq = COALESCE(first_sent_seq, \(seq))
            WHERE conversation_id = \(conversation.rawValue) AND user_id = \(author.rawValue)
            """, logger: logger)
        return message
    }

    /// A `message` event for every current member, their user rows taken in id order.
    mutating func deliver(_ message: Message) async throws {
        let quoteReaders = try await store.quoteReaders(message, db)
        for member in try await store.memberIDs(conversation, db) {
            deliveries.append(try await store.appendEvent(.message(message.quoteSeen(by: member, quoteReaders: quoteReaders)), to: member, now: now, db))
        }
    }

    private mutating func leave(_ user: UserID, at seq: Int64) async throws {
        let id = conversation.rawValue
        try await db.query(
            "UPDATE member_spans SET to_seq = \(seq) WHERE conversation_id = \(id) AND user_id = \(user.rawValue) AND to_seq IS NULL", logger: logger)
        try await db.query(
            """
            INSERT INTO former_members (user_id, conversation_id, left_seq, left_at, read_seq, title)
            SELECT m.user_id, m.conversation_id, \(seq), \(now.milliseconds), m.read_seq, COALESCE(c.title, '') FROM conversation_members m
            JOIN conversations c ON c.id = m.conversation_id WHERE m.conversation_id = \(id) AND m.user_id = \(user.rawValue)
            ON CONFLICT (user_id, conversation_id) DO UPDATE SET left_seq = EXCLUDED.left_seq, left_at = EXCLUDED.left_at,
                read_seq = EXCLUDED.read_seq, title = EXCLUDED.title
            """, logger: logger)
        try await db.query("DELETE FROM conversation_members WHERE conversation_id = \(id) AND user_id = \(user.rawValue)", logger: logger)
        try await refreshAggregate()
    }

    /// The group's receipt aggregate (rules of SQLite's `GroupReceiptAggregate`).
    mutating func refreshAggregate() async throws {
        let id = conversation.rawValue
        guard
            let row = try await db.rows(
                """
                SELECT c.everyone_delivered_seq, c.everyone_read_seq, MIN(m.delivered_seq), MIN(m.read_seq)
                FROM conversations c JOIN conversation_members m ON m.conversation_id = c.id WHERE c.id = \(id)
                GROUP BY c.everyone_delivered_seq, c.everyone_read_seq
                """, logger
            ).first
        else { return }
        let (oldDelivered, oldRead, lowestDelivered, lowestRead) = try row.decode((Int64, Int64, Int64, Int64).self)
        let summary = ReceiptSummary(
            conversationId: conversation, everyoneDeliveredSeq: max(oldDelivered, lowestDelivered), everyoneReadSeq: max(oldRead, lowestRead))
        guard summary.everyoneDeliveredSeq != oldDelivered || summary.everyoneReadSeq != oldRead else { return }
        try await db.query(
            """
            UPDATE conversations SET everyone_delivered_seq = \(summary.everyoneDeliveredSeq), everyone_read_seq = \(summary.everyoneReadSeq)
            WHERE id = \(id)
            """, logger: logger)
        // The messages whose status changed: delivered in (old, new], read in (old, new].
        let senders = try await db.values(
            """
            SELECT DISTINCT msg.sender_id COLLATE "C" FROM messages msg
            JOIN conversation_members m ON m.conversation_id = msg.conversation_id AND m.user_id = msg.sender_id
            WHERE msg.conversation_id = \(id) AND msg.entry IS NULL
                AND ((msg.seq > \(oldDelivered) AND msg.seq <= \(summary.everyoneDeliveredSeq))
                    OR (msg.seq > \(oldRead) AND msg.seq <= \(summary.everyoneReadSeq)))
            ORDER BY 1
            """, as: String.self, logger)
        for sender in senders {
            deliveries.append(try await store.appendEvent(.receiptSummary(summary), to: UserID(rawValue: sender), now: now, db))
        }
    }

    /// Invitations for `users` (one already pending stays as it was, without a new event).
    mutating func invite(_ users: [UserID], by inviter: UserID, shareHistory: Bool) async throws {
        guard !users.isEmpty else { return }
        guard let inviterUser = try await PostgresStore.users([inviter], db, logger).first else { throw StoreError.userNotFound }
        let id = conversation.rawValue
        let row = try await db.rows(
            "SELECT title, (SELECT COUNT(*) FROM conversation_members WHERE conversation_id = \(id)) FROM conversations WHERE id = \(id)", logger
        ).first
        let (title, count) = try row?.decode((String?, Int64).self) ?? (nil, Int64(0))
        let invitation = Invitation(conversationId: conversation, title: title ?? "", inviter: inviterUser, memberCount: Int(count), createdAt: now)
        for user in users {
            let inserted = try await db.value(
                """
                INSERT INTO invitations (user_id, conversation_id, inviter_id, share_history, created_at)
                VALUES (\(user.rawValue), \(id), \(inviter.rawValue), \(shareHistory), \(now.milliseconds)) ON CONFLICT DO NOTHING RETURNING 1
                """, as: Int32.self, logger)
            if inserted != nil { deliveries.append(try await store.appendEvent(.invitation(invitation), to: user, now: now, db)) }
        }
    }
}
