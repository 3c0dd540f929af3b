import ParleyCore
import ParleyStore
import PostgresNIO

extension PostgresStore: MessageActionStore {
    /// The rules of SQLite's `act` (docs/protocol.md "Message actions"), in one transaction under
    /// the message row's lock (`FOR UPDATE`, after a group's row `FOR SHARE`, which also reads the
    /// change's mark, ``PostgresCommitOrderMarks``): two actions on one message apply one after the
    /// other, and a retry racing its original loses on the record's key, runs again and finds the
    /// original's record.
    public func act(_ action: NewMessageAction, now: Timestamp) async throws -> ActionOutcome {
        let conversation = action.conversation
        return try await transaction { db in
            let logger = self.logger
            // The record first, as SQLite does: a client id used before answers the same whether
            // or not the message exists, so it tells nobody outside the conversation anything.
            if let earlier = try await db.rows(
                "SELECT conversation_id, seq, kind FROM message_actions WHERE actor_id = \(action.actor.rawValue) AND client_id = \(action.clientId.rawValue)",
                logger
            ).first {
                let (id, seq, kind) = try earlier.decode((String, Int64, String).self)
                guard id == conversation.rawValue, seq == action.seq, kind == action.change.kind.rawValue else { throw StoreError.clientIdConflict }
                guard let message = try await self.currentMessage(action.seq, in: conversation, for: action.actor, db) else {
                    throw StoreError.messageNotFound
                }
                return ActionOutcome(message: message, duplicate: true, deliveries: [])
            }
            // A group's membership and roles hold still until commit (its changes take the row FOR UPDATE);
            // then the message's row, so two actions on it apply one after the other.
            var mark: Int64 = 0
            if conversation.isGroup {
                mark = try await db.value("SELECT last_seq FROM conversations WHERE id = \(conversation.rawValue) FOR SHARE", as: Int64.self, logger) ?? 0
            }
            guard
                let row = try await db.rows(
                    """
                    SELECT sender_id, created_at, text, deleted_at IS NOT NULL, entry IS NOT NULL, attachments IS NOT NULL FROM messages
                    WHERE conversation_id = \(conversation.rawValue) AND seq = \(action.seq) FOR UPDATE
                    """, logger
                ).first
            else {
                throw try await self.isMember(action.actor, of: conversation, db) ? StoreError.messageNotFound : StoreError.conversationNotFound
            }
            let role = try await self.actorRole(action, db)
            let (sender, created, text, deleted, isEntry, hasAttachments) = try row.decode((String, Int64, String, Bool, Bool, Bool).self)
            let acted = ActedMessage(
                sender: UserID(rawValue: sender), createdAt: Timestamp(milliseconds: created), text: text, deleted: deleted, isEntry: isEntry,
                hasAttachments: hasAttachments)
            let key = (conversation.rawValue, action.seq, action.actor.rawValue)
            let myReaction = try await db.value(
                "SELECT emoji FROM reactions WHERE conversation_id = \(key.0) AND seq = \(key.1) AND user_id = \(key.2)", as: String.self, logger)
            let hidden =
                try await db.value(
                    "SELECT 1 FROM hidden_messages WHERE user_id = \(key.2) AND conversation_id = \(key.0) AND seq = \(key.1)", as: Int32.self, logger)
                != nil
            let effect = try MessageActionPlan.decide(action, on: acted, role: role, myReaction: myReaction, hidden: hidden, now: now)
            try await db.query(
                """
                INSERT INTO message_actions (actor_id, client_id, conversation_id, seq, kind)
                VALUES (\(key.2), \(action.clientId.rawValue), \(key.0), \(key.1), \(action.change.kind.rawValue))
                """, logger: logger)
            if myReaction != nil, conversation.isGroup, effect.changesReactions {
                try await PostgresCommitOrderMarks.keepReplacedReaction(conversation, action.seq, user: action.actor, at: mark, db, logger)
            }
            try await self.apply(effect, of: action, now: now, mark: mark, db)
            guard let message = try await self.currentMessage(action.seq, in: conversation, for: action.actor, db) else {
                throw StoreError.messageNotFound
            }
            var deliveries: [Delivery] = []
            switch effect {
            case .unchanged: break
            case .hide:
                let ref = MessageRef(conversationId: conversation, seq: action.seq)
                deliveries.append(try await self.appendEvent(.messageHidden(ref), to: action.actor, now: now, db))
            case .setReaction, .clearReaction, .edit, .delete:
                let (shared, quoteReaders) = try await self.quoteForAudience(message, db)
                for member in try await self.audience(of: action.seq, in: conversation, db) {
                    let seen = shared.reactionsSeen(by: member).quoteSeen(by: member, quoteReaders: quoteReaders)
                    deliveries.append(try await self.appendEvent(.messageUpdated(seen), to: member, now: now, db))
                }
            }
            try await self.notify(deliveries, db)
            return ActionOutcome(message: message, duplicate: false, deliveries: deliveries)
        }
    }

    /// The actor's role, after checking they may act: a member of a direct conversation; in a group
    /// one whose span holds the message (a former member may only hide).
    private func actorRole(_ action: NewMessageAction, _ db: PostgresConnection) async throws -> MemberRole? {
        let (id, actor) = (action.conversation.rawValue, action.actor.rawValue)
        let member = try await db.rows("SELECT role FROM conversation_members WHERE conversation_id = \(id) AND user_id = \(actor)", logger).first
        if action.conversation.isGroup {
            guard try await inSpans(action.seq, of: action.actor, in: action.conversation, db) else {
                throw try await isMember(action.actor, of: action.conversation, db) ? StoreError.messageNotFound : StoreError.conversationNotFound
            }
            if member == nil, action.change != .hide { throw StoreError.noLongerMember }
        } else if member == nil {
            throw StoreError.conversationNotFound
        }
        return try member?.decode(String?.self).flatMap(MemberRole.init(rawValue:))
    }

    private func apply(
        _ effect: MessageActionPlan.Effect, of action: NewMessageAction, now: Timestamp, mark: Int64, _ db: PostgresConnection
    ) async throws {
        let (id, seq, actor) = (action.conversation.rawValue, action.seq, action.actor.rawValue)
        switch effect {
        case .unchanged:
            return
        case .setReaction(let emoji):
            try await db.query(
                """
                INSERT INTO reactions (conversation_id, seq, user_id, emoji, created_at, mark)
                VALUES (\(id), \(seq), \(actor), \(emoji), \(now.milliseconds), \(mark))
                ON CONFLICT (conversation_id, seq, user_id) DO UPDATE SET emoji = excluded.emoji, created_at = excluded.created_at,
                    mark = excluded.mark
                """, logger: logger)
        case .clearReaction:
            try await db.query("DELETE FROM reactions WHERE conversation_id = \(id) AND seq = \(seq) AND user_id = \(actor)", logger: logger)
        case .edit(let previous, let new):
            try await db.query(
                """
                INSERT INTO message_versions (conversation_id, seq, version, text, created_at, replaced_at, replaced_mark)
                SELECT \(id), \(seq), COALESCE((SELECT MAX(version) FROM message_versions WHERE conversation_id = \(id) AND seq = \(seq)), 0) + 1,
                    \(previous), COALESCE(edited_at, created_at), \(now.milliseconds), \(mark)
                FROM messages WHERE conversation_id = \(id) AND seq = \(seq)
                """, logger: logger)
            try await db.query(
                "UPDATE messages SET text = \(new), edited_at = \(now.milliseconds) WHERE conversation_id = \(id) AND seq = \(seq)", logger: logger)
        case .delete:
            try await db.query(
                """
                UPDATE messages SET text = '', mentions = NULL, attachments = NULL, edited_at = NULL, deleted_at = \(now.milliseconds), reaction_count = 0
                WHERE conversation_id = \(id) AND seq = \(seq)
                """, logger: logger)
            // Its files go too: their blobs become candidates for the collector (``UploadStore``).
            try await db.query(
                """
                INSERT INTO blob_candidates (blob, since) SELECT blob, \(now.milliseconds) FROM uploads
                WHERE conversation_id = \(id) AND seq = \(seq) AND blob IS NOT NULL ON CONFLICT DO NOTHING
                """, logger: logger)
            try await db.query("DELETE FROM uploads WHERE conversation_id = \(id) AND seq = \(seq)", logger: logger)
            try await db.query("DELETE FROM message_versions WHERE conversation_id = \(id) AND seq = \(seq)", logger: logger)
            try await db.query("DELETE FROM reactions WHERE conversation_id = \(id) AND seq = \(seq)", logger: logger)
            try await db.query("DELETE FROM former_reactions WHERE conversation_id = \(id) AND seq = \(seq)", logger: logger)
            try await db.query("DELETE FROM mentions WHERE conversation_id = \(id) AND seq = \(seq)", logger: logger)
        case .hide:
            try await db.query("INSERT INTO hidden_messages (user_id, conversation_id, seq) VALUES (\(actor), \(id), \(seq))", logger: logger)
        }
        switch effect {
        case .setReaction, .clearReaction:
            try await db.query(
                """
                UPDATE messages SET reaction_count = (SELECT COUNT(*) FROM reactions r WHERE r.conversation_id = \(id) AND r.seq = \(seq))
                    + (SELECT COUNT(*) FROM former_reactions r WHERE r.conversation_id = \(id) AND r.seq = \(seq))
                WHERE conversation_id = \(id) AND seq = \(seq)
                """, logger: logger)
        default: break
        }
    }

    /// The current members who can see `seq` (in a group, those whose span holds it) and have not
    /// deleted it for themselves (see SQLite's).
    private func audience(of seq: Int64, in conversation: ConversationID, _ db: PostgresConnection) async throws -> [UserID] {
        let spans = """
            AND EXISTS (SELECT 1 FROM member_spans s WHERE s.conversation_id = m.conversation_id AND s.user_id = m.user_id
                AND s.from_seq <= $2 AND (s.to_seq IS NULL OR s.to_seq >= $2))
            """
        var bindings = PostgresBindings()
        bindings.append(conversation.rawValue)
        bindings.append(seq)
        let sql = PostgresQuery(
            unsafeSQL: """
                SELECT m.user_id FROM conversation_members m WHERE m.conversation_id = $1 \(conversation.isGroup ? spans : "")
                AND NOT EXISTS (SELECT 1 FROM hidden_messages h WHERE h.user_id = m.user_id AND h.conversation_id = $1 AND h.seq = $2)
                ORDER BY m.user_id COLLATE "C"
                """, binds: bindings)
        return try await db.values(sql, as: String.self, logger).map(UserID.init(rawValue:))
    }

    func inSpans(_ seq: Int64, of user: UserID, in conversation: ConversationID, _ db: PostgresConnection) async throws -> Bool {
        try await db.value(
            """
            SELECT 1 FROM member_spans WHERE conversation_id = \(conversation.rawValue) AND user_id = \(user.rawValue)
                AND from_seq <= \(seq) AND (to_seq IS NULL OR to_seq >= \(seq))
            """, as: Int32.self, logger) != nil
    }

    func isMember(_ user: UserID, of conversation: ConversationID, _ db: PostgresConnection) async throws -> Bool {
        let sql: PostgresQuery =
            conversation.isGroup
            ? "SELECT 1 FROM member_spans WHERE conversation_id = \(conversation.rawValue) AND user_id = \(user.rawValue) LIMIT 1"
            : "SELECT 1 FROM conversation_members WHERE conversation_id = \(conversation.rawValue) AND user_id = \(user.rawValue)"
        return try await db.value(sql, as: Int32.self, logger) != nil
    }

    /// Whether `user` can see the message at `seq` (it exists, inside their spans in a group).
    func canSee(_ seq: Int64, in conversation: ConversationID, user: UserID, _ db: PostgresConnection) async throws -> Bool {
        guard seq >= 1,
            try await db.value(
                "SELECT 1 FROM messages WHERE conversation_id = \(conversation.rawValue) AND seq = \(seq)", as: Int32.self, logger) != nil
        else { return false }
        return conversation.isGroup ? try await inSpans(seq, of: user, in: conversation, db) : try await isMember(user, of: conversation, db)
    }

    public func versions(in conversation: ConversationID, seq: Int64, as user: UserID) async throws -> [MessageVersion] {
        try await read { db in
            guard try await self.canSee(seq, in: conversation, user: user, db) else {
                throw try await self.isMember(user, of: conversation, db) ? StoreError.messageNotFound : StoreError.conversationNotFound
            }
            // Someone who left sees the versions replaced before they left (see SQLite's).
            let leftSeq = try await self.leftSeq(user, conversation, db)
            return try await db.rows(
                """
                SELECT text, created_at, replaced_at FROM message_versions WHERE conversation_id = \(conversation.rawValue) AND seq = \(seq)
                AND replaced_mark < \(leftSeq ?? Int64.max) ORDER BY version
                """, self.logger
            ).map { row in
                let (text, created, replaced) = try row.decode((String, Int64, Int64).self)
                return MessageVersion(text: text, createdAt: Timestamp(milliseconds: created), replacedAt: Timestamp(milliseconds: replaced))
            }
        }
    }
}
