/// Migration `v19-lean-batch`: what a send batch paid besides its messages, made cheaper; the same
/// rows, locks and answers (``SendBatchConformanceTests``, ``LeanBatchTests``, the race tests).
/// Found with `pg_stat_statements` at 1,000 msgs/s, where a batch holds two or three sends
/// (docs/benchmarks.md):
/// 1. **The batch's row locks by index probes, and only for two sends or more.** The cached plans
///    of the three lock statements of `v13` scanned each table whole on the bench's small tables
///    (`id = ANY($1)`, planned for any array), 80–200 µs each. Each table's rows are now looked up
///    one by one (`LATERAL`), in the same order (``PostgresSendBatchFunction`` rule 3). A batch of
///    one takes none of its own: `parley_send` takes the same locks in the same order, as a single
///    send does.
/// 2. **The set-wise check only for a batch that could go set-wise.** A condition's subqueries are
///    all made ready before the first is evaluated, so ``PostgresSetWiseBatch`` rule 1's check cost
///    every batch; it is now behind the size test.
/// 3. **`parley_cluster_carries()` and `parley_fold(text)` in PL/pgSQL.** A SQL function that
///    cannot be inlined (one with a subquery; one calling `unaccent`, which is only stable) is
///    parsed and planned again for each statement that calls it: once per batch, and once per
///    message inserted for the search index's expression (the insert fell from ~105 to ~55 µs).
///    PL/pgSQL keeps its plans for the session. The fold gives the same text, so the index stays
///    valid.
/// 4. **Plans kept.** PostgreSQL plans a statement with parameters again at each call while a plan
///    for the arrays at hand looks cheaper than one for any array, which it always does for a few
///    elements: the set-wise events statement was planned at 755 of 761 calls (~270 µs each), and
///    the probing locks of rule 1 were at every call. The function runs with
///    `plan_cache_mode = force_generic_plan`; its statements are written so that a plan for any
///    array probes by index.
enum PostgresLeanBatch {
    static let statements = [
        """
        CREATE OR REPLACE FUNCTION parley_cluster_carries() RETURNS BOOLEAN LANGUAGE plpgsql STABLE
        AS $$ BEGIN RETURN NOT EXISTS (SELECT 1 FROM cluster_nodes WHERE NOT carries_events); END $$
        """,
        """
        CREATE OR REPLACE FUNCTION parley_fold(text) RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT
        AS $$ BEGIN RETURN lower(unaccent('unaccent'::regdictionary, normalize($1, NFKC))); END $$
        """,
        batch,
    ]

    /// The batch function of `v15`, its locks, its set-wise check and its plans revised.
    static let batch =
        PostgresSetWiseBatch.statements[0]
        .replacingOnce(from: "PERFORM 1 FROM conversations WHERE id = ANY", through: usersLockEnd, with: probedLocks)
        .replacingOnce(of: setWiseCondition, with: setWiseSizeFirst)
        .replacingOnce(of: setWiseEnd, with: "        END IF;\n" + setWiseEnd)
        .replacingOnce(of: "LANGUAGE plpgsql AS $$", with: "LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$")

    /// The last words of the users' lock of `v13` (the conversations' lock ends the same way).
    static let usersLockEnd = "UNION SELECT NULLIF(unnest(p_recipients), ''))\n        ORDER BY id COLLATE \"C\" FOR UPDATE;"

    static let probedLocks = """
        IF array_length(p_senders, 1) > 1 THEN
                    PERFORM 1 FROM (SELECT c FROM unnest(p_conversations) AS c GROUP BY c ORDER BY c COLLATE "C") t,
                        LATERAL (SELECT 1 FROM conversations WHERE id = t.c FOR UPDATE) x;
                    PERFORM 1 FROM (
                            SELECT c, s FROM unnest(p_conversations, p_senders) AS t(c, s) GROUP BY c, s ORDER BY c COLLATE "C", s COLLATE "C") t,
                        LATERAL (SELECT 1 FROM conversation_members m WHERE m.conversation_id = t.c AND m.user_id = t.s FOR UPDATE) x;
                    PERFORM 1 FROM (
                            SELECT u FROM (
                                SELECT m.user_id FROM unnest(p_conversations) AS c,
                                    LATERAL (SELECT user_id FROM conversation_members WHERE conversation_id = c OFFSET 0) m
                                UNION ALL SELECT unnest(p_senders) UNION ALL SELECT NULLIF(unnest(p_recipients), '')) AS a(u)
                            WHERE u IS NOT NULL GROUP BY u ORDER BY u COLLATE "C") t,
                        LATERAL (SELECT 1 FROM users WHERE id = t.u FOR UPDATE) x;
                END IF;
        """

    static let setWiseCondition = "IF array_length(p_senders, 1) >= \(PostgresSetWiseBatch.smallest)\n            AND NOT EXISTS"
    static let setWiseSizeFirst = "IF array_length(p_senders, 1) >= \(PostgresSetWiseBatch.smallest) THEN\n        IF NOT EXISTS"
    /// Where the set-wise block ends, before the element-by-element loop.
    static let setWiseEnd = "        END IF;\n" + PostgresSetWiseBatch.loop
}

extension String {
    /// `self` with the one occurrence of `target` replaced; a migration's text is built from a
    /// shipped one, so an anchor that moved must stop the build's tests, not change another place.
    func replacingOnce(of target: String, with replacement: String) -> String {
        let found = ranges(of: target)
        precondition(found.count == 1, "expected one occurrence of \(target.prefix(60))…, found \(found.count)")
        var revised = self
        revised.replaceSubrange(found[0], with: replacement)
        return revised
    }

    /// `self` with the one span from `start` through the first `end` after it replaced.
    func replacingOnce(from start: String, through end: String, with replacement: String) -> String {
        let starts = ranges(of: start)
        precondition(starts.count == 1, "expected one occurrence of \(start.prefix(60))…, found \(starts.count)")
        guard let last = self[starts[0].lowerBound...].ranges(of: end).first else { preconditionFailure("no \(end.prefix(60))… after \(start.prefix(60))…") }
        var revised = self
        revised.replaceSubrange(starts[0].lowerBound..<last.upperBound, with: replacement)
        return revised
    }
}
