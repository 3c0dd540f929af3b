import GRDB
import ParleyCore
import ParleyStore

extension SQLiteStore: MessageSearchStore {
    /// ``SearchIndexPurge``'s step, in a write transaction of its own.
    public func purgeDeletedSearchTerms() async throws -> Bool {
        try await write { try SearchIndexPurge.step($0) }
    }

    /// Rules (docs/protocol.md "Search"): only what `user` can read (a member's conversations,
    /// inside their spans in a group; never an entry, a deleted message, one they hid, or one edited
    /// after they left the group: its new text is not theirs to see); words (from three characters, prefixes too) and
    /// phrases through the word index, CJK of three or more characters through the trigram index,
    /// shorter CJK through the grams index; newest first by rowid (the order messages were stored), or by bm25.
    public func search(_ query: SearchQuery, as user: UserID, limit: Int, offset: Int) async throws -> [SearchHit] {
        guard !query.terms.isEmpty || query.hasFile else { return [] }
        return try await pool.read { db in
            var plan = SearchPlan(user: user)
            if let name = query.fromUsername {
                guard let sender = try String.fetchOne(db, sql: "SELECT id FROM users WHERE username = ?", arguments: [name]) else { return [] }
                plan.filter("m.sender_id = ?", sender)
            }
            if let conversation = query.conversation { plan.filter("m.conversation_id = ?", conversation.rawValue) }
            if let before = query.before { plan.filter("m.created_at < ?", before) }
            if let after = query.after { plan.filter("m.created_at > ?", after) }
            if query.hasFile { plan.filter("m.attachments IS NOT NULL") }
            if let position = query.olderThan { try plan.olderThan(position, db) }
            // A word's last token may be a prefix (`piz` finds pizza: Term.isPrefix), answered by the table's index of prefixes.
            let words = query.terms.filter { !$0.isCJK }.map { "\"" + $0.tokens.joined(separator: " ") + ($0.isPrefix ? "\"*" : "\"") }
            let cjk = query.terms.filter(\.isCJK).map(\.text)
            let sql: String
            if !words.isEmpty {
                for term in cjk { plan.cjk(term) }
                sql = plan.sql(from: "message_search s JOIN messages m ON m.rowid = s.rowid", match: "message_search", query: query.order)
                plan.arguments = [words.joined(separator: " AND ")] + plan.arguments
            } else if let long = cjk.first(where: { !SearchText.isShortCJK($0) }) {
                for term in cjk where term != long { plan.cjk(term) }
                sql = plan.sql(from: "message_search_cjk s JOIN messages m ON m.rowid = s.rowid", match: "message_search_cjk", query: query.order)
                plan.arguments = [SearchPlan.quoted(long)] + plan.arguments
            } else if let short = cjk.first {
                // Every term is one or two characters: looked up among the messages' CJK grams.
                for term in cjk where term != short { plan.cjk(term) }
                plan.foundAsWritten(short)
                sql = plan.sql(from: "message_search_grams s JOIN messages m ON m.rowid = s.rowid", match: "message_search_grams", query: query.order)
                plan.arguments = [SearchPlan.quoted(short)] + plan.arguments
            } else {
                // `has:file` alone: every message with files the user can read, newest first.
                sql = plan.sql(from: "messages m", match: nil, query: .newest)
            }
            let rows = try Row.fetchAll(db, sql: sql + " LIMIT ? OFFSET ?", arguments: StatementArguments(plan.arguments + [limit, offset]))
            return rows.map { row in
                let text: String = row[4]
                return SearchHit(
                    conversationId: ConversationID(rawValue: row[0]), seq: row[1], senderId: UserID(rawValue: row[2]),
                    createdAt: Timestamp(milliseconds: row[3]), text: text, matches: SearchText.matches(of: query.terms, in: text))
            }
        }
    }
}

/// The parts of one search's SQL, in the order their arguments bind.
struct SearchPlan {
    let user: UserID
    var conditions: [String] = []
    var arguments: [any DatabaseValueConvertible & Sendable] = []

    /// The page after a hit: stored before it (newest first is storage order here).
    var rowidBelow: Int64?

    init(user: UserID) { self.user = user }

    /// The page after `position`: before that message in storage order when the user could read
    /// it (a conversation of theirs, inside their span in a group); else by the key PostgreSQL
    /// pages by, (time, seq, conversation). So a cursor naming a message the user never saw (one
    /// sent after they left a group, before they joined, or someone else's) pages exactly as one
    /// naming no message does: it tells nothing of it.
    mutating func olderThan(_ position: SearchPosition, _ db: Database) throws {
        rowidBelow = try Int64.fetchOne(
            db, sql: "SELECT m.rowid FROM messages m WHERE m.conversation_id = ? AND m.seq = ? AND \(inConversationAndSpan)",
            arguments: [position.conversation.rawValue, position.seq])
        if rowidBelow == nil {
            filter("(m.created_at, m.seq, m.conversation_id) < (?, ?, ?)", position.createdAt, position.seq, position.conversation.rawValue)
        }
    }

    mutating func filter(_ condition: String, _ values: any DatabaseValueConvertible & Sendable...) {
        conditions.append(condition)
        arguments += values
    }

    /// A CJK term: through the trigram index from three characters, else through the grams index
    /// (``SearchText/cjkGrams(_:)``), and checked in the text.
    mutating func cjk(_ term: String) {
        if !SearchText.isShortCJK(term) {
            filter("m.rowid IN (SELECT rowid FROM message_search_cjk WHERE message_search_cjk MATCH ?)", Self.quoted(term))
        } else {
            filter("m.rowid IN (SELECT rowid FROM message_search_grams WHERE message_search_grams MATCH ?)", Self.quoted(term))
            foundAsWritten(term)
        }
    }

    /// A short CJK term is in the message's text (folded as the term was: ｶﾀ is カタ there), not
    /// only among its grams' words (the `ascii` tokenizer splits a pair at ASCII punctuation).
    /// CJK keeps its characters through the fold but for the few NFKC changes, so a term of nothing
    /// else is looked for in the raw text, and in the folded text only of messages holding one of
    /// those (`parley_width_forms`, a byte scan in C).
    mutating func foundAsWritten(_ term: String) {
        if SearchText.isOnlyCJK(term) {
            filter("(instr(m.text, ?) > 0 OR (parley_width_forms(m.text) AND instr(parley_fold(m.text), ?) > 0))", term, term)
        } else {
            filter("instr(parley_fold(m.text), ?) > 0", term)
        }
    }

    /// An FTS5 string: the term as one phrase, its quotes doubled (never query syntax).
    static func quoted(_ term: String) -> String { "\"" + term.replacing("\"", with: "\"\"") + "\"" }

    /// Message `m` is in a conversation of the user's, inside one of their spans in a group: what
    /// they could ever read (the search's rules add the rest; a cursor's lookup needs only this).
    var inConversationAndSpan: String {
        """
        m.conversation_id IN (SELECT conversation_id FROM conversation_members WHERE user_id = '\(user.rawValue)'
            UNION ALL SELECT conversation_id FROM former_members WHERE user_id = '\(user.rawValue)')
        AND (substr(m.conversation_id, 1, 4) <> 'grp_' OR EXISTS (SELECT 1 FROM member_spans sp
            WHERE sp.conversation_id = m.conversation_id AND sp.user_id = '\(user.rawValue)'
            AND m.seq >= sp.from_seq AND (sp.to_seq IS NULL OR m.seq <= sp.to_seq)))
        """
    }

    /// The statement: matches (if any), what the user can read, the filters, the order.
    func sql(from source: String, match table: String?, query order: SearchOrder) -> String {
        let visible = """
            \(inConversationAndSpan)
            AND m.entry IS NULL AND m.deleted_at IS NULL
            AND NOT EXISTS (SELECT 1 FROM hidden_messages h WHERE h.user_id = '\(user.rawValue)'
                AND h.conversation_id = m.conversation_id AND h.seq = m.seq)
            AND (m.edited_at IS NULL OR NOT EXISTS (SELECT 1 FROM former_members f JOIN message_versions v
                ON v.conversation_id = f.conversation_id AND v.seq = m.seq AND v.replaced_mark >= f.left_seq
                WHERE f.user_id = '\(user.rawValue)' AND f.conversation_id = m.conversation_id))
            """
        let match = table.map { "\($0) MATCH ? AND " } ?? ""
        // On the index's own rowid, which it can seek (an integer, never user text).
        let below = rowidBelow.map { [table != nil ? "s.rowid < \($0)" : "m.rowid < \($0)"] } ?? []
        let ordering = table != nil && order == .relevance ? "s.rank, s.rowid DESC" : table != nil ? "s.rowid DESC" : "m.rowid DESC"
        return """
            SELECT m.conversation_id, m.seq, m.sender_id, m.created_at, m.text FROM \(source)
            WHERE \(match)\(([visible] + conditions + below).joined(separator: " AND ")) ORDER BY \(ordering)
            """
    }
}
