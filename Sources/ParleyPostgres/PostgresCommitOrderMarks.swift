import ParleyCore
import PostgresNIO

/// A former member's view cut by commit order, not clock time: the rules of SQLite's
/// `CommitOrderMarks`. Here a group's change reads its mark (the group's `last_seq`) with the
/// group's row `FOR SHARE`, held to commit, and a membership change takes the row `FOR UPDATE` when
/// it appends its entry, so the two are ordered whatever the nodes' clocks say.
enum PostgresCommitOrderMarks {
    /// Rule 3: keeps `user`'s reaction on the message, about to be replaced or cleared at `mark`, if
    /// a former member saw it.
    static func keepReplacedReaction(
        _ conversation: ConversationID, _ seq: Int64, user: UserID, at mark: Int64, _ db: PostgresConnection, _ logger: Logger
    ) async throws {
        try await db.query(
            """
            INSERT INTO former_reactions (conversation_id, seq, user_id, emoji, created_at, mark, replaced_mark)
            SELECT r.conversation_id, r.seq, r.user_id, r.emoji, r.created_at, r.mark, \(mark) FROM reactions r
            WHERE r.conversation_id = \(conversation.rawValue) AND r.seq = \(seq) AND r.user_id = \(user.rawValue)
            AND EXISTS (SELECT 1 FROM former_members f WHERE f.conversation_id = r.conversation_id AND f.left_seq > r.mark)
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    /// v21, as SQLite's v16: the columns, the table, then ``backfill``.
    static let statements =
        [
            "ALTER TABLE message_versions ADD COLUMN replaced_mark BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE reactions ADD COLUMN mark BIGINT NOT NULL DEFAULT 0",
            """
            CREATE TABLE former_reactions (
                conversation_id TEXT NOT NULL, seq BIGINT NOT NULL, user_id TEXT NOT NULL, emoji TEXT NOT NULL, created_at BIGINT NOT NULL,
                mark BIGINT NOT NULL, replaced_mark BIGINT NOT NULL, PRIMARY KEY (conversation_id, seq, user_id, replaced_mark))
            """,
        ] + backfill

    /// Marks for what exists, from the times it had (see SQLite's).
    static let backfill = [
        """
        UPDATE message_versions v SET replaced_mark = COALESCE((SELECT MAX(f.left_seq) FROM former_members f
            WHERE f.conversation_id = v.conversation_id AND f.left_at <= v.replaced_at), 0)
        WHERE v.conversation_id IN (SELECT conversation_id FROM former_members)
        """,
        """
        UPDATE reactions r SET mark = COALESCE((SELECT MAX(f.left_seq) FROM former_members f
            WHERE f.conversation_id = r.conversation_id AND f.left_at <= r.created_at), 0)
        WHERE r.conversation_id IN (SELECT conversation_id FROM former_members)
        """,
    ]
}
