import GRDB
import ParleyCore

/// What someone who left a group keeps is cut by commit order, not by clock time (docs/protocol.md
/// "Groups"). Rules:
/// 1. A change to a message that a former member may still read (an edit, a reaction set, changed
///    or cleared) records the group's seq head when it is made: its *mark*. A removal's entry is the
///    group's next seq, `former_members.left_seq`. In a group, a change and a membership change never
///    interleave (one writer here; on PostgreSQL the change holds the group's row `FOR SHARE`, a
///    membership change `FOR UPDATE`), so a mark below `left_seq` was made before the departure
///    (and reached the leaver live), one at or above it after (and did not).
/// 2. A former member sees a message's text as of their departure: the first version replaced at a
///    mark at or above their `left_seq`, or the current text if none was. Versions replaced below it
///    are theirs to read; search leaves out a message edited after it (its index holds today's text).
/// 3. They see the reactions marked below their `left_seq`. A reaction replaced or cleared that a
///    former member saw (its mark below some `left_seq` of the group) is kept in `former_reactions`
///    with the mark it was replaced at; they see it while `mark < left_seq <= replaced_mark`.
/// 4. `reaction_count` counts the kept rows too: it only tells a read whether to look.
/// 5. Only groups can be left: a direct conversation's marks are 0 and nothing is kept.
enum CommitOrderMarks {
    /// Rule 1's mark for a change in `conversation`.
    static func mark(_ conversation: ConversationID, _ db: Database) throws -> Int64 {
        guard conversation.isGroup else { return 0 }
        return try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT last_seq FROM conversations WHERE id = ?"), arguments: [conversation.rawValue]) ?? 0
    }

    /// Rule 3: keeps `user`'s reaction on the message, about to be replaced or cleared at `mark`, if
    /// a former member saw it.
    static func keepReplacedReaction(_ key: StatementArguments, user: UserID, at mark: Int64, _ db: Database) throws {
        try db.cachedStatement(
            sql: """
                INSERT OR IGNORE INTO former_reactions (conversation_id, seq, user_id, emoji, created_at, mark, replaced_mark)
                SELECT r.conversation_id, r.seq, r.user_id, r.emoji, r.created_at, r.mark, ?4 FROM reactions r
                WHERE r.conversation_id = ?1 AND r.seq = ?2 AND r.user_id = ?3
                AND EXISTS (SELECT 1 FROM former_members f WHERE f.conversation_id = r.conversation_id AND f.left_seq > r.mark)
                """
        ).execute(arguments: key + [user.rawValue, mark])
    }

    /// v16: the columns and the table, then ``backfill``.
    static let migration = """
        ALTER TABLE message_versions ADD COLUMN replaced_mark INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE reactions ADD COLUMN mark INTEGER NOT NULL DEFAULT 0;
        CREATE TABLE former_reactions (
            conversation_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            user_id TEXT NOT NULL,
            emoji TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            mark INTEGER NOT NULL,
            replaced_mark INTEGER NOT NULL,
            PRIMARY KEY (conversation_id, seq, user_id, replaced_mark)
        ) WITHOUT ROWID;
        """ + backfill

    /// v22: `former_reactions` again with its key's columns first (v16 put `replaced_mark` last).
    static let keysFirst = """
        CREATE TABLE former_reactions_keyed (
            conversation_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            user_id TEXT NOT NULL,
            replaced_mark INTEGER NOT NULL,
            emoji TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            mark INTEGER NOT NULL,
            PRIMARY KEY (conversation_id, seq, user_id, replaced_mark)
        ) WITHOUT ROWID;
        INSERT INTO former_reactions_keyed (conversation_id, seq, user_id, replaced_mark, emoji, created_at, mark)
            SELECT conversation_id, seq, user_id, replaced_mark, emoji, created_at, mark FROM former_reactions;
        DROP TABLE former_reactions;
        ALTER TABLE former_reactions_keyed RENAME TO former_reactions;
        """

    /// Marks for what exists, from the times it had: a change made at or after a departure's time
    /// gets that departure's seq (the greatest such), so each former member keeps what the time cut
    /// showed them; everything else keeps 0.
    static let backfill = """
        UPDATE message_versions SET replaced_mark = COALESCE((SELECT MAX(f.left_seq) FROM former_members f
            WHERE f.conversation_id = message_versions.conversation_id AND f.left_at <= message_versions.replaced_at), 0)
        WHERE conversation_id IN (SELECT conversation_id FROM former_members);
        UPDATE reactions SET mark = COALESCE((SELECT MAX(f.left_seq) FROM former_members f
            WHERE f.conversation_id = reactions.conversation_id AND f.left_at <= reactions.created_at), 0)
        WHERE conversation_id IN (SELECT conversation_id FROM former_members);
        """
}
