/// Migration `v20-search-short-cjk`: a CJK term of one or two characters, which no trigram index
/// can look up, is found at any age through an index of the CJK characters each message holds
/// (before, only each conversation's newest 200 messages were scanned).
///
/// Rules:
/// 1. A message's entry is the CJK code points of its folded text (`parley_cjk_chars`); a short
///    term's are looked up the same way, so a message holding the term holds all of them. The
///    search then checks the term itself in the text (``SearchStatement/cjk(_:)``).
/// 2. Characters, not SQLite's pairs (``SearchText/cjkGrams(_:)``): one `regexp_replace` and one
///    split in C, ~6 µs a message, where pairs made with SQL cost ~140 µs a message of 30
///    characters (docs/benchmarks.md "Search").
/// 3. The index holds messages that can be found and hold CJK, with the predicate the search
///    writes (``SearchStatement/holdsCJK``), so the planner can use it.
/// 4. The function is PL/pgSQL, not SQL: PostgreSQL keeps its plan for the session instead of
///    planning it for each message (``PostgresLeanBatch`` rule 3).
enum PostgresShortCJKSearch {
    /// The indexed expression, as the search must write it for the index to serve.
    static let characters = "parley_cjk_chars(parley_fold(m.text))"

    static let statements = [
        """
        CREATE FUNCTION parley_cjk_chars(p_text TEXT) RETURNS TEXT[] LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT
        AS $$ BEGIN RETURN regexp_split_to_array(regexp_replace(p_text, '\(SearchStatement.cjkClass.replacingOnce(of: "[", with: "[^"))+', '', 'g'), ''); END $$
        """,
        """
        CREATE INDEX messages_cjk_chars ON messages USING GIN (\(characters.replacing("m.text", with: "text")))
        WHERE entry IS NULL AND deleted_at IS NULL AND \(SearchStatement.holdsCJK.replacing("m.text", with: "text"))
        """,
    ]
}
