/// Migration `v22-search-word-boundaries`, and how a search asks the word index.
///
/// Rules:
/// 1. The word index holds `parley_words(text)`: the folded text (`parley_fold`) split as SQLite's
///    FTS5 splits it, into runs of letters and digits: ASCII punctuation becomes a space (so `json`
///    finds `db.json` and `doe` an e-mail address, where PostgreSQL's parser kept them whole; the
///    whole is still found, as a phrase), and so does every place where CJK meets anything but a
///    space (``SearchText/wordIndexText(_:)``: `iPhone` in `iPhoneを買った`). Final sigma is σ,
///    as Swift's case folding has it, so `ΛΟΓΟΣ` finds `λόγος`.
/// 2. ASCII text, most messages, has only case to fold (`unaccent` and NFKC change no ASCII
///    character): `lower` alone, cheaper than the fold the index took before; other text without
///    CJK costs one regular-expression test after the fold.
/// 3. A query's word is matched through the same function, from the text as the user wrote it
///    (``SearchQuery/Term/written``): folded twice, by Swift and then by SQL, `σοφίας` was `σοφιασ`
///    and found nothing. A word that is a prefix (``SearchQuery/Term/isPrefix``) has its last part
///    as `to_tsquery('''part'':*')`, quoted in SQL after the fold (`unaccent` turns `’` into `'`),
///    quotes and backslashes doubled, after the parts before it as a phrase: no text is ever
///    tsquery syntax. A shorter word and a quoted phrase are `phraseto_tsquery`.
/// 4. Safe under any `search_path`: autovacuum's `ANALYZE` and `pg_restore` evaluate the index
///    expressions with none, and a function body resolves its names when it runs. So the functions
///    name `unaccent` and each other with their schemas (read when the migration runs);
///    `parley_fold`, which named `unaccent` bare, is made again so. Before, every automatic analyze
///    of `messages` failed, and a restored database lost its word indexes.
/// 5. PL/pgSQL, not SQL: PostgreSQL keeps the plans for the session instead of planning them for
///    each message (``PostgresLeanBatch`` rule 3).
enum PostgresSearchWords {
    /// The indexed expression, as a search must write it for the index to serve.
    static let vector = "to_tsvector('simple'::regconfig, parley_words(m.text))"

    /// A word bound at `placeholder`, its last part a prefix (rule 3).
    static func prefixQuery(_ placeholder: String) -> String {
        let words = "parley_words(\(placeholder))"
        let last = "replace(replace(substring(\(words) from '(\\S+)\\s*$'), '\\', '\\\\'), '''', '''''')"
        return """
            tsquery_phrase(phraseto_tsquery('simple'::regconfig, regexp_replace(\(words), '\\S+\\s*$', '')), \
            to_tsquery('simple'::regconfig, '''' || \(last) || ''':*'))
            """
    }

    /// A quoted phrase or a short word bound at `placeholder`: its words in order, as written.
    static func phraseQuery(_ placeholder: String) -> String { "phraseto_tsquery('simple'::regconfig, parley_words(\(placeholder)))" }

    static let cjk = SearchStatement.cjkClass.dropFirst().dropLast()

    /// ASCII punctuation (for `translate`, whose target is as many spaces), `%` doubled for `format`.
    static let punctuation = "!\"#$%%&''()*+,-./:;<=>?@[\\]^_`{|}~"
    static let spaces = String(repeating: " ", count: 32)

    static let statements = [
        """
        DO $do$
        DECLARE
            ext TEXT := (SELECT quote_ident(n.nspname) FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
                WHERE e.extname = 'unaccent');
            own TEXT := quote_ident(current_schema());
        BEGIN
            EXECUTE format($f$
                CREATE OR REPLACE FUNCTION %1$s.parley_fold(text) RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT
                AS $b$ BEGIN RETURN lower(%2$s.unaccent(%3$L::regdictionary, normalize($1, NFKC))); END $b$
                $f$, own, ext, ext || '.unaccent');
            EXECUTE format($f$
                CREATE FUNCTION %1$s.parley_words(p_text TEXT) RETURNS TEXT LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT
                AS $b$
                DECLARE folded TEXT;
                BEGIN
                    IF octet_length(p_text) = length(p_text) THEN RETURN lower(translate(p_text, '\(punctuation)', '\(spaces)')); END IF;
                    folded := replace(translate(%1$s.parley_fold(p_text), '\(punctuation)', '\(spaces)'), 'ς', 'σ');
                    IF folded !~ '[\(cjk)]' THEN RETURN folded; END IF;
                    RETURN regexp_replace(folded, '([\(cjk)])(?=[^\(cjk)[:space:]])|([^\(cjk)[:space:]])(?=[\(cjk)])', '\\1\\2 ', 'g');
                END $b$
                $f$, own);
        END $do$
        """,
        "DROP INDEX messages_words",
        """
        CREATE INDEX messages_words ON messages USING GIN (\(vector.replacing("m.text", with: "text")))
        WHERE entry IS NULL AND deleted_at IS NULL
        """,
    ]
}
