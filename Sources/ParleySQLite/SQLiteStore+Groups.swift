import GRDB
import ParleyCore
import ParleyStore

extension SQLiteStore: GroupStore {
    public func createGroup(_ group: NewGroup, now: Timestamp) async throws -> GroupOutcome {
        let statements = writerStatements
        return try await batchedWrite { db in
            let statements = try statements.on(db)
            let written = try Self.earlierAction(by: group.creator, group.clientId, statements)
            if let earlier = try GroupRetry.create(recorded: try Self.recordedAction(by: group.creator, group.clientId, db), written: written) {
                return earlier
            }
            let known = Set(try Self.users(group.memberIds, db).map(\.id))
            let contacts = try Self.directContacts(of: group.creator, among: group.memberIds, db)
            let (joining, invited) = try GroupPlan.create(group, known: known, contacts: contacts)
            let id = ConversationID.newGroup()
            try db.execute(
                sql: "INSERT INTO conversations (id, kind, created_at, last_seq, last_activity_at, title) VALUES (?, 'group', ?, 0, ?, ?)",
                arguments: [id.rawValue, now.milliseconds, now.milliseconds, group.title])
            var writer = GroupWriter(conversation: id, now: now, statements: statements, db: db)
            try writer.addMember(group.creator, role: .owner)
            for user in joining { try writer.addMember(user, role: .member) }
            let entry = try writer.append(
                GroupEntry(type: .created, userIds: joining, title: group.title), by: group.creator, group.clientId,
                joined: [group.creator] + joining, shareHistory: false, departing: nil)
            try writer.invite(invited, by: group.creator, shareHistory: group.shareHistory)
            try Self.record(by: group.creator, group.clientId, in: id, invited: invited, db)
            return GroupOutcome(conversationId: id, entry: entry, invited: invited, duplicate: false, deliveries: writer.deliveries)
        }
    }

    public func changeGroup(_ change: MembershipChange, now: Timestamp) async throws -> GroupOutcome {
        let statements = writerStatements
        return try await batchedWrite { db in
            let statements = try statements.on(db)
            let written = try Self.earlierAction(by: change.actor, change.clientId, statements)
            let recorded = try Self.recordedAction(by: change.actor, change.clientId, db)
            if let earlier = try GroupRetry.change(change, recorded: recorded, written: written) { return earlier }
            let state = try Self.groupState(change.conversation, db)
            var writer = GroupWriter(conversation: change.conversation, now: now, statements: statements, db: db)
            if change.action == .accept { return try Self.accept(change, state: state, &writer) }
            var named: [UserID] = []
            if case .add(let users, _) = change.action { named = users }
            let known = Set(try Self.users(named, db).map(\.id))
            let contacts = try Self.directContacts(of: change.actor, among: named, db)
            let plan = try GroupPlan.decide(change.action, by: change.actor, in: state, known: known, contacts: contacts, maxMembers: change.maxMembers)
            if let title = plan.title {
                try db.execute(sql: "UPDATE conversations SET title = ? WHERE id = ?", arguments: [title, change.conversation.rawValue])
            }
            for (user, role) in plan.roles {
                try db.execute(
                    sql: "UPDATE conversation_members SET role = ? WHERE conversation_id = ? AND user_id = ?",
                    arguments: [role.rawValue, change.conversation.rawValue, user.rawValue])
            }
            for user in plan.joining { try writer.addMember(user, role: .member) }
            var shareHistory = false
            if case .add(_, let share) = change.action { shareHistory = share }
            let entry = try plan.entry.map {
                try writer.append($0, by: change.actor, change.clientId, joined: plan.joining, shareHistory: shareHistory, departing: plan.departing)
            }
            try writer.invite(plan.inviting, by: change.actor, shareHistory: shareHistory)
            if case .add = change.action { try Self.record(by: change.actor, change.clientId, in: change.conversation, invited: plan.inviting, db) }
            if let user = plan.withdrawing {
                try db.execute(
                    sql: "DELETE FROM invitations WHERE conversation_id = ? AND user_id = ?", arguments: [change.conversation.rawValue, user.rawValue])
            }
            if let user = plan.lapsing {
                try db.execute(
                    sql: "DELETE FROM invitations WHERE conversation_id = ? AND inviter_id = ?", arguments: [change.conversation.rawValue, user.rawValue])
            }
            if plan.closes {
                try db.execute(sql: "UPDATE conversations SET closed = 1 WHERE id = ?", arguments: [change.conversation.rawValue])
                try db.execute(sql: "DELETE FROM invitations WHERE conversation_id = ?", arguments: [change.conversation.rawValue])
            }
            return GroupOutcome(
                conversationId: change.conversation, entry: entry, invited: plan.inviting, duplicate: false, deliveries: writer.deliveries,
                departed: plan.departing.map { [$0] } ?? [])
        }
    }

    /// Accepting an invitation: the invitee joins (from the start when the inviter shared history).
    private static func accept(_ change: MembershipChange, state: GroupState?, _ writer: inout GroupWriter) throws -> GroupOutcome {
        let db = writer.db
        guard
            let shareHistory = try Bool.fetchOne(
                db, sql: "SELECT share_history FROM invitations WHERE user_id = ? AND conversation_id = ?",
                arguments: [change.actor.rawValue, change.conversation.rawValue])
        else { throw StoreError.invitationNotFound }
        guard let state, !state.closed else { throw StoreError.invitationNotFound }
        guard state.members.count < change.maxMembers else { throw StoreError.groupFull(limit: change.maxMembers) }
        try writer.addMember(change.actor, role: .member)
        let entry = try writer.append(
            GroupEntry(type: .joined), by: change.actor, change.clientId, joined: [change.actor], shareHistory: shareHistory, departing: nil)
        return GroupOutcome(conversationId: change.conversation, entry: entry, invited: [], duplicate: false, deliveries: writer.deliveries)
    }

    public func invitations(of user: UserID) async throws -> [Invitation] {
        try await lookup { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT i.conversation_id, c.title, i.created_at,
                        (SELECT COUNT(*) FROM conversation_members m WHERE m.conversation_id = i.conversation_id), \(Columns.user)
                    FROM invitations i JOIN conversations c ON c.id = i.conversation_id JOIN users u ON u.id = i.inviter_id
                    WHERE i.user_id = ? ORDER BY i.created_at DESC, i.conversation_id LIMIT \(Invitation.listLimit)
                    """,
                arguments: [user.rawValue]
            ).map { row in
                Invitation(
                    conversationId: ConversationID(rawValue: row[0]), title: row[1], inviter: User(row: row, at: 4), memberCount: row[3],
                    createdAt: Timestamp(milliseconds: row[2]))
            }
        }
    }

    public func declineInvitation(to conversation: ConversationID, user: UserID) async throws {
        try await batchedWrite { db in
            try db.execute(
                sql: "DELETE FROM invitations WHERE user_id = ? AND conversation_id = ?", arguments: [user.rawValue, conversation.rawValue])
            guard db.changesCount == 1 else { throw StoreError.invitationNotFound }
        }
    }

    public func messageInfo(in conversation: ConversationID, seq: Int64, as user: UserID) async throws -> MessageInfo {
        try await lookup { db in
            let members = try Row.fetchAll(
                db,
                sql: """
                    SELECT m.user_id, m.delivered_seq, m.read_seq, COALESCE(s.joined_seq, 0) FROM conversation_members m
                    LEFT JOIN member_spans s ON s.conversation_id = m.conversation_id AND s.user_id = m.user_id AND s.to_seq IS NULL
                    WHERE m.conversation_id = ? ORDER BY m.user_id
                    """,
                arguments: [conversation.rawValue])
            guard members.contains(where: { $0[0] == user.rawValue }) else { throw StoreError.conversationNotFound }
            guard
                let sender = try String.fetchOne(
                    db, sql: "SELECT sender_id FROM messages WHERE conversation_id = ? AND seq = ? AND entry IS NULL",
                    arguments: [conversation.rawValue, seq])
            else { throw StoreError.messageNotFound }
            guard sender == user.rawValue else {
                // Someone else's message: whether it exists is not told outside one's spans.
                guard try Self.inSpans(seq, of: user, in: conversation, db) else { throw StoreError.messageNotFound }
                throw StoreError.forbidden("Message info is shown for your own messages only.")
            }
            return MessageInfo(
                seq: seq,
                states: members.filter { $0[0] != user.rawValue && ($0[3] as Int64) < seq }.map { (UserID(rawValue: $0[0]), $0[1], $0[2]) })
        }
    }

    /// The stored entry (or message) of an earlier action with the same client id.
    static func earlierAction(by actor: UserID, _ clientId: ClientMessageID, _ statements: WriterStatements) throws -> Message? {
        try statements.sentBefore.firstRow(.text(actor.rawValue), .text(clientId.rawValue), read: Message.init(row:))
    }

    /// A create or add recorded under (actor, client id): its group and whom it invited.
    static func recordedAction(by actor: UserID, _ clientId: ClientMessageID, _ db: Database) throws -> RecordedGroupAction? {
        try Row.fetchOne(
            db, sql: "SELECT conversation_id, invited FROM group_actions WHERE actor_id = ? AND client_id = ?",
            arguments: [actor.rawValue, clientId.rawValue]
        ).map { RecordedGroupAction(conversation: ConversationID(rawValue: $0[0]), invited: StoredJSON.userIDs($0[1]) ?? []) }
    }

    static func record(by actor: UserID, _ clientId: ClientMessageID, in conversation: ConversationID, invited: [UserID], _ db: Database) throws {
        try db.execute(
            sql: "INSERT INTO group_actions (actor_id, client_id, conversation_id, invited) VALUES (?, ?, ?, ?)",
            arguments: [actor.rawValue, clientId.rawValue, conversation.rawValue, StoredJSON.ids(invited)])
    }

    /// Whether `seq` falls inside one of `user`'s spans of the group.
    static func inSpans(_ seq: Int64, of user: UserID, in conversation: ConversationID, _ db: Database) throws -> Bool {
        try Bool.fetchOne(
            db,
            sql: """
                SELECT 1 FROM member_spans WHERE conversation_id = ? AND user_id = ? AND from_seq <= ? AND (to_seq IS NULL OR to_seq >= ?)
                """,
            arguments: [conversation.rawValue, user.rawValue, seq, seq]) == true
    }

    /// Those of `users` with whom `user` has exchanged messages in their direct conversation.
    static func directContacts(of user: UserID, among users: [UserID], _ db: Database) throws -> Set<UserID> {
        guard !users.isEmpty else { return [] }
        let ids = users.map { ConversationID.direct(user, $0).rawValue }
        let rows = try String.fetchAll(
            db,
            sql: """
                SELECT conversation_id FROM conversation_members WHERE conversation_id IN (\(databaseQuestionMarks(count: ids.count)))
                GROUP BY conversation_id HAVING COUNT(first_sent_seq) = 2
                """,
            arguments: StatementArguments(ids))
        let formed = Set(rows)
        return Set(users.filter { formed.contains(ConversationID.direct(user, $0).rawValue) })
    }

    /// The group as the rules need it, or nil if there is no such group.
    static func groupState(_ conversation: ConversationID, _ db: Database) throws -> GroupState? {
        guard conversation.isGroup,
            let row = try Row.fetchOne(
                db, sql: "SELECT title, closed FROM conversations WHERE id = ? AND kind = 'group'", arguments: [conversation.rawValue])
        else { return nil }
        let members = try Row.fetchAll(
            db,
            sql: """
                SELECT m.user_id, m.role, COALESCE(s.joined_seq, 0) FROM conversation_members m
                LEFT JOIN member_spans s ON s.conversation_id = m.conversation_id AND s.user_id = m.user_id AND s.to_seq IS NULL
                WHERE m.conversation_id = ?
                """, arguments: [conversation.rawValue]
        ).map { GroupMemberState(userId: UserID(rawValue: $0[0]), role: MemberRole(rawValue: $0[1] ?? "") ?? .member, joinedAt: $0[2]) }
        let invitees = try String.fetchAll(db, sql: "SELECT user_id FROM invitations WHERE conversation_id = ?", arguments: [conversation.rawValue])
        return GroupState(title: row[0] ?? "", closed: row[1], members: members, invitees: Set(invitees.map(UserID.init(rawValue:))))
    }
}
