import GRDB
import ParleyCore
import ParleyStore

extension SQLiteStore: MessageActionStore {
    /// One job of the group commit, as sends are. Rules (docs/protocol.md "Message actions"):
    /// 1. (actor, client id) seen before → the message as it is now, `duplicate`, nothing written;
    ///    the same client id for another message or kind is a conflict.
    /// 2. The actor must see the message: a member of the conversation, inside a span in a group
    ///    (a former member may only hide); otherwise the conversation or message is not found.
    /// 3. ``MessageActionPlan`` decides from what was read; nothing is written before it has.
    /// 4. A change appends `messageUpdated` to every current member who can see the message, or
    ///    `messageHidden` to the actor; an unchanged action writes only its idempotency record.
    public func act(_ action: NewMessageAction, now: Timestamp) async throws -> ActionOutcome {
        let statements = writerStatements
        return try await batchedWrite { db in
            let statements = try statements.on(db)
            let conversation = action.conversation
            if let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT conversation_id, seq, kind FROM message_actions WHERE actor_id = ? AND client_id = ?"),
                arguments: [action.actor.rawValue, action.clientId.rawValue])
            {
                guard row[0] == conversation.rawValue, row[1] == action.seq, row[2] == action.change.kind.rawValue else {
                    throw StoreError.clientIdConflict
                }
                guard let message = try MessageRendering.message(action.seq, in: conversation, for: action.actor, db) else {
                    throw StoreError.messageNotFound
                }
                return ActionOutcome(message: message, duplicate: true, deliveries: [])
            }
            let (acted, role) = try Self.actedMessage(action, db)
            let myReaction = try String.fetchOne(
                db.cachedStatement(sql: "SELECT emoji FROM reactions WHERE conversation_id = ? AND seq = ? AND user_id = ?"),
                arguments: [conversation.rawValue, action.seq, action.actor.rawValue])
            let hidden = try Self.isHidden(action.seq, in: conversation, by: action.actor, db)
            let effect = try MessageActionPlan.decide(action, on: acted, role: role, myReaction: myReaction, hidden: hidden, now: now)
            try db.cachedStatement(sql: "INSERT INTO message_actions (actor_id, client_id, conversation_id, seq, kind) VALUES (?, ?, ?, ?, ?)")
                .execute(arguments: [action.actor.rawValue, action.clientId.rawValue, conversation.rawValue, action.seq, action.change.kind.rawValue])
            let mark = try CommitOrderMarks.mark(conversation, db)
            if myReaction != nil, conversation.isGroup, effect.changesReactions {
                try CommitOrderMarks.keepReplacedReaction([conversation.rawValue, action.seq], user: action.actor, at: mark, db)
            }
            try Self.apply(effect, of: action, acted: acted, now: now, mark: mark, statements.searchIndex, db)
            guard let message = try MessageRendering.message(action.seq, in: conversation, for: action.actor, db) else {
                throw StoreError.messageNotFound
            }
            var deliveries: [Delivery] = []
            switch effect {
            case .unchanged: break
            case .hide:
                let ref = MessageRef(conversationId: conversation, seq: action.seq)
                deliveries.append(try Self.appendEvent(.messageHidden(ref), to: action.actor, now: now, statements))
            case .setReaction, .clearReaction, .edit, .delete:
                let (shared, quoteReaders) = try MessageRendering.quoteForAudience(message, db)
                for member in try Self.audience(of: action.seq, in: conversation, statements, db) {
                    let seen = shared.reactionsSeen(by: member).quoteSeen(by: member, quoteReaders: quoteReaders)
                    deliveries.append(try Self.appendEvent(.messageUpdated(seen), to: member, now: now, statements))
                }
            }
            return ActionOutcome(message: message, duplicate: false, deliveries: deliveries)
        }
    }

    /// Rule 2: the message and the actor's role, or the error that hides what the actor may not see.
    private static func actedMessage(_ action: NewMessageAction, _ db: Database) throws -> (ActedMessage, MemberRole?) {
        let conversation = action.conversation
        let member = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT role FROM conversation_members WHERE conversation_id = ? AND user_id = ?"),
            arguments: [conversation.rawValue, action.actor.rawValue])
        if conversation.isGroup {
            guard try inSpans(action.seq, of: action.actor, in: conversation, db) else {
                let known =
                    try Bool.fetchOne(
                        db, sql: "SELECT 1 FROM member_spans WHERE conversation_id = ? AND user_id = ? LIMIT 1",
                        arguments: [conversation.rawValue, action.actor.rawValue]) == true
                throw known ? StoreError.messageNotFound : StoreError.conversationNotFound
            }
            if member == nil, action.change != .hide { throw StoreError.noLongerMember }
        } else if member == nil {
            throw StoreError.conversationNotFound
        }
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: "SELECT sender_id, created_at, text, deleted_at, entry, attachments IS NOT NULL FROM messages WHERE conversation_id = ? AND seq = ?"),
                arguments: [conversation.rawValue, action.seq])
        else { throw StoreError.messageNotFound }
        let acted = ActedMessage(
            sender: UserID(rawValue: row[0]), createdAt: Timestamp(milliseconds: row[1]), text: row[2],
            deleted: (row[3] as Int64?) != nil, isEntry: (row[4] as String?) != nil, hasAttachments: row[5])
        return (acted, (member?[0] as String?).flatMap(MemberRole.init(rawValue:)))
    }

    /// An edit replaces the indexed text, a delete for everyone removes it (``SearchIndexLog``).
    private static func reindex(
        _ effect: MessageActionPlan.Effect, acted: ActedMessage, key: StatementArguments, _ searchIndex: SearchIndexLog, _ db: Database
    ) throws {
        guard !acted.isEntry, !acted.deleted else { return }
        let replacement: String?
        switch effect {
        case .edit(_, let new): replacement = new
        case .delete: replacement = nil
        default: return
        }
        guard let rowid = try Int64.fetchOne(db.cachedStatement(sql: "SELECT rowid FROM messages WHERE conversation_id = ? AND seq = ?"), arguments: key)
        else { return }
        searchIndex.remove(rowid: rowid, text: acted.text)
        if let replacement {
            searchIndex.add(rowid: rowid, text: replacement)
        } else {
            try SearchIndexPurge.markPending(db)
        }
    }

    private static func apply(
        _ effect: MessageActionPlan.Effect, of action: NewMessageAction, acted: ActedMessage, now: Timestamp, mark: Int64,
        _ searchIndex: SearchIndexLog, _ db: Database
    ) throws {
        let key: StatementArguments = [action.conversation.rawValue, action.seq]
        try reindex(effect, acted: acted, key: key, searchIndex, db)
        switch effect {
        case .unchanged:
            return
        case .setReaction(let emoji):
            try db.cachedStatement(
                sql: """
                    INSERT INTO reactions (conversation_id, seq, user_id, emoji, created_at, mark) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (conversation_id, seq, user_id) DO UPDATE SET emoji = excluded.emoji, created_at = excluded.created_at,
                        mark = excluded.mark
                    """
            ).execute(arguments: key + [action.actor.rawValue, emoji, now.milliseconds, mark])
        case .clearReaction:
            try db.cachedStatement(sql: "DELETE FROM reactions WHERE conversation_id = ? AND seq = ? AND user_id = ?")
                .execute(arguments: key + [action.actor.rawValue])
        case .edit(let previous, let new):
            try db.cachedStatement(
                sql: """
                    INSERT INTO message_versions (conversation_id, seq, version, text, created_at, replaced_at, replaced_mark)
                    SELECT ?1, ?2, COALESCE((SELECT MAX(version) FROM message_versions WHERE conversation_id = ?1 AND seq = ?2), 0) + 1, ?3,
                        COALESCE(edited_at, created_at), ?4, ?5 FROM messages WHERE conversation_id = ?1 AND seq = ?2
                    """
            ).execute(arguments: key + [previous, now.milliseconds, mark])
            try db.cachedStatement(sql: "UPDATE messages SET text = ?, edited_at = ? WHERE conversation_id = ? AND seq = ?")
                .execute(arguments: [new, now.milliseconds] + key)
        case .delete:
            // Gone, not hidden: the text, when it was edited, its versions, reactions and mentions (secure_delete zeroes the bytes).
            try db.cachedStatement(
                sql:
                    "UPDATE messages SET text = '', mentions = NULL, attachments = NULL, edited_at = NULL, deleted_at = ?, reaction_count = 0 WHERE conversation_id = ? AND seq = ?"
            ).execute(arguments: [now.milliseconds] + key)
            // Its files go too: their blobs become candidates for the collector (``UploadStore``).
            try db.cachedStatement(
                sql:
                    "INSERT OR IGNORE INTO blob_candidates (blob, since) SELECT blob, ? FROM uploads WHERE conversation_id = ? AND seq = ? AND blob IS NOT NULL"
            ).execute(arguments: [now.milliseconds] + key)
            for table in ["message_versions", "reactions", "former_reactions", "mentions", "uploads"] {
                try db.cachedStatement(sql: "DELETE FROM \(table) WHERE conversation_id = ? AND seq = ?").execute(arguments: key)
            }
        case .hide:
            try db.cachedStatement(sql: "INSERT INTO hidden_messages (user_id, conversation_id, seq) VALUES (?, ?, ?)")
                .execute(arguments: [action.actor.rawValue] + key)
        }
        if case .setReaction = effect { try refreshReactionCount(key, db) }
        if case .clearReaction = effect { try refreshReactionCount(key, db) }
    }

    /// The reactions and the kept ones (``CommitOrderMarks`` rule 4).
    private static func refreshReactionCount(_ key: StatementArguments, _ db: Database) throws {
        try db.cachedStatement(
            sql: """
                UPDATE messages SET reaction_count = (SELECT COUNT(*) FROM reactions r WHERE r.conversation_id = ?1 AND r.seq = ?2)
                    + (SELECT COUNT(*) FROM former_reactions r WHERE r.conversation_id = ?1 AND r.seq = ?2)
                WHERE conversation_id = ?1 AND seq = ?2
                """
        ).execute(arguments: key)
    }

    /// Rule 4: the current members who can see `seq` (in a group, those whose span holds it) and
    /// have not deleted it for themselves (what it becomes is no longer theirs to receive).
    private static func audience(of seq: Int64, in conversation: ConversationID, _ statements: WriterStatements, _ db: Database) throws -> [UserID] {
        let spans = """
            AND EXISTS (SELECT 1 FROM member_spans s WHERE s.conversation_id = ?1 AND s.user_id = m.user_id
                AND s.from_seq <= ?2 AND (s.to_seq IS NULL OR s.to_seq >= ?2))
            """
        return try String.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT m.user_id FROM conversation_members m WHERE m.conversation_id = ?1 \(conversation.isGroup ? spans : "")
                    AND NOT EXISTS (SELECT 1 FROM hidden_messages h WHERE h.user_id = m.user_id AND h.conversation_id = ?1 AND h.seq = ?2)
                    ORDER BY m.user_id
                    """),
            arguments: [conversation.rawValue, seq]
        ).map(UserID.init(rawValue:))
    }

    static func isHidden(_ seq: Int64, in conversation: ConversationID, by user: UserID, _ db: Database) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT 1 FROM hidden_messages WHERE user_id = ? AND conversation_id = ? AND seq = ?"),
            arguments: [user.rawValue, conversation.rawValue, seq]) == true
    }

    public func versions(in conversation: ConversationID, seq: Int64, as user: UserID) async throws -> [MessageVersion] {
        try await pool.read { db in
            guard try MessageVisibility.canSee(seq, in: conversation, user: user, db) else {
                throw try Self.isMember(user, of: conversation, db) ? StoreError.messageNotFound : StoreError.conversationNotFound
            }
            // Someone who left sees the versions replaced before they left, as their copy is the text of then.
            let leftSeq = try MessageRendering.leftSeq(user, conversation, db)
            return try Row.fetchAll(
                db.cachedStatement(
                    sql:
                        "SELECT text, created_at, replaced_at FROM message_versions WHERE conversation_id = ? AND seq = ? AND replaced_mark < ? ORDER BY version"
                ),
                arguments: [conversation.rawValue, seq, leftSeq ?? Int64.max]
            ).map { MessageVersion(text: $0[0], createdAt: Timestamp(milliseconds: $0[1]), replacedAt: Timestamp(milliseconds: $0[2])) }
        }
    }

    static func isMember(_ user: UserID, of conversation: ConversationID, _ db: Database) throws -> Bool {
        let sql =
            conversation.isGroup
            ? "SELECT 1 FROM member_spans WHERE conversation_id = ? AND user_id = ? LIMIT 1"
            : "SELECT 1 FROM conversation_members WHERE conversation_id = ? AND user_id = ?"
        return try Bool.fetchOne(db.cachedStatement(sql: sql), arguments: [conversation.rawValue, user.rawValue]) == true
    }
}

/// Who can see a message: a member of a direct conversation, a group member inside one of their spans.
enum MessageVisibility {
    static func canSee(_ seq: Int64, in conversation: ConversationID, user: UserID, _ db: Database) throws -> Bool {
        guard seq >= 1,
            try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT 1 FROM messages WHERE conversation_id = ? AND seq = ?"), arguments: [conversation.rawValue, seq]) == true
        else { return false }
        if conversation.isGroup { return try SQLiteStore.inSpans(seq, of: user, in: conversation, db) }
        return try SQLiteStore.isMember(user, of: conversation, db)
    }
}
