/// Migration `v22-search-word-boundaries`, and how a search asks the word index.
///
/// Rules:
/// 1. The word index holds `parley_words(text)`: the folded text (`parley_fold`) with a space
///    wherever CJK meets anything but a space, as SQLite's ``SearchText/wordIndexText(_:)``. So a
///    Latin word or a number glued to CJK (`iPhoneを買った`, `iPhone을`, `mixed日本語English`) is a
///    word of its own; CJK is found by substring through its own indexes. ASCII text, most
///    messages, has only case to fold (`unaccent` and NFKC change no ASCII character, as Swift's
///    ``SearchText/fold(_:)`` says too): `lower` alone, cheaper than the fold the index took before;
///    other text without CJK costs one regular-expression test after the fold.
/// 2. A word of the query that is a prefix (``SearchQuery/Term/isPrefix``: `piz` finds pizza) is
///    `to_tsquery` of the folded word quoted as one tsquery term, with `:*`. The quoting is done in
///    SQL after the fold (`unaccent` turns `’` into `'`), doubling quotes and backslashes, so no
///    text is ever tsquery syntax. A shorter word and a quoted phrase stay `phraseto_tsquery`.
/// 3. The function is PL/pgSQL, not SQL: PostgreSQL keeps its plan for the session instead of
///    planning it for each message (``PostgresLeanBatch`` rule 3).
enum PostgresSearchWords {
    /// The indexed expression, as a search must write it for the index to serve.
    static let vector = "to_tsvector('simple'::regconfig, parley_words(m.text))"

    /// A word term bound at `placeholder`, as a prefix query (rule 2).
    static func prefixQuery(_ placeholder: String) -> String {
        "to_tsquery('simple'::regconfig, '''' || replace(replace(parley_fold(\(placeholder)), '\\', '\\\\'), '''', '''''') || ''':*')"
    }

    /// A quoted phrase or a short word bound at `placeholder`: its words in order, as written.
    static func phraseQuery(_ placeholder: String) -> String { "phraseto_tsquery('simple'::regconfig, parley_fold(\(placeholder)))" }

    static let cjk = SearchStatement.cjkClass.dropFirst().dropLast()

    static let statements = [
        """
        CREATE FUNCTION parley_words(p_text TEXT) RETURNS TEXT LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT
        AS $$
        DECLARE folded TEXT;
        BEGIN
            IF octet_length(p_text) = length(p_text) THEN RETURN lower(p_text); END IF;
            folded := parley_fold(p_text);
            IF folded !~ '[\(cjk)]' THEN RETURN folded; END IF;
            RETURN regexp_replace(folded, '([\(cjk)])(?=[^\(cjk)[:space:]])|([^\(cjk)[:space:]])(?=[\(cjk)])', '\\1\\2 ', 'g');
        END $$
        """,
        "DROP INDEX messages_words",
        """
        CREATE INDEX messages_words ON messages USING GIN (\(vector.replacing("m.text", with: "text")))
        WHERE entry IS NULL AND deleted_at IS NULL
        """,
    ]
}
