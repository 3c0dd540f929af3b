import ParleyCore
import ParleyStore
import PostgresNIO

extension PostgresStore: MessageSearchStore {
    /// The rules of SQLite's search (docs/protocol.md "Search") over the expression indexes of
    /// migration `v7-search`: words and phrases through `to_tsvector('simple', parley_fold(text))`
    /// (PostgreSQL's parser keeps `db.json`, `PLT-3699` and e-mail addresses whole, on both sides),
    /// CJK through the trigram index (`LIKE`), shorter CJK by the same bounded scan; newest first.
    /// Every term and filter is a bound parameter: nothing a user types becomes SQL.
    public func search(_ query: SearchQuery, as user: UserID, limit: Int, offset: Int) async throws -> [SearchHit] {
        guard !query.terms.isEmpty else { return [] }
        return try await read { db in
            var statement = SearchStatement()
            let me = statement.bind(user.rawValue)
            if let name = query.fromUsername {
                guard let sender = try await db.value("SELECT id FROM users WHERE username = \(name)", as: String.self, self.logger) else { return [] }
                statement.filter("m.sender_id = \(statement.bind(sender))")
            }
            if let conversation = query.conversation { statement.filter("m.conversation_id = \(statement.bind(conversation.rawValue))") }
            if let before = query.before { statement.filter("m.created_at < \(statement.bind(before))") }
            if let after = query.after { statement.filter("m.created_at > \(statement.bind(after))") }
            let words = query.terms.filter { !$0.isCJK }.map { "phraseto_tsquery('simple'::regconfig, parley_fold(\(statement.bind($0.text))))" }
            let tsquery = words.joined(separator: " && ")
            if !words.isEmpty { statement.filter("to_tsvector('simple'::regconfig, parley_fold(m.text)) @@ (\(tsquery))") }
            let cjk = query.terms.filter(\.isCJK).map(\.text)
            for term in cjk {
                let pattern = "%" + term.replacing("\\", with: "\\\\").replacing("%", with: "\\%").replacing("_", with: "\\_") + "%"
                statement.filter("parley_fold(m.text) LIKE \(statement.bind(pattern))")
            }
            if words.isEmpty, cjk.allSatisfy({ $0.count < 3 }) {
                statement.filter("m.seq > (SELECT c.last_seq FROM conversations c WHERE c.id = m.conversation_id) - \(SearchQuery.shortCJKWindow)")
            }
            let rank = query.order == .relevance && !words.isEmpty ? "ts_rank(to_tsvector('simple'::regconfig, parley_fold(m.text)), \(tsquery)) DESC, " : ""
            let sql = """
                SELECT m.conversation_id, m.seq, m.sender_id, m.created_at, m.text FROM messages m
                WHERE m.entry IS NULL AND m.deleted_at IS NULL
                  AND m.conversation_id IN (SELECT conversation_id FROM conversation_members WHERE user_id = \(me)
                    UNION ALL SELECT conversation_id FROM former_members WHERE user_id = \(me))
                  AND (m.conversation_id NOT LIKE 'grp\\_%' OR EXISTS (SELECT 1 FROM member_spans sp
                    WHERE sp.conversation_id = m.conversation_id AND sp.user_id = \(me)
                    AND m.seq >= sp.from_seq AND (sp.to_seq IS NULL OR m.seq <= sp.to_seq)))
                  AND NOT EXISTS (SELECT 1 FROM hidden_messages h WHERE h.user_id = \(me) AND h.conversation_id = m.conversation_id AND h.seq = m.seq)
                  \(statement.conditions.map { "AND " + $0 }.joined(separator: "\n  "))
                ORDER BY \(rank)m.created_at DESC, m.seq DESC LIMIT \(max(1, limit)) OFFSET \(max(0, offset))
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
    private var count = 0

    mutating func bind(_ value: String) -> String {
        binds.append(value)
        count += 1
        return "$\(count)"
    }

    mutating func bind(_ value: Int64) -> String {
        binds.append(value)
        count += 1
        return "$\(count)"
    }

    mutating func filter(_ condition: String) { conditions.append(condition) }
}
