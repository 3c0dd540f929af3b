import GRDB
import ParleyCore
import ParleyStore

extension SQLiteStore: ConversationStore {
    public func createDirectConversation(between user: UserID, and other: UserID, now: Timestamp) async throws -> ConversationOutcome {
        let statements = writerStatements
        return try await batchedWrite { db in
            let (id, deliveries) = try Self.ensureDirect(user, other, now: now, statements.on(db), db)
            guard let summary = try Self.summaries(of: user, ids: [id], db).first else { throw StoreError.conversationNotFound }
            return ConversationOutcome(conversation: summary, created: !deliveries.isEmpty, deliveries: deliveries)
        }
    }

    /// Finds or creates the direct conversation of two users inside the caller's transaction.
    /// Creation adds both members and a `conversation` event to each one's stream.
    static func ensureDirect(
        _ user: UserID, _ other: UserID, now: Timestamp, _ statements: WriterStatements, _ db: Database
    ) throws -> (ConversationID, [Delivery]) {
        guard user != other else { throw StoreError.invalidRecipient }
        let id = ConversationID.direct(user, other)
        try db.cachedStatement(
            sql: "INSERT INTO conversations (id, kind, created_at, last_seq, last_activity_at) VALUES (?, 'direct', ?, 0, ?) ON CONFLICT(id) DO NOTHING"
        ).execute(arguments: [id.rawValue, now.milliseconds, now.milliseconds])
        guard db.changesCount == 1 else { return (id, []) }
        let members = try users([user, other], db)
        guard members.count == 2 else { throw StoreError.userNotFound }
        for member in members {
            try db.execute(
                sql: "INSERT INTO conversation_members (conversation_id, user_id, joined_at) VALUES (?, ?, ?)",
                arguments: [id.rawValue, member.id.rawValue, now.milliseconds])
        }
        let info = ConversationInfo(id: id, kind: .direct, createdAt: now, members: members)
        let deliveries = try members.map { try appendEvent(.conversation(info), to: $0.id, now: now, statements) }
        return (id, deliveries)
    }

    public func conversations(of user: UserID, limit: Int, before: ConversationCursor?) async throws -> [ConversationSummary] {
        try await pool.read { db in
            // Groups one has left stay in the list, placed by when one left (what came later is not theirs to see).
            var sql = """
                SELECT id FROM (
                    SELECT c.id AS id, c.last_activity_at AS at FROM conversation_members me JOIN conversations c ON c.id = me.conversation_id
                    WHERE me.user_id = ?
                    UNION ALL
                    SELECT conversation_id, left_at FROM former_members WHERE user_id = ?)
                """
            var arguments: StatementArguments = [user.rawValue, user.rawValue]
            if let before {
                sql += " WHERE (at < ? OR (at = ? AND id < ?))"
                arguments += [before.lastActivityAt.milliseconds, before.lastActivityAt.milliseconds, before.id.rawValue]
            }
            sql += " ORDER BY at DESC, id DESC LIMIT ?"
            arguments += [limit]
            let ids = try String.fetchAll(db, sql: sql, arguments: arguments).map(ConversationID.init(rawValue:))
            return try Self.summaries(of: user, ids: ids, db)
        }
    }

    public func conversation(_ id: ConversationID, as user: UserID) async throws -> ConversationSummary {
        try await lookup { db in
            guard let summary = try Self.summaries(of: user, ids: [id], db).first else { throw StoreError.conversationNotFound }
            return summary
        }
    }

    public func memberIDs(of conversation: ConversationID) async throws -> [UserID] {
        try await lookup { db in try Self.memberIDs(conversation, db) }
    }

    static func memberIDs(_ conversation: ConversationID, _ db: Database) throws -> [UserID] {
        try String.fetchAll(
            db.cachedStatement(sql: WriterStatements.membersSQL),
            arguments: [conversation.rawValue]
        ).map(UserID.init(rawValue:))
    }

    public func contacts(of user: UserID) async throws -> [UserID] {
        try rawLookup { statements in try Self.contacts(of: user, statements) }
    }

    /// One read for both: a connect begins and ends one read transaction, not two.
    public func liveStart(of user: UserID) async throws -> LiveStart {
        try rawLookup { statements in
            try statements.snapshot { LiveStart(head: try Self.streamHead(of: user, statements), contacts: try Self.contacts(of: user, statements)) }
        }
    }

    static func contacts(of user: UserID, _ statements: LookupStatements) throws -> [UserID] {
        try statements.contacts.rows(.text(user.rawValue)) { UserID(rawValue: $0.text(0)) }
    }

    /// Summaries of the given conversations as `user` sees them, in the order of `ids`;
    /// conversations `user` is not (and, for groups, never was) a member of are left out.
    static func summaries(of user: UserID, ids: [ConversationID], _ db: Database) throws -> [ConversationSummary] {
        try ids.compactMap { id -> ConversationSummary? in
            if let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT c.kind, c.created_at, c.last_seq, c.last_activity_at, me.read_seq, c.title,
                            c.everyone_delivered_seq, c.everyone_read_seq
                        FROM conversations c JOIN conversation_members me ON me.conversation_id = c.id AND me.user_id = ?
                        WHERE c.id = ?
                        """),
                arguments: [user.rawValue, id.rawValue])
            {
                let lastSeq: Int64 = row[2], readSeq: Int64 = row[4]
                let members = try Self.members(of: id, as: user, db)
                var summary = ConversationSummary(
                    id: id, kind: ConversationKind(rawValue: row[0]) ?? .direct, createdAt: Timestamp(milliseconds: row[1]),
                    lastSeq: lastSeq, lastMessage: try lastMessage(id, at: lastSeq, for: user, db), lastActivityAt: Timestamp(milliseconds: row[3]),
                    unreadCount: id.isGroup ? 0 : max(0, lastSeq - readSeq) - (try uncounted(id, of: user, after: readSeq, through: lastSeq, db)),
                    members: members.list, presenceShared: members.presenceShared)
                if summary.kind == .group {
                    summary.title = row[5]
                    summary.everyoneDeliveredSeq = row[6]
                    summary.everyoneReadSeq = row[7]
                    summary.unreadCount = try unreadCount(id, of: user, after: readSeq, through: lastSeq, db)
                    summary.mentionCount = try mentionCount(id, of: user, after: readSeq, through: lastSeq, db)
                }
                return summary
            }
            // A group I left: what I could see up to my departure, and no members.
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT c.created_at, f.left_seq, f.left_at, f.title FROM former_members f
                        JOIN conversations c ON c.id = f.conversation_id WHERE f.user_id = ? AND f.conversation_id = ?
                        """,
                    arguments: [user.rawValue, id.rawValue])
            else { return nil }
            // Nothing of a group one is out of counts as unread: receipts there are refused, so it could never clear.
            let leftSeq: Int64 = row[1]
            return ConversationSummary(
                id: id, kind: .group, createdAt: Timestamp(milliseconds: row[0]), lastSeq: leftSeq,
                lastMessage: try lastMessage(id, at: leftSeq, for: user, db),
                lastActivityAt: Timestamp(milliseconds: row[2]), unreadCount: 0, members: [], title: row[3], mentionCount: 0, leftSeq: leftSeq)
        }
    }

    /// The preview: the newest message up to `seq` that `user` can see (in a group: inside their
    /// spans) and has not deleted for themselves, as it is now.
    private static func lastMessage(_ id: ConversationID, at seq: Int64, for user: UserID, _ db: Database) throws -> Message? {
        let spans =
            id.isGroup
            ? """
            AND EXISTS (SELECT 1 FROM member_spans s WHERE s.conversation_id = m.conversation_id AND s.user_id = ?3
                AND m.seq >= s.from_seq AND (s.to_seq IS NULL OR m.seq <= s.to_seq))
            """ : ""
        return try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT \(Columns.message) FROM messages m WHERE m.conversation_id = ?1 AND m.seq <= ?2 \(spans)
                    AND NOT EXISTS (SELECT 1 FROM hidden_messages h WHERE h.user_id = ?3 AND h.conversation_id = m.conversation_id AND h.seq = m.seq)
                    ORDER BY m.seq DESC LIMIT 1
                    """),
            arguments: [id.rawValue, seq, user.rawValue]
        ).map { try MessageRendering.complete(Message(row: $0), for: user, db) }
    }

    /// ``PushQueueStore/unreadTotal(of:)``: the summaries' counts, for the conversations where the
    /// read cursor is behind.
    public func unreadTotal(of user: UserID) async throws -> Int {
        try await pool.read { db in
            let behind = try Row.fetchAll(
                db,
                sql: """
                    SELECT c.id, me.read_seq, c.last_seq FROM conversation_members me JOIN conversations c ON c.id = me.conversation_id
                    WHERE me.user_id = ? AND c.last_seq > me.read_seq
                    """,
                arguments: [user.rawValue])
            var total: Int64 = 0
            for row in behind {
                let id = ConversationID(rawValue: row[0]), readSeq: Int64 = row[1], lastSeq: Int64 = row[2]
                total +=
                    id.isGroup
                    ? try Self.unreadCount(id, of: user, after: readSeq, through: lastSeq, db)
                    : max(0, lastSeq - readSeq) - (try Self.uncounted(id, of: user, after: readSeq, through: lastSeq, db))
            }
            return Int(clamping: total)
        }
    }

    public func groupTitles(_ ids: [ConversationID]) async throws -> [ConversationID: String] {
        try await pool.read { db in
            var titles: [ConversationID: String] = [:]
            for id in ids {
                if let title = try String.fetchOne(db.cachedStatement(sql: "SELECT title FROM conversations WHERE id = ?"), arguments: [id.rawValue]) {
                    titles[id] = title
                }
            }
            return titles
        }
    }

    /// In a direct conversation, what `lastSeq − readSeq` counts that is not unread: other people's
    /// messages in (after, through] that were deleted, or that I deleted for myself. Both lookups
    /// walk indexes of deleted and hidden messages only.
    private static func uncounted(_ id: ConversationID, of user: UserID, after: Int64, through: Int64, _ db: Database) throws -> Int64 {
        guard through > after else { return 0 }
        return try Int64.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT (SELECT COUNT(*) FROM messages WHERE conversation_id = ?1 AND deleted_at IS NOT NULL AND seq > ?2 AND seq <= ?3
                        AND sender_id != ?4)
                    + (SELECT COUNT(*) FROM hidden_messages h JOIN messages m ON m.conversation_id = h.conversation_id AND m.seq = h.seq
                        WHERE h.user_id = ?4 AND h.conversation_id = ?1 AND h.seq > ?2 AND h.seq <= ?3 AND m.deleted_at IS NULL AND m.sender_id != ?4)
                    """),
            arguments: [id.rawValue, after, through, user.rawValue]) ?? 0
    }

    /// The members with their cursors; presence (last seen) only where it is shared (direct
    /// conversations where both have written), roles only in groups.
    private static func members(of id: ConversationID, as user: UserID, _ db: Database) throws -> (list: [ConversationMember], presenceShared: Bool?) {
        let rows = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT m.user_id, u.username, u.display_name, m.delivered_seq, m.read_seq, u.last_seen_at,
                        m.first_sent_seq IS NOT NULL, m.role, u.photo_upload
                    FROM conversation_members m JOIN users u ON u.id = m.user_id
                    WHERE m.conversation_id = ? ORDER BY m.user_id
                    """),
            arguments: [id.rawValue]
        )
        let presenceShared: Bool? = id.isGroup ? nil : rows.allSatisfy { $0[6] as Bool }
        let list = rows.map { member in
            let userId = UserID(rawValue: member[0])
            return ConversationMember(
                userId: userId, username: member[1], displayName: member[2],
                deliveredSeq: member[3], readSeq: member[4],
                lastSeenAt: presenceShared == true || userId == user ? (member[5] as Int64?).map(Timestamp.init(milliseconds:)) : nil,
                role: (member[7] as String?).flatMap(MemberRole.init(rawValue:)),
                photo: (member[8] as String?).map { API.photoPath(UploadID(rawValue: $0)) })
        }
        return (list, presenceShared)
    }

    /// Other people's messages in (after, through] — membership entries, my own, deleted and hidden ones never count.
    private static func unreadCount(_ id: ConversationID, of user: UserID, after: Int64, through: Int64, _ db: Database) throws -> Int64 {
        guard through > after else { return 0 }
        return try Int64.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT COUNT(*) FROM messages m WHERE m.conversation_id = ?1 AND m.seq > ?2 AND m.seq <= ?3 AND m.entry IS NULL
                    AND m.sender_id != ?4 AND m.deleted_at IS NULL
                    AND NOT EXISTS (SELECT 1 FROM hidden_messages h WHERE h.user_id = ?4 AND h.conversation_id = ?1 AND h.seq = m.seq)
                    """),
            arguments: [id.rawValue, after, through, user.rawValue]) ?? 0
    }

    private static func mentionCount(_ id: ConversationID, of user: UserID, after: Int64, through: Int64, _ db: Database) throws -> Int64 {
        guard through > after else { return 0 }
        return try Int64.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT COUNT(*) FROM mentions n WHERE n.user_id = ?1 AND n.conversation_id = ?2 AND n.seq > ?3 AND n.seq <= ?4
                    AND NOT EXISTS (SELECT 1 FROM hidden_messages h WHERE h.user_id = ?1 AND h.conversation_id = ?2 AND h.seq = n.seq)
                    """),
            arguments: [user.rawValue, id.rawValue, after, through]) ?? 0
    }

    static func conversationInfo(_ id: ConversationID, _ db: Database) throws -> ConversationInfo {
        guard let row = try Row.fetchOne(db, sql: "SELECT kind, created_at, title FROM conversations WHERE id = ?", arguments: [id.rawValue])
        else { throw StoreError.conversationNotFound }
        return ConversationInfo(
            id: id, kind: ConversationKind(rawValue: row[0]) ?? .direct, createdAt: Timestamp(milliseconds: row[1]),
            members: try users(memberIDs(id, db), db), title: row[2])
    }
}
