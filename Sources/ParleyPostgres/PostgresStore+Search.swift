import ParleyCore
import ParleyStore
import PostgresNIO

extension PostgresStore: MessageSearchStore {
    /// Nothing to step through: the GIN entries of a deleted message's old row version go when
    /// (auto)vacuum removes that version (docs/security.md).
    public func purgeDeletedSearchTerms() async throws -> Bool { false }

    /// The rules of SQLite's search (docs/protocol.md "Search"): words (from three characters,
    /// prefixes too) and phrases through `to_tsvector('simple', parley_words(text))`, split into
    /// runs of letters and digits as FTS5 splits them (``PostgresSearchWords``); a CJK term of nothing but
    /// CJK in the raw text (folding leaves CJK as written), from three characters through the
    /// trigram index of messages holding CJK (`v8-search-cjk`), shorter ones through the index of
    /// their CJK characters (``PostgresShortCJKSearch``); newest first, by
    /// (created_at, seq, conversation), the key a ``SearchPosition`` pages by.
    ///
    /// The user's conversations are read first and bound as an array: with the list in hand the
    /// planner intersects the text index with the messages' key (a bitmap AND) instead of reading
    /// every match in every conversation and throwing most away (a word in 3 % of the messages:
    /// 264 ms → 12 ms; docs/benchmarks.md "Search").
    /// Every term and filter is a bound parameter: nothing a user types becomes SQL.
    public func search(_ query: SearchQuery, as user: UserID, limit: Int, offset: Int) async throws -> [SearchHit] {
        guard !query.terms.isEmpty || query.hasFile else { return [] }
        return try await read { db in
            var conversations = try await db.values(
                """
                SELECT conversation_id FROM conversation_members WHERE user_id = \(user.rawValue)
                UNION SELECT conversation_id FROM former_members WHERE user_id = \(user.rawValue)
                """, as: String.self, self.logger)
            if let only = query.conversation { conversations = conversations.filter { $0 == only.rawValue } }
            guard !conversations.isEmpty else { return [] }
            var statement = SearchStatement()
            let me = statement.bind(user.rawValue)
            let mine = statement.bind(conversations)
            if let name = query.fromUsername {
                guard let sender = try await db.value("SELECT id FROM users WHERE username = \(name)", as: String.self, self.logger) else { return [] }
                statement.filter("m.sender_id = \(statement.bind(sender))")
            }
            if let before = query.before { statement.filter("m.created_at < \(statement.bind(before))") }
            if let after = query.after { statement.filter("m.created_at > \(statement.bind(after))") }
            if query.hasFile { statement.filter("m.attachments IS NOT NULL") }
            if let position = query.olderThan {
                let key = (statement.bind(position.createdAt), statement.bind(position.seq), statement.bind(position.conversation.rawValue))
                statement.filter("(m.created_at, m.seq, m.conversation_id) < (\(key.0), \(key.1), \(key.2))")
            }
            let words = query.terms.filter { !$0.isCJK }.map { term in
                let text = statement.bind(term.written)
                return term.isPrefix ? PostgresSearchWords.prefixQuery(text) : PostgresSearchWords.phraseQuery(text)
            }
            let tsquery = words.joined(separator: " && ")
            if !words.isEmpty { statement.filter("\(PostgresSearchWords.vector) @@ (\(tsquery))") }
            let cjk = query.terms.filter(\.isCJK).map(\.text)
            for term in cjk { statement.cjk(term) }
            // CJK alone is read through an index of messages holding CJK; `has:file` alone reads every message of mine with files.
            if words.isEmpty, !cjk.isEmpty { statement.filter(SearchStatement.holdsCJK) }
            let visible = """
                m.entry IS NULL AND m.deleted_at IS NULL
                  AND (m.conversation_id NOT LIKE 'grp\\_%' OR EXISTS (SELECT 1 FROM member_spans sp
                    WHERE sp.conversation_id = m.conversation_id AND sp.user_id = \(me)
                    AND m.seq >= sp.from_seq AND (sp.to_seq IS NULL OR m.seq <= sp.to_seq)))
                  AND NOT EXISTS (SELECT 1 FROM hidden_messages h WHERE h.user_id = \(me) AND h.conversation_id = m.conversation_id AND h.seq = m.seq)
                  AND (m.edited_at IS NULL OR NOT EXISTS (SELECT 1 FROM former_members f JOIN message_versions v
                    ON v.conversation_id = f.conversation_id AND v.seq = m.seq AND v.replaced_mark >= f.left_seq
                    WHERE f.user_id = \(me) AND f.conversation_id = m.conversation_id))
                  \(statement.conditions.map { "AND " + $0 }.joined(separator: "\n  "))
                """
            let source = "messages m WHERE m.conversation_id = ANY(\(mine)) AND \(visible)"
            let rank = query.order == .relevance && !words.isEmpty ? "ts_rank(\(PostgresSearchWords.vector), \(tsquery), 1) DESC, " : ""
            let sql = """
                SELECT m.conversation_id, m.seq, m.sender_id, m.created_at, m.text FROM \(source)
                ORDER BY \(rank)m.created_at DESC, m.seq DESC, m.conversation_id DESC LIMIT \(max(1, limit)) OFFSET \(max(0, offset))
                """
            return try await db.rows(PostgresQuery(unsafeSQL: sql, binds: statement.binds), self.logger).map { row in
                let (conversation, seq, senderId, created, text) = try row.decode((String, Int64, String, Int64, String).self)
                return SearchHit(
                    conversationId: ConversationID(rawValue: conversation), seq: seq, senderId: UserID(rawValue: senderId),
                    createdAt: Timestamp(milliseconds: created), text: text, matches: SearchText.matches(of: query.terms, in: text))
            }
        }
    }
}

/// A search statement's bound values and conditions; ``bind(_:)`` answers the placeholder to write.
struct SearchStatement {
    var binds = PostgresBindings()
    var conditions: [String] = []

    mutating func bind(_ value: String) -> String {
        binds.append(value)
        return "$\(binds.count)"
    }

    mutating func bind(_ value: Int64) -> String {
        binds.append(value)
        return "$\(binds.count)"
    }

    mutating func bind(_ values: [String]) -> String {
        binds.append(values)
        return "$\(binds.count)::text[]"
    }

    mutating func filter(_ condition: String) { conditions.append(condition) }

    /// The predicate of the trigram index `messages_cjk` (migration `v17-search-widths`): said in a
    /// query the same way, so the planner may use that index. The ranges are ``SearchText``'s CJK, in
    /// the text with its widths folded (half-width katakana is CJK then).
    static let holdsCJK = "parley_width(m.text) ~ '\(cjkClass)'"
    static let cjkClass = "[\\u1100-\\u11ff\\u3040-\\u30ff\\u3130-\\u318f\\u3400-\\u4dbf\\u4e00-\\u9fff\\uac00-\\ud7af\\uf900-\\ufaff\\U00020000-\\U0002fa1f]"

    /// `text` for a `LIKE` pattern: its backslashes, `%` and `_` taken literally.
    static func escapedForLike(_ text: String) -> String {
        text.replacing("\\", with: "\\\\").replacing("%", with: "\\%").replacing("_", with: "\\_")
    }

    /// A CJK term, found as a substring: in the text with only its widths folded when it is nothing
    /// but CJK (folding leaves CJK as written, and the trigram index holds that text), else in the
    /// folded text. Both sides go through the same SQL fold.
    mutating func cjk(_ term: String) {
        let pattern = "%" + Self.escapedForLike(term) + "%"
        let pure = SearchText.isOnlyCJK(term)
        filter(pure ? "parley_width(m.text) LIKE parley_width(\(bind(pattern)))" : "parley_fold(m.text) LIKE parley_fold(\(bind(pattern)))")
        // Too short for trigrams: its CJK characters among the message's (the index `messages_cjk_chars`).
        if SearchText.isShortCJK(term) {
            let characters = PostgresShortCJKSearch.characters
            filter("\(characters) @> \(characters.replacing("m.text", with: bind(term)))")
        }
        // A mixed term's CJK runs are in that text as written: matched there too, they let the
        // trigram index of CJK messages pick the candidates the folded match then checks.
        if !pure {
            for run in term.split(whereSeparator: { !SearchText.isOnlyCJK(String($0)) || $0.isWhitespace }) where run.count >= 3 {
                filter("parley_width(m.text) LIKE parley_width(\(bind("%" + Self.escapedForLike(String(run)) + "%")))")
            }
        }
    }
}
