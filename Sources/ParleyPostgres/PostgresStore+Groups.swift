import ParleyCore
import ParleyStore
import PostgresNIO

extension PostgresStore: GroupStore {
    public func createGroup(_ group: NewGroup, now: Timestamp) async throws -> GroupOutcome {
        try await transaction { db in
            let written = try await self.earlierAction(by: group.creator, group.clientId, db)
            let recorded = try await self.recordedAction(by: group.creator, group.clientId, db)
            if let earlier = try GroupRetry.create(recorded: recorded, written: written) { return earlier }
            let known = Set(try await Self.users(group.memberIds, db, self.logger).map(\.id))
            let contacts = try await self.directContacts(of: group.creator, among: group.memberIds, db)
            let (joining, invited) = try GroupPlan.create(group, known: known, contacts: contacts)
            let id = ConversationID.newGroup()
            try await db.query(
                """
                INSERT INTO conversations (id, kind, created_at, last_seq, last_activity_at, title)
                VALUES (\(id.rawValue), 'group', \(now.milliseconds), 0, \(now.milliseconds), \(group.title))
                """, logger: self.logger)
            var writer = PostgresGroupWriter(store: self, conversation: id, now: now, db: db)
            try await writer.addMember(group.creator, role: .owner)
            for user in joining { try await writer.addMember(user, role: .member) }
            let entry = try await writer.append(
                GroupEntry(type: .created, userIds: joining, title: group.title), by: group.creator, group.clientId,
                joined: [group.creator] + joining, shareHistory: false, departing: nil)
            try await writer.invite(invited, by: group.creator, shareHistory: group.shareHistory)
            try await self.record(by: group.creator, group.clientId, in: id, invited: invited, db)
            try await self.notify(writer.deliveries, db)
            return GroupOutcome(conversationId: id, entry: entry, invited: invited, duplicate: false, deliveries: writer.deliveries)
        }
    }

    public func changeGroup(_ change: MembershipChange, now: Timestamp) async throws -> GroupOutcome {
        try await transaction { db in
            var writer = PostgresGroupWriter(store: self, conversation: change.conversation, now: now, db: db)
            // The lock first: a retry racing the original waits for it, then finds its entry.
            let state = try await writer.lockGroup()
            let written = try await self.earlierAction(by: change.actor, change.clientId, db)
            let recorded = try await self.recordedAction(by: change.actor, change.clientId, db)
            if let earlier = try GroupRetry.change(change, recorded: recorded, written: written) { return earlier }
            let outcome: GroupOutcome
            if change.action == .accept {
                outcome = try await self.accept(change, state: state, &writer)
            } else {
                outcome = try await self.apply(change, state: state, &writer)
            }
            try await self.notify(writer.deliveries, db)
            return outcome
        }
    }

    private func apply(_ change: MembershipChange, state: GroupState?, _ writer: inout PostgresGroupWriter) async throws -> GroupOutcome {
        let db = writer.db
        var named: [UserID] = []
        var shareHistory = false
        if case .add(let users, let share) = change.action { (named, shareHistory) = (users, share) }
        let known = Set(try await Self.users(named, db, logger).map(\.id))
        let contacts = try await directContacts(of: change.actor, among: named, db)
        let plan = try GroupPlan.decide(change.action, by: change.actor, in: state, known: known, contacts: contacts, maxMembers: change.maxMembers)
        let id = change.conversation.rawValue
        if let title = plan.title { try await db.query("UPDATE conversations SET title = \(title) WHERE id = \(id)", logger: logger) }
        for (user, role) in plan.roles.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            try await db.query(
                "UPDATE conversation_members SET role = \(role.rawValue) WHERE conversation_id = \(id) AND user_id = \(user.rawValue)", logger: logger)
        }
        for user in plan.joining { try await writer.addMember(user, role: .member) }
        var entry: Message?
        if let planned = plan.entry {
            entry = try await writer.append(
                planned, by: change.actor, change.clientId, joined: plan.joining, shareHistory: shareHistory, departing: plan.departing)
        }
        try await writer.invite(plan.inviting, by: change.actor, shareHistory: shareHistory)
        if case .add = change.action { try await record(by: change.actor, change.clientId, in: change.conversation, invited: plan.inviting, db) }
        if let user = plan.withdrawing {
            try await db.query("DELETE FROM invitations WHERE conversation_id = \(id) AND user_id = \(user.rawValue)", logger: logger)
        }
        if let user = plan.lapsing {
            try await db.query("DELETE FROM invitations WHERE conversation_id = \(id) AND inviter_id = \(user.rawValue)", logger: logger)
        }
        if plan.closes {
            try await db.query("UPDATE conversations SET closed = true WHERE id = \(id)", logger: logger)
            try await db.query("DELETE FROM invitations WHERE conversation_id = \(id)", logger: logger)
        }
        return GroupOutcome(
            conversationId: change.conversation, entry: entry, invited: plan.inviting, duplicate: false, deliveries: writer.deliveries,
            departed: plan.departing.map { [$0] } ?? [])
    }

    private func accept(_ change: MembershipChange, state: GroupState?, _ writer: inout PostgresGroupWriter) async throws -> GroupOutcome {
        guard
            let shareHistory = try await writer.db.value(
                "SELECT share_history FROM invitations WHERE user_id = \(change.actor.rawValue) AND conversation_id = \(change.conversation.rawValue)",
                as: Bool.self, logger)
        else { throw StoreError.invitationNotFound }
        guard let state, !state.closed else { throw StoreError.invitationNotFound }
        guard state.members.count < change.maxMembers else { throw StoreError.groupFull(limit: change.maxMembers) }
        try await writer.addMember(change.actor, role: .member)
        let entry = try await writer.append(
            GroupEntry(type: .joined), by: change.actor, change.clientId, joined: [change.actor], shareHistory: shareHistory, departing: nil)
        return GroupOutcome(conversationId: change.conversation, entry: entry, invited: [], duplicate: false, deliveries: writer.deliveries)
    }

    public func invitations(of user: UserID) async throws -> [Invitation] {
        try await read { db in
            try await db.rows(
                """
                SELECT i.conversation_id, COALESCE(c.title, ''), i.created_at,
                    (SELECT COUNT(*) FROM conversation_members m WHERE m.conversation_id = i.conversation_id), \(unescaped: Columns.user)
                FROM invitations i JOIN conversations c ON c.id = i.conversation_id JOIN users u ON u.id = i.inviter_id
                WHERE i.user_id = \(user.rawValue) ORDER BY i.created_at DESC, i.conversation_id COLLATE "C" LIMIT \(Invitation.listLimit)
                """, self.logger
            ).map { row in
                let c = try row.decode((String, String, Int64, Int64, String, String, String, Int64, String?).self)
                return Invitation(
                    conversationId: ConversationID(rawValue: c.0), title: c.1, inviter: User((c.4, c.5, c.6, c.7, c.8)), memberCount: Int(c.3),
                    createdAt: Timestamp(milliseconds: c.2))
            }
        }
    }

    public func declineInvitation(to conversation: ConversationID, user: UserID) async throws {
        try await transaction { db in
            let deleted = try await db.value(
                "DELETE FROM invitations WHERE user_id = \(user.rawValue) AND conversation_id = \(conversation.rawValue) RETURNING 1",
                as: Int32.self, self.logger)
            guard deleted != nil else { throw StoreError.invitationNotFound }
        }
    }

    public func messageInfo(in conversation: ConversationID, seq: Int64, as user: UserID) async throws -> MessageInfo {
        try await read { db in
            let members = try await db.rows(
                """
                SELECT m.user_id, m.delivered_seq, m.read_seq, COALESCE(s.joined_seq, 0) FROM conversation_members m
                LEFT JOIN member_spans s ON s.conversation_id = m.conversation_id AND s.user_id = m.user_id AND s.to_seq IS NULL
                WHERE m.conversation_id = \(conversation.rawValue) ORDER BY m.user_id COLLATE "C"
                """, self.logger
            ).map { try $0.decode((String, Int64, Int64, Int64).self) }
            guard members.contains(where: { $0.0 == user.rawValue }) else { throw StoreError.conversationNotFound }
            guard
                let sender = try await db.value(
                    "SELECT sender_id FROM messages WHERE conversation_id = \(conversation.rawValue) AND seq = \(seq) AND entry IS NULL",
                    as: String.self, self.logger)
            else { throw StoreError.messageNotFound }
            guard sender == user.rawValue else {
                // Someone else's message: whether it exists is not told outside one's spans.
                let inSpans = try await db.value(
                    """
                    SELECT 1 FROM member_spans WHERE conversation_id = \(conversation.rawValue) AND user_id = \(user.rawValue)
                        AND from_seq <= \(seq) AND (to_seq IS NULL OR to_seq >= \(seq))
                    """, as: Int32.self, self.logger)
                guard inSpans != nil else { throw StoreError.messageNotFound }
                throw StoreError.forbidden("Message info is shown for your own messages only.")
            }
            return MessageInfo(seq: seq, states: members.filter { $0.0 != user.rawValue && $0.3 < seq }.map { (UserID(rawValue: $0.0), $0.1, $0.2) })
        }
    }

    func earlierAction(by actor: UserID, _ clientId: ClientMessageID, _ db: PostgresConnection) async throws -> Message? {
        try await db.rows(
            "SELECT \(unescaped: Columns.message) FROM messages m WHERE m.sender_id = \(actor.rawValue) AND m.client_id = \(clientId.rawValue)",
            logger
        ).first.map { Message(try $0.decode(MessageRow.self)) }
    }

    /// A create or add recorded under (actor, client id): its group and whom it invited.
    private func recordedAction(by actor: UserID, _ clientId: ClientMessageID, _ db: PostgresConnection) async throws -> RecordedGroupAction? {
        try await db.rows(
            "SELECT conversation_id, invited FROM group_actions WHERE actor_id = \(actor.rawValue) AND client_id = \(clientId.rawValue)", logger
        ).first.map { row in
            let (conversation, invited) = try row.decode((String, String).self)
            return RecordedGroupAction(conversation: ConversationID(rawValue: conversation), invited: StoredJSON.userIDs(invited) ?? [])
        }
    }

    private func record(
        by actor: UserID, _ clientId: ClientMessageID, in conversation: ConversationID, invited: [UserID], _ db: PostgresConnection
    ) async throws {
        try await db.query(
            """
            INSERT INTO group_actions (actor_id, client_id, conversation_id, invited)
            VALUES (\(actor.rawValue), \(clientId.rawValue), \(conversation.rawValue), \(StoredJSON.ids(invited)))
            """, logger: logger)
    }

    /// Those of `users` with whom `user` has exchanged messages in their direct conversation.
    func directContacts(of user: UserID, among users: [UserID], _ db: PostgresConnection) async throws -> Set<UserID> {
        guard !users.isEmpty else { return [] }
        let ids = users.map { ConversationID.direct(user, $0).rawValue }
        let formed = Set(
            try await db.values(
                """
                SELECT conversation_id FROM conversation_members WHERE conversation_id = ANY(\(ids))
                GROUP BY conversation_id HAVING COUNT(first_sent_seq) = 2
                """, as: String.self, logger))
        return Set(users.filter { formed.contains(ConversationID.direct(user, $0).rawValue) })
    }
}
