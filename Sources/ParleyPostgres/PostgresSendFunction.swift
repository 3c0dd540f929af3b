/// The send transaction as one server-side function, so a send is one statement (called between
/// `BEGIN` and `COMMIT`, whose answer means committed: ``PostgresStore``) instead of a dozen. Its rules are those of
/// ``PostgresStore/send(_:now:)``; rule breaks raise Parley's own SQLSTATEs (class `PY`).
/// Direct conversations only have two members, so the `NOTIFY` payload stays far under its cap.
enum PostgresSendFunction {
    static let clientIdConflict = "PY001", invalidRecipient = "PY002", userNotFound = "PY003", conversationNotFound = "PY004"
    static let cursorBeyondEnd = "PY005"

    static let create = #"""
        CREATE FUNCTION parley_send(
            p_sender TEXT, p_client_id TEXT, p_conversation TEXT, p_recipient TEXT, p_text TEXT, p_now BIGINT,
            p_message_id TEXT, p_node TEXT)
        RETURNS TABLE (
            r_duplicate BOOLEAN, r_message_id TEXT, r_seq BIGINT, r_created_at BIGINT, r_text TEXT, r_conversation TEXT,
            r_contacts_formed BOOLEAN, r_members TEXT[], r_positions BIGINT[], r_created BOOLEAN, r_creation_positions BIGINT[])
        LANGUAGE plpgsql AS $$
        #variable_conflict use_column
        DECLARE
            v_existing RECORD;
            v_seq BIGINT;
            v_first BIGINT;
            v_members TEXT[];
            v_positions BIGINT[] := '{}';
            v_creation BIGINT[] := '{}';
            v_created BOOLEAN := false;
            v_formed BOOLEAN := false;
            v_member TEXT;
            v_pos BIGINT;
            v_rows INT;
        BEGIN
            -- 1. Idempotency: (sender, client id) seen before returns the original.
            SELECT m.id, m.conversation_id, m.seq, m.created_at, m.text INTO v_existing
            FROM messages m WHERE m.sender_id = p_sender AND m.client_id = p_client_id;
            IF FOUND THEN
                IF v_existing.conversation_id <> p_conversation THEN
                    RAISE EXCEPTION 'client id used for another conversation' USING ERRCODE = 'PY001';
                END IF;
                RETURN QUERY SELECT true, v_existing.id, v_existing.seq, v_existing.created_at, v_existing.text,
                    v_existing.conversation_id, false, NULL::TEXT[], NULL::BIGINT[], false, NULL::BIGINT[];
                RETURN;
            END IF;
            -- 2. A user target creates the direct conversation (events for both, in id order).
            IF p_recipient IS NOT NULL THEN
                IF p_recipient = p_sender THEN RAISE EXCEPTION 'invalid recipient' USING ERRCODE = 'PY002'; END IF;
                PERFORM 1 FROM users WHERE id = p_recipient;
                IF NOT FOUND THEN RAISE EXCEPTION 'user not found' USING ERRCODE = 'PY003'; END IF;
                INSERT INTO conversations (id, kind, created_at, last_seq, last_activity_at)
                VALUES (p_conversation, 'direct', p_now, 0, p_now) ON CONFLICT (id) DO NOTHING;
                GET DIAGNOSTICS v_rows = ROW_COUNT;
                IF v_rows = 1 THEN
                    v_created := true;
                    FOR v_member IN SELECT u FROM unnest(ARRAY[p_sender, p_recipient]) AS u ORDER BY u COLLATE "C" LOOP
                        INSERT INTO conversation_members (conversation_id, user_id, joined_at) VALUES (p_conversation, v_member, p_now);
                        UPDATE users SET stream_head = stream_head + 1 WHERE id = v_member RETURNING stream_head INTO v_pos;
                        INSERT INTO events (user_id, pos, kind, conversation_id, created_at)
                        VALUES (v_member, v_pos, 3, p_conversation, p_now);
                        v_creation := v_creation || v_pos;
                    END LOOP;
                END IF;
            END IF;
            -- 3. The next seq under the conversation row's lock; the sender must be a member.
            UPDATE conversations SET last_seq = last_seq + 1, last_activity_at = p_now
            WHERE id = p_conversation
              AND EXISTS (SELECT 1 FROM conversation_members WHERE conversation_id = p_conversation AND user_id = p_sender)
            RETURNING last_seq INTO v_seq;
            IF v_seq IS NULL THEN RAISE EXCEPTION 'conversation not found' USING ERRCODE = 'PY004'; END IF;
            INSERT INTO messages (id, conversation_id, seq, sender_id, client_id, text, created_at)
            VALUES (p_message_id, p_conversation, v_seq, p_sender, p_client_id, p_text, p_now);
            -- 4. The sender's cursors; 6. contacts form with the last member's first message.
            UPDATE conversation_members SET delivered_seq = v_seq, read_seq = v_seq, first_sent_seq = COALESCE(first_sent_seq, v_seq)
            WHERE conversation_id = p_conversation AND user_id = p_sender RETURNING first_sent_seq INTO v_first;
            IF v_first = v_seq THEN
                v_formed := NOT EXISTS (
                    SELECT 1 FROM conversation_members WHERE conversation_id = p_conversation AND first_sent_seq IS NULL);
            END IF;
            -- 5. A message event for every member, user rows locked in id order.
            SELECT array_agg(user_id ORDER BY user_id COLLATE "C") INTO v_members
            FROM conversation_members WHERE conversation_id = p_conversation;
            FOREACH v_member IN ARRAY v_members LOOP
                UPDATE users SET stream_head = stream_head + 1 WHERE id = v_member RETURNING stream_head INTO v_pos;
                INSERT INTO events (user_id, pos, kind, conversation_id, seq, created_at)
                VALUES (v_member, v_pos, 1, p_conversation, v_seq, p_now);
                v_positions := v_positions || v_pos;
            END LOOP;
            -- Every node learns, on commit only, whose streams moved.
            PERFORM pg_notify('parley_cluster',
                's ' || p_node || (SELECT string_agg(' ' || m || ':' || p, '') FROM unnest(v_members, v_positions) AS t(m, p)));
            RETURN QUERY SELECT false, p_message_id, v_seq, p_now, p_text, p_conversation, v_formed, v_members, v_positions,
                v_created, v_creation;
        END
        $$
        """#
}

/// A receipt as one server-side function (one round trip), with the rules of
/// ``PostgresStore/updateReceipt(in:member:deliveredSeq:readSeq:now:)``: the member row is locked
/// (`FOR UPDATE`), cursors only move forward, read implies delivered, a cursor past the last seq is
/// refused (`PY005`), and only a move appends receipt events (and notifies).
enum PostgresReceiptFunction {
    static let create = #"""
        CREATE FUNCTION parley_receipt(
            p_conversation TEXT, p_member TEXT, p_delivered BIGINT, p_read BIGINT, p_now BIGINT, p_node TEXT)
        RETURNS TABLE (r_delivered BIGINT, r_read BIGINT, r_moved BOOLEAN, r_members TEXT[], r_positions BIGINT[])
        LANGUAGE plpgsql AS $$
        #variable_conflict use_column
        DECLARE
            v_old_delivered BIGINT;
            v_old_read BIGINT;
            v_last BIGINT;
            v_delivered BIGINT;
            v_read BIGINT;
            v_members TEXT[];
            v_positions BIGINT[] := '{}';
            v_member TEXT;
            v_pos BIGINT;
        BEGIN
            SELECT m.delivered_seq, m.read_seq, c.last_seq INTO v_old_delivered, v_old_read, v_last
            FROM conversation_members m JOIN conversations c ON c.id = m.conversation_id
            WHERE m.conversation_id = p_conversation AND m.user_id = p_member FOR UPDATE OF m;
            IF NOT FOUND THEN RAISE EXCEPTION 'conversation not found' USING ERRCODE = 'PY004'; END IF;
            v_read := COALESCE(p_read, 0);
            v_delivered := GREATEST(COALESCE(p_delivered, 0), v_read);
            IF v_delivered > v_last THEN RAISE EXCEPTION 'cursor beyond end' USING ERRCODE = 'PY005'; END IF;
            v_delivered := GREATEST(v_old_delivered, v_delivered);
            v_read := GREATEST(v_old_read, v_read);
            IF v_delivered = v_old_delivered AND v_read = v_old_read THEN
                RETURN QUERY SELECT v_delivered, v_read, false, NULL::TEXT[], NULL::BIGINT[];
                RETURN;
            END IF;
            UPDATE conversation_members SET delivered_seq = v_delivered, read_seq = v_read
            WHERE conversation_id = p_conversation AND user_id = p_member;
            SELECT array_agg(user_id ORDER BY user_id COLLATE "C") INTO v_members
            FROM conversation_members WHERE conversation_id = p_conversation;
            FOREACH v_member IN ARRAY v_members LOOP
                UPDATE users SET stream_head = stream_head + 1 WHERE id = v_member RETURNING stream_head INTO v_pos;
                INSERT INTO events (user_id, pos, kind, conversation_id, subject_id, delivered_seq, read_seq, created_at)
                VALUES (v_member, v_pos, 2, p_conversation, p_member, v_delivered, v_read, p_now);
                v_positions := v_positions || v_pos;
            END LOOP;
            PERFORM pg_notify('parley_cluster',
                's ' || p_node || (SELECT string_agg(' ' || m || ':' || p, '') FROM unnest(v_members, v_positions) AS t(m, p)));
            RETURN QUERY SELECT v_delivered, v_read, true, v_members, v_positions;
        END
        $$
        """#
}
