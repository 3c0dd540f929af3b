import Foundation

/// Migration `v15-set-wise-batch`: `parley_send_batch` writes a batch of ordinary sends with one
/// statement per table instead of `parley_send` once per element (eleven statements a message).
///
/// Rules (``SendBatchConformanceTests``, the conformance suite and ``SetWiseBatchTests``):
/// 1. Only a batch of at least ``smallest`` elements, every one of them ordinary, goes set-wise
///    (fewer cost more set-wise than one by one: the statements are planned for each call): a
///    conversation id (no recipient
///    to create a conversation with), a client id its sender never used (in the store or earlier in
///    the batch), and a sender who is a member and has written in that conversation before (no
///    contacts to form). Any other batch runs element by element, as before: the result is the same.
/// 2. The same as element by element: each conversation's seqs follow the elements' order from its
///    `last_seq`; each member's stream positions follow the elements' order from its `stream_head`;
///    `last_activity_at` is the conversation's last element's time; a sender's cursors end at their
///    last seq; one notification per element, in order, as `parley_send` sends it.
/// 3. Under the batch's locks (``PostgresSendBatchFunction`` rule 3), taken before the check, so
///    what rule 1 checked holds until commit; a concurrent first use of a client id is the unique
///    key's violation, and the caller runs the batch again (then element by element).
///
/// The lookups by element are per-element index probes (`LATERAL … LIMIT 1`, a correlated
/// subquery, `OFFSET 0`): a cached plan assumes a hundred elements, for which reading a whole
/// table of a few thousand rows looks cheaper than a hundred probes, and a batch is mostly one.
///
/// Direct conversations have exactly two members, so an element's members and positions are the
/// pair at `2i - 1` and `2i` of two flat arrays, ordered as `parley_send` orders them (`COLLATE "C"`).
enum PostgresSetWiseBatch {
    /// Where the element-by-element loop starts in the batch function.
    static let loop = "        FOR v_index IN 1 .. coalesce(array_length(p_senders, 1), 0) LOOP\n"

    /// The fewest elements written set-wise: measured, one element costs PostgreSQL ~170 µs more
    /// set-wise than through `parley_send`, and 48 cost ~100 µs less each (docs/benchmarks.md).
    static let smallest = 4

    static let statements = [
        PostgresCarriedEvents.batch.replacingOccurrences(of: loop, with: setWise + loop)
    ]

    static let setWise = """
                -- Rule 1: an ordinary batch is written set-wise (``PostgresSetWiseBatch``).
                IF array_length(p_senders, 1) >= \(smallest)
                    AND NOT EXISTS (SELECT 1 FROM unnest(p_recipients) AS r WHERE r <> '')
                    AND (SELECT count(DISTINCT (s, c)) FROM unnest(p_senders, p_client_ids) AS t(s, c)) = array_length(p_senders, 1)
                    AND NOT EXISTS (
                        SELECT 1 FROM unnest(p_senders, p_client_ids) AS t(s, c),
                            LATERAL (SELECT 1 FROM messages m WHERE m.sender_id = t.s AND m.client_id = t.c LIMIT 1) AS used)
                    AND NOT EXISTS (
                        SELECT 1 FROM unnest(p_conversations, p_senders) AS t(c, s)
                        WHERE (SELECT m.first_sent_seq FROM conversation_members m WHERE m.conversation_id = t.c AND m.user_id = t.s) IS NULL)
                THEN
                    DECLARE
                        v_seqs BIGINT[];
                        v_members TEXT[];
                        v_positions BIGINT[];
                        v_carry BOOLEAN := parley_cluster_carries();
                    BEGIN
                        WITH e AS (
                            SELECT t.c, t.now, t.i, row_number() OVER w AS k, count(*) OVER (PARTITION BY t.c) AS n
                            FROM unnest(p_conversations, p_nows) WITH ORDINALITY AS t(c, now, i)
                            WINDOW w AS (PARTITION BY t.c ORDER BY t.i)),
                        moved AS (
                            UPDATE conversations cv SET last_seq = cv.last_seq + e.n, last_activity_at = e.now
                            FROM e WHERE cv.id = e.c AND e.k = e.n
                            RETURNING cv.id, cv.last_seq - e.n AS base)
                        SELECT array_agg(moved.base + e.k ORDER BY e.i) INTO v_seqs FROM e JOIN moved ON moved.id = e.c;
                        INSERT INTO messages (id, conversation_id, seq, sender_id, client_id, text, created_at)
                        SELECT * FROM unnest(p_message_ids, p_conversations, v_seqs, p_senders, p_client_ids, p_texts, p_nows);
                        UPDATE conversation_members m SET delivered_seq = x.q, read_seq = x.q
                        FROM (SELECT c, s, max(q) AS q FROM unnest(p_conversations, p_senders, v_seqs) AS t(c, s, q) GROUP BY c, s) x
                        WHERE m.conversation_id = x.c AND m.user_id = x.s;
                        WITH ev AS (
                            SELECT t.i, m.user_id, t.c, t.q, t.now, row_number() OVER w AS k, count(*) OVER (PARTITION BY m.user_id) AS n
                            FROM unnest(p_conversations, v_seqs, p_nows) WITH ORDINALITY AS t(c, q, now, i),
                                LATERAL (SELECT user_id FROM conversation_members WHERE conversation_id = t.c OFFSET 0) AS m
                            WINDOW w AS (PARTITION BY m.user_id ORDER BY t.i)),
                        heads AS (
                            UPDATE users u SET stream_head = u.stream_head + ev.n FROM ev WHERE u.id = ev.user_id AND ev.k = ev.n
                            RETURNING u.id, u.stream_head - ev.n AS base),
                        placed AS (SELECT ev.*, heads.base + ev.k AS pos FROM ev JOIN heads ON heads.id = ev.user_id),
                        written AS (
                            INSERT INTO events (user_id, pos, kind, conversation_id, seq, created_at)
                            SELECT user_id, pos, 1, c, q, now FROM placed)
                        SELECT array_agg(user_id ORDER BY i, user_id COLLATE "C"), array_agg(pos ORDER BY i, user_id COLLATE "C")
                        INTO v_members, v_positions FROM placed;
                        -- pg_notify is volatile: evaluated after the sort, so in element order.
                        PERFORM pg_notify('parley_cluster', CASE WHEN v_carry AND octet_length(x.e) <= \(ClusterWire.maxBytes) THEN x.e ELSE x.s END)
                        FROM (
                            SELECT t.i, 'e ' || p_node || ' ' || json_build_object(
                                    'event', json_build_object('message', json_build_object('id', t.id, 'conversationId', t.c, 'seq', t.q,
                                        'senderId', t.s, 'clientId', t.k, 'text', t.txt, 'createdAt', t.now)),
                                    'to', json_build_object(v_members[2 * t.i - 1], v_positions[2 * t.i - 1], v_members[2 * t.i], v_positions[2 * t.i])
                                )::TEXT AS e,
                                's ' || p_node || ' ' || v_members[2 * t.i - 1] || ':' || v_positions[2 * t.i - 1]
                                    || ' ' || v_members[2 * t.i] || ':' || v_positions[2 * t.i] AS s
                            FROM unnest(p_message_ids, p_conversations, v_seqs, p_senders, p_client_ids, p_texts, p_nows)
                                WITH ORDINALITY AS t(id, c, q, s, k, txt, now, i)) x
                        ORDER BY x.i;
                        RETURN QUERY SELECT t.i::INT, NULL::TEXT, false, t.id, t.q, t.now, t.txt, t.c, false,
                            ARRAY[v_members[2 * t.i - 1], v_members[2 * t.i]], ARRAY[v_positions[2 * t.i - 1], v_positions[2 * t.i]],
                            false, '{}'::BIGINT[]
                        FROM unnest(p_message_ids, v_seqs, p_nows, p_texts, p_conversations) WITH ORDINALITY AS t(id, q, now, txt, c, i)
                        ORDER BY t.i;
                        RETURN;
                    END;
                END IF;

        """
}
