/// Many plain sends in one statement of one transaction (``PostgresSendQueue``): one round trip,
/// one commit and one WAL flush for the batch instead of one each.
///
/// Rules:
/// 1. Each element is exactly a `parley_send` call (``PostgresSendFunction``), in the order given:
///    a later element sees what an earlier one wrote (the same client id twice is a duplicate).
///    (Since migration `v15`, a batch of four or more ordinary sends is written set-wise with the
///    same result: ``PostgresSetWiseBatch``.)
/// 2. An element that breaks a send rule (`PY001`–`PY004`) rolls the whole batch back (one
///    subtransaction around it all) and is named: the last row is its index and SQLSTATE, and the
///    rows before it describe nothing written. The caller refuses that send and runs the rest again
///    (``PostgresStore/writeBatch(_:)``): a refusal costs its batch one more transaction, not one per
///    send. (A block with an exception handler per element was measured first: every element then
///    wrote in a subtransaction of its own, and every row the batch had locked and an element then
///    updated became a MultiXact, `GetMultiXactIdMembers` PostgreSQL's top function.)
/// 3. The row locks that order seqs and stream positions are taken first, once for the batch and
///    in one order: the batch's conversations, then the senders' member rows, then every user
///    whose stream it appends to, each by id (`COLLATE "C"`). A single send takes them in the same
///    order (its conversation, its member row, its members), and a receipt takes a member row before
///    users; so two writers never wait for each other in a circle.
///    (Since migration `v19`, by index probe and only for a batch of two or more:
///    ``PostgresLeanBatch``.)
enum PostgresSendBatchFunction {
    static let create = #"""
        CREATE FUNCTION parley_send_batch(
            p_senders TEXT[], p_client_ids TEXT[], p_conversations TEXT[], p_recipients TEXT[], p_texts TEXT[], p_nows BIGINT[],
            p_message_ids TEXT[], p_node TEXT)
        RETURNS TABLE (
            r_index INT, r_error TEXT, r_duplicate BOOLEAN, r_message_id TEXT, r_seq BIGINT, r_created_at BIGINT, r_text TEXT,
            r_conversation TEXT, r_contacts_formed BOOLEAN, r_members TEXT[], r_positions BIGINT[], r_created BOOLEAN,
            r_creation_positions BIGINT[])
        LANGUAGE plpgsql AS $$
        DECLARE
            v_current INT := 0;
        BEGIN
            BEGIN
                -- Rule 3: the locks, once and in order (inside rule 2's subtransaction, as the writes
                -- are: a row locked and updated by one subtransaction needs no MultiXact).
                PERFORM 1 FROM conversations WHERE id = ANY(p_conversations) ORDER BY id COLLATE "C" FOR UPDATE;
                PERFORM 1 FROM conversation_members m
                WHERE (m.conversation_id, m.user_id) IN (SELECT c, s FROM unnest(p_conversations, p_senders) AS t(c, s))
                ORDER BY m.conversation_id COLLATE "C", m.user_id COLLATE "C" FOR UPDATE;
                PERFORM 1 FROM users WHERE id IN (
                    SELECT user_id FROM conversation_members WHERE conversation_id = ANY(p_conversations)
                    UNION SELECT unnest(p_senders) UNION SELECT NULLIF(unnest(p_recipients), ''))
                ORDER BY id COLLATE "C" FOR UPDATE;
                FOR v_index IN 1 .. coalesce(array_length(p_senders, 1), 0) LOOP
                    v_current := v_index;
                    RETURN QUERY SELECT v_index, NULL::TEXT, s.* FROM parley_send(
                        p_senders[v_index], p_client_ids[v_index], p_conversations[v_index], NULLIF(p_recipients[v_index], ''),
                        p_texts[v_index], p_nows[v_index], p_message_ids[v_index], p_node) AS s;
                END LOOP;
            EXCEPTION WHEN SQLSTATE 'PY001' OR SQLSTATE 'PY002' OR SQLSTATE 'PY003' OR SQLSTATE 'PY004' THEN
                -- Rule 2: nothing of the batch stays; the caller learns which send broke which rule.
                RETURN QUERY SELECT v_current, SQLSTATE, NULL::BOOLEAN, NULL::TEXT, NULL::BIGINT, NULL::BIGINT, NULL::TEXT, NULL::TEXT,
                    NULL::BOOLEAN, NULL::TEXT[], NULL::BIGINT[], NULL::BOOLEAN, NULL::BIGINT[];
            END;
        END
        $$
        """#
}
