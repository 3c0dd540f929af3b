import ParleyCore
import ParleyStore
import PostgresNIO

extension PostgresStore: ConversationStore {
    public func createDirectConversation(between user: UserID, and other: UserID, now: Timestamp) async throws -> ConversationOutcome {
        try await transaction { db in
            let (id, deliveries) = try await self.ensureDirect(user, other, now: now, db)
            guard let summary = try await self.summaries(of: user, ids: [id], db).first else { throw StoreError.conversationNotFound }
            try await self.notify(deliveries, db)
            return ConversationOutcome(conversation: summary, created: !deliveries.isEmpty, deliveries: deliveries)
        }
    }

    /// Finds or creates the direct conversation of two users inside the caller's transaction.
    /// Two transactions creating it at once: the second one's insert waits for the first to
    /// commit and then does nothing, so there is one conversation and one set of events.
    func ensureDirect(_ user: UserID, _ other: UserID, now: Timestamp, _ db: PostgresConnection) async throws -> (ConversationID, [Delivery]) {
        guard user != other else { throw StoreError.invalidRecipient }
        let id = ConversationID.direct(user, other)
        let inserted = try await db.value(
            """
            INSERT INTO conversations (id, kind, created_at, last_seq, last_activity_at)
            VALUES (\(id.rawValue), 'direct', \(now.milliseconds), 0, \(now.milliseconds))
            ON CONFLICT (id) DO NOTHING RETURNING 1
            """, as: Int32.self, logger)
        guard inserted != nil else { return (id, []) }
        let members = try await Self.users([user, other], db, logger)
        guard members.count == 2 else { throw StoreError.userNotFound }
        for member in members {
            try await db.query(
                """
                INSERT INTO conversation_members (conversation_id, user_id, joined_at)
                VALUES (\(id.rawValue), \(member.id.rawValue), \(now.milliseconds))
                """, logger: logger)
        }
        let info = ConversationInfo(id: id, kind: .direct, createdAt: now, members: members)
        var deliveries: [Delivery] = []
        for member in members.sorted(by: { $0.id.rawValue < $1.id.rawValue }) {
            deliveries.append(try await appendEvent(.conversation(info), to: member.id, now: now, db))
        }
        return (id, deliveries)
    }

    public func conversations(of user: UserID, limit: Int, before: ConversationCursor?) async throws -> [ConversationSummary] {
        try await read { db in
            // Groups one has left stay in the list, placed by when one left.
            let at = before?.lastActivityAt.milliseconds ?? Int64.max, id = before?.id.rawValue ?? ""
            let ids = try await db.values(
                """
                SELECT id FROM (
                    SELECT c.id AS id, c.last_activity_at AS at FROM conversation_members me JOIN conversations c ON c.id = me.conversation_id
                    WHERE me.user_id = \(user.rawValue)
                    UNION ALL
                    SELECT conversation_id, left_at FROM former_members WHERE user_id = \(user.rawValue)) AS mine
                WHERE \(before == nil) OR at < \(at) OR (at = \(at) AND id < \(id) COLLATE "C")
                ORDER BY at DESC, id COLLATE "C" DESC LIMIT \(limit)
                """, as: String.self, self.logger)
            return try await self.summaries(of: user, ids: ids.map(ConversationID.init(rawValue:)), db)
        }
    }

    public func conversation(_ id: ConversationID, as user: UserID) async throws -> ConversationSummary {
        try await read { db in
            guard let summary = try await self.summaries(of: user, ids: [id], db).first else { throw StoreError.conversationNotFound }
            return summary
        }
    }

    public func memberIDs(of conversation: ConversationID) async throws -> [UserID] {
        try await read { db in try await self.memberIDs(conversation, db) }
    }

    func memberIDs(_ conversation: ConversationID, _ db: PostgresConnection) async throws -> [UserID] {
        try await db.values(
            "SELECT user_id FROM conversation_members WHERE conversation_id = \(conversation.rawValue) ORDER BY user_id COLLATE \"C\"",
            as: String.self, logger
        ).map(UserID.init(rawValue:))
    }

    public func contacts(of user: UserID) async throws -> [UserID] {
        try await read { db in
            try await db.values(
                """
                SELECT DISTINCT other.user_id FROM conversation_members me
                JOIN conversation_members other ON other.conversation_id = me.conversation_id AND other.user_id <> me.user_id
                WHERE me.user_id = \(user.rawValue) AND me.first_sent_seq IS NOT NULL AND other.first_sent_seq IS NOT NULL
                    AND me.conversation_id LIKE 'dm\\_%'
                """, as: String.self, self.logger
            ).map(UserID.init(rawValue:))
        }
    }

    /// Summaries of the given conversations as `user` sees them, in the order of `ids`;
    /// conversations `user` is not (and, for groups, never was) a member of are left out.
    func summaries(of user: UserID, ids: [ConversationID], _ db: PostgresConnection) async throws -> [ConversationSummary] {
        var summaries: [ConversationSummary] = []
        for id in ids {
            if let row = try await db.rows(
                """
                SELECT c.kind, c.created_at, c.last_seq, c.last_activity_at, me.read_seq, c.title, c.everyone_delivered_seq, c.everyone_read_seq
                FROM conversations c JOIN conversation_members me ON me.conversation_id = c.id AND me.user_id = \(user.rawValue)
                WHERE c.id = \(id.rawValue)
                """, logger
            ).first {
                let (kind, createdAt, lastSeq, lastActivity, readSeq, title, everyoneDelivered, everyoneRead) = try row.decode(
                    (String, Int64, Int64, Int64, Int64, String?, Int64, Int64).self)
                let (members, presenceShared) = try await self.members(of: id, as: user, db)
                var summary = ConversationSummary(
                    id: id, kind: ConversationKind(rawValue: kind) ?? .direct, createdAt: Timestamp(milliseconds: createdAt),
                    lastSeq: lastSeq, lastMessage: try await lastMessage(id, at: lastSeq, for: user, db), lastActivityAt: Timestamp(milliseconds: lastActivity),
                    unreadCount: id.isGroup ? 0 : max(0, lastSeq - readSeq) - (try await uncounted(id, of: user, after: readSeq, through: lastSeq, db)),
                    members: members, presenceShared: presenceShared)
                if summary.kind == .group {
                    summary.title = title
                    summary.everyoneDeliveredSeq = everyoneDelivered
                    summary.everyoneReadSeq = everyoneRead
                    (summary.unreadCount, summary.mentionCount) = try await unread(id, of: user, after: readSeq, through: lastSeq, db)
                }
                summaries.append(summary)
                continue
            }
            // A group I left: what I could see up to my departure, and no members.
            guard
                let row = try await db.rows(
                    """
                    SELECT c.created_at, f.left_seq, f.left_at, f.title FROM former_members f
                    JOIN conversations c ON c.id = f.conversation_id WHERE f.user_id = \(user.rawValue) AND f.conversation_id = \(id.rawValue)
                    """, logger
                ).first
            else { continue }
            // Nothing of a group one is out of counts as unread: receipts there are refused, so it could never clear.
            let (createdAt, leftSeq, leftAt, title) = try row.decode((Int64, Int64, Int64, String).self)
            summaries.append(
                ConversationSummary(
                    id: id, kind: .group, createdAt: Timestamp(milliseconds: createdAt), lastSeq: leftSeq,
                    lastMessage: try await lastMessage(id, at: leftSeq, for: user, db), lastActivityAt: Timestamp(milliseconds: leftAt), unreadCount: 0,
                    members: [], title: title, mentionCount: 0, leftSeq: leftSeq))
        }
        return summaries
    }

    /// The preview: the newest message up to `seq` that `user` can see (in a group: inside their
    /// spans) and has not deleted for themselves, as it is now.
    private func lastMessage(_ id: ConversationID, at seq: Int64, for user: UserID, _ db: PostgresConnection) async throws -> Message? {
        guard
            let row = try await db.rows(
                """
                SELECT \(unescaped: Columns.message) FROM messages m WHERE m.conversation_id = \(id.rawValue) AND m.seq <= \(seq)
                AND (\(!id.isGroup) OR EXISTS (SELECT 1 FROM member_spans s WHERE s.conversation_id = m.conversation_id
                    AND s.user_id = \(user.rawValue) AND m.seq >= s.from_seq AND (s.to_seq IS NULL OR m.seq <= s.to_seq)))
                AND NOT EXISTS (SELECT 1 FROM hidden_messages h WHERE h.user_id = \(user.rawValue) AND h.conversation_id = m.conversation_id
                    AND h.seq = m.seq)
                ORDER BY m.seq DESC LIMIT 1
                """, logger
            ).first
        else { return nil }
        return try await complete(Message(try row.decode(MessageRow.self)), for: user, db)
    }

    /// ``PushQueueStore/unreadTotal(of:)``: the summaries' counts, for the conversations where the
    /// read cursor is behind.
    public func unreadTotal(of user: UserID) async throws -> Int {
        try await read { db in
            let behind = try await db.rows(
                """
                SELECT c.id, me.read_seq, c.last_seq FROM conversation_members me JOIN conversations c ON c.id = me.conversation_id
                WHERE me.user_id = \(user.rawValue) AND c.last_seq > me.read_seq
                """, self.logger)
            var total: Int64 = 0
            for row in behind {
                let (raw, readSeq, lastSeq) = try row.decode((String, Int64, Int64).self)
                let id = ConversationID(rawValue: raw)
                total +=
                    id.isGroup
                    ? try await self.unread(id, of: user, after: readSeq, through: lastSeq, db).0
                    : max(0, lastSeq - readSeq) - (try await self.uncounted(id, of: user, after: readSeq, through: lastSeq, db))
            }
            return Int(clamping: total)
        }
    }

    public func groupTitles(_ ids: [ConversationID]) async throws -> [ConversationID: String] {
        try await read { db in
            var titles: [ConversationID: String] = [:]
            for row in try await db.rows("SELECT id, title FROM conversations WHERE id = ANY(\(ids.map(\.rawValue))) AND title IS NOT NULL", self.logger) {
                let (id, title) = try row.decode((String, String).self)
                titles[ConversationID(rawValue: id)] = title
            }
            return titles
        }
    }

    /// In a direct conversation, what `lastSeq − readSeq` counts that is not unread: other people's
    /// messages in (after, through] that were deleted, or that I deleted for myself (see SQLite's).
    private func uncounted(_ id: ConversationID, of user: UserID, after: Int64, through: Int64, _ db: PostgresConnection) async throws -> Int64 {
        guard through > after else { return 0 }
        return try await db.value(
            """
            SELECT (SELECT COUNT(*) FROM messages WHERE conversation_id = \(id.rawValue) AND deleted_at IS NOT NULL
                    AND seq > \(after) AND seq <= \(through) AND sender_id <> \(user.rawValue))
                + (SELECT COUNT(*) FROM hidden_messages h JOIN messages m ON m.conversation_id = h.conversation_id AND m.seq = h.seq
                    WHERE h.user_id = \(user.rawValue) AND h.conversation_id = \(id.rawValue) AND h.seq > \(after) AND h.seq <= \(through)
                    AND m.deleted_at IS NULL AND m.sender_id <> \(user.rawValue))
            """, as: Int64.self, logger) ?? 0
    }

    /// The members with their cursors; presence (last seen) only where it is shared (direct
    /// conversations where both have written), roles only in groups.
    private func members(of id: ConversationID, as user: UserID, _ db: PostgresConnection) async throws -> ([ConversationMember], Bool?) {
        let memberRows = try await db.rows(
            """
            SELECT m.user_id, u.username, u.display_name, m.delivered_seq, m.read_seq, u.last_seen_at, m.first_sent_seq IS NOT NULL, m.role,
                u.photo_upload
            FROM conversation_members m JOIN users u ON u.id = m.user_id
            WHERE m.conversation_id = \(id.rawValue) ORDER BY m.user_id COLLATE "C"
            """, logger
        ).map { try $0.decode((String, String, String, Int64, Int64, Int64?, Bool, String?, String?).self) }
        let presenceShared: Bool? = id.isGroup ? nil : memberRows.allSatisfy(\.6)
        let members = memberRows.map { member in
            let userId = UserID(rawValue: member.0)
            return ConversationMember(
                userId: userId, username: member.1, displayName: member.2, deliveredSeq: member.3, readSeq: member.4,
                lastSeenAt: presenceShared == true || userId == user ? member.5.map(Timestamp.init(milliseconds:)) : nil,
                role: member.7.flatMap(MemberRole.init(rawValue:)), photo: member.8.map { API.photoPath(UploadID(rawValue: $0)) })
        }
        return (members, presenceShared)
    }

    /// Other people's messages in (after, through] (entries, my own, deleted and hidden ones never count), and those that mention me.
    private func unread(
        _ id: ConversationID, of user: UserID, after: Int64, through: Int64, _ db: PostgresConnection
    ) async throws -> (Int64, Int64) {
        guard through > after else { return (0, 0) }
        let row = try await db.rows(
            """
            SELECT
                (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = \(id.rawValue) AND m.seq > \(after) AND m.seq <= \(through)
                    AND m.entry IS NULL AND m.sender_id <> \(user.rawValue) AND m.deleted_at IS NULL
                    AND NOT EXISTS (SELECT 1 FROM hidden_messages h WHERE h.user_id = \(user.rawValue)
                        AND h.conversation_id = m.conversation_id AND h.seq = m.seq)),
                (SELECT COUNT(*) FROM mentions n WHERE n.user_id = \(user.rawValue) AND n.conversation_id = \(id.rawValue)
                    AND n.seq > \(after) AND n.seq <= \(through)
                    AND NOT EXISTS (SELECT 1 FROM hidden_messages h WHERE h.user_id = \(user.rawValue)
                        AND h.conversation_id = n.conversation_id AND h.seq = n.seq))
            """, logger)
        return try row.first?.decode((Int64, Int64).self) ?? (0, 0)
    }

    func conversationInfo(_ id: ConversationID, _ db: PostgresConnection) async throws -> ConversationInfo {
        guard let row = try await db.rows("SELECT kind, created_at, title FROM conversations WHERE id = \(id.rawValue)", logger).first
        else { throw StoreError.conversationNotFound }
        let (kind, createdAt, title) = try row.decode((String, Int64, String?).self)
        return ConversationInfo(
            id: id, kind: ConversationKind(rawValue: kind) ?? .direct, createdAt: Timestamp(milliseconds: createdAt),
            members: try await Self.users(memberIDs(id, db), db, logger), title: title)
    }
}
