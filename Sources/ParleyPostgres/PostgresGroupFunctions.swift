import Foundation

/// Migration `v16-group-functions`: an ordinary group send (no reply, no files, no mentions) and a
/// group receipt as server-side functions, `parley_group_send` and `parley_group_receipt`, instead
/// of twenty and eight statements from Swift while the group's row is locked. A group's sends and
/// receipts run one at a time under that lock, so the statements' round trips were the group's
/// pace: 10–20 sends a second per group on a loaded machine (docs/guarantees.md, the cluster crash
/// checker), where a function takes one.
///
/// Rules (the group rules of the conformance suite, ``GroupFunctionsTests``):
/// 1. The same writes in the same order as the statements from Swift
///    (``PostgresStore/sendToGroupInSteps(_:_:now:)``, ``PostgresStore/groupReceiptInSteps(in:member:deliveredSeq:readSeq:now:)``):
///    the group's row locked first; a send's next seq, message, sender's cursors and `message`
///    event per member in id order; a receipt's cursors and the member's own `receipt` event; then
///    the receipt aggregate (`parley_group_aggregate`), refreshed when a send's sender held it back
///    or after every receipt that moved, with a `receiptSummary` event for each sender whose
///    messages it moved, in id order.
/// 2. Anything else (a retry, a client id used elsewhere, no such group, not a member, a cursor
///    past the last seq) returns no row and writes nothing: the statements from Swift then answer
///    it with their own checks and errors.
/// 3. The events are carried in the notifications (`parley_notify_event`, the shape of
///    ``ClusterWire/eventPayloads(_:node:)``): up to 100 recipients a payload; an event over 1,500
///    bytes that would need more than one payload, or a payload over ``ClusterWire/maxBytes``,
///    goes as positions; positions only while a node that does not read events beats.
enum PostgresGroupFunctions {
    static let statements = [notifyEvent, aggregate, groupSend, groupReceipt]

    /// Recipients per notification: ~45 bytes each, so 100 leave room for a 1,500-byte event.
    static let recipientsPerPayload = 100

    static let notifyEvent = """
        CREATE FUNCTION parley_notify_event(p_node TEXT, p_event TEXT, p_members TEXT[], p_positions BIGINT[])
        RETURNS VOID LANGUAGE plpgsql AS $$
        DECLARE
            v_count INT := COALESCE(cardinality(p_members), 0);
            v_from INT := 1;
            v_to INT;
            v_carry BOOLEAN := parley_cluster_carries()
                AND (v_count <= \(recipientsPerPayload) OR octet_length(p_event) <= \(ClusterWire.largestRepeated));
            v_payload TEXT;
        BEGIN
            WHILE v_from <= v_count LOOP
                v_to := LEAST(v_from + \(recipientsPerPayload - 1), v_count);
                v_payload := NULL;
                IF v_carry THEN
                    v_payload := 'e ' || p_node || ' {"event":' || p_event || ',"to":'
                        || (SELECT json_object_agg(m, p) FROM unnest(p_members[v_from:v_to], p_positions[v_from:v_to]) AS t(m, p))::TEXT
                        || '}';
                END IF;
                IF v_payload IS NULL OR octet_length(v_payload) > \(ClusterWire.maxBytes) THEN
                    v_payload := 's ' || p_node
                        || (SELECT string_agg(' ' || m || ':' || p, '') FROM unnest(p_members[v_from:v_to], p_positions[v_from:v_to]) AS t(m, p));
                END IF;
                PERFORM pg_notify('parley_cluster', v_payload);
                v_from := v_to + 1;
            END LOOP;
        END
        $$
        """

    /// The group's receipt aggregate refreshed (``PostgresGroupWriter/refreshAggregate()``'s rules):
    /// no row when it did not move; else the new cursors and the senders told, with their positions.
    static let aggregate = """
        CREATE FUNCTION parley_group_aggregate(p_conversation TEXT, p_now BIGINT, p_node TEXT)
        RETURNS TABLE (r_delivered BIGINT, r_read BIGINT, r_senders TEXT[], r_positions BIGINT[])
        LANGUAGE plpgsql AS $$
        #variable_conflict use_column
        DECLARE
            v_old_delivered BIGINT;
            v_old_read BIGINT;
            v_delivered BIGINT;
            v_read BIGINT;
            v_member TEXT;
            v_pos BIGINT;
            v_senders TEXT[] := '{}';
            v_positions BIGINT[] := '{}';
        BEGIN
            SELECT c.everyone_delivered_seq, c.everyone_read_seq, GREATEST(c.everyone_delivered_seq, MIN(m.delivered_seq)),
                GREATEST(c.everyone_read_seq, MIN(m.read_seq))
            INTO v_old_delivered, v_old_read, v_delivered, v_read
            FROM conversations c JOIN conversation_members m ON m.conversation_id = c.id WHERE c.id = p_conversation
            GROUP BY c.everyone_delivered_seq, c.everyone_read_seq;
            IF NOT FOUND OR (v_delivered = v_old_delivered AND v_read = v_old_read) THEN RETURN; END IF;
            UPDATE conversations SET everyone_delivered_seq = v_delivered, everyone_read_seq = v_read WHERE id = p_conversation;
            -- The senders of the messages whose status changed: delivered in (old, new], read in (old, new].
            FOR v_member IN
                SELECT DISTINCT msg.sender_id COLLATE "C" FROM messages msg
                JOIN conversation_members m ON m.conversation_id = msg.conversation_id AND m.user_id = msg.sender_id
                WHERE msg.conversation_id = p_conversation AND msg.entry IS NULL
                    AND ((msg.seq > v_old_delivered AND msg.seq <= v_delivered) OR (msg.seq > v_old_read AND msg.seq <= v_read))
                ORDER BY 1
            LOOP
                UPDATE users SET stream_head = stream_head + 1 WHERE id = v_member RETURNING stream_head INTO v_pos;
                INSERT INTO events (user_id, pos, kind, conversation_id, delivered_seq, read_seq, created_at)
                VALUES (v_member, v_pos, \(EventKind.receiptSummary.rawValue), p_conversation, v_delivered, v_read, p_now);
                v_senders := v_senders || v_member;
                v_positions := v_positions || v_pos;
            END LOOP;
            PERFORM parley_notify_event(p_node, json_build_object('receiptSummary', json_build_object(
                'conversationId', p_conversation, 'everyoneDeliveredSeq', v_delivered, 'everyoneReadSeq', v_read))::TEXT,
                v_senders, v_positions);
            RETURN QUERY SELECT v_delivered, v_read, v_senders, v_positions;
        END
        $$
        """

    /// A group receipt (``PostgresStore/groupReceiptInSteps(in:member:deliveredSeq:readSeq:now:)``'s
    /// rules): no row for anything but a member's receipt within the group's seqs (the statements
    /// from Swift then answer the error); `r_moved` false when no cursor moved (nothing written);
    /// else the member's own `receipt` event and the aggregate's.
    static let groupReceipt = """
        CREATE FUNCTION parley_group_receipt(
            p_conversation TEXT, p_member TEXT, p_delivered BIGINT, p_read BIGINT, p_now BIGINT, p_node TEXT)
        RETURNS TABLE (
            r_delivered BIGINT, r_read BIGINT, r_moved BOOLEAN, r_position BIGINT, r_summary_delivered BIGINT, r_summary_read BIGINT,
            r_senders TEXT[], r_summary_positions BIGINT[])
        LANGUAGE plpgsql AS $$
        #variable_conflict use_column
        DECLARE
            v_old_delivered BIGINT;
            v_old_read BIGINT;
            v_last BIGINT;
            v_delivered BIGINT;
            v_read BIGINT;
            v_pos BIGINT;
            v_summary_delivered BIGINT;
            v_summary_read BIGINT;
            v_senders TEXT[];
            v_summary BIGINT[];
        BEGIN
            -- The group's lock in a statement of its own: one that waited for it would read the
            -- member's row as it was before the wait, and could move a cursor back.
            PERFORM 1 FROM conversations WHERE id = p_conversation FOR UPDATE;
            IF NOT FOUND THEN RETURN; END IF;
            SELECT m.delivered_seq, m.read_seq, c.last_seq INTO v_old_delivered, v_old_read, v_last
            FROM conversation_members m JOIN conversations c ON c.id = m.conversation_id
            WHERE m.conversation_id = p_conversation AND m.user_id = p_member;
            IF NOT FOUND THEN RETURN; END IF;
            v_read := COALESCE(p_read, 0);
            v_delivered := GREATEST(COALESCE(p_delivered, 0), v_read);
            IF v_delivered > v_last THEN RETURN; END IF;
            v_delivered := GREATEST(v_old_delivered, v_delivered);
            v_read := GREATEST(v_old_read, v_read);
            IF v_delivered = v_old_delivered AND v_read = v_old_read THEN
                RETURN QUERY SELECT v_delivered, v_read, false, NULL::BIGINT, NULL::BIGINT, NULL::BIGINT, NULL::TEXT[], NULL::BIGINT[];
                RETURN;
            END IF;
            UPDATE conversation_members SET delivered_seq = v_delivered, read_seq = v_read
            WHERE conversation_id = p_conversation AND user_id = p_member;
            -- The member's own devices hear of their cursors; the senders it concerns of the aggregate.
            UPDATE users SET stream_head = stream_head + 1 WHERE id = p_member RETURNING stream_head INTO v_pos;
            INSERT INTO events (user_id, pos, kind, conversation_id, subject_id, delivered_seq, read_seq, created_at)
            VALUES (p_member, v_pos, \(EventKind.receipt.rawValue), p_conversation, p_member, v_delivered, v_read, p_now);
            PERFORM parley_notify_event(p_node, json_build_object('receipt', json_build_object(
                'conversationId', p_conversation, 'userId', p_member, 'deliveredSeq', v_delivered, 'readSeq', v_read))::TEXT,
                ARRAY[p_member], ARRAY[v_pos]);
            SELECT r_delivered, r_read, r_senders, r_positions INTO v_summary_delivered, v_summary_read, v_senders, v_summary
            FROM parley_group_aggregate(p_conversation, p_now, p_node);
            RETURN QUERY SELECT v_delivered, v_read, true, v_pos, v_summary_delivered, v_summary_read, v_senders, v_summary;
        END
        $$
        """

    static let groupSend = """
        CREATE FUNCTION parley_group_send(
            p_sender TEXT, p_client_id TEXT, p_conversation TEXT, p_text TEXT, p_now BIGINT, p_message_id TEXT, p_node TEXT)
        RETURNS TABLE (
            r_seq BIGINT, r_members TEXT[], r_positions BIGINT[], r_delivered BIGINT, r_read BIGINT, r_senders TEXT[],
            r_summary_positions BIGINT[])
        LANGUAGE plpgsql AS $$
        #variable_conflict use_column
        DECLARE
            v_closed BOOLEAN;
            v_held BOOLEAN;
            v_seq BIGINT;
            v_members TEXT[];
            v_positions BIGINT[] := '{}';
            v_member TEXT;
            v_pos BIGINT;
            v_delivered BIGINT;
            v_read BIGINT;
            v_senders TEXT[];
            v_summary BIGINT[];
        BEGIN
            -- 1. The group's row first: its sends and actions run one at a time.
            SELECT closed INTO v_closed FROM conversations WHERE id = p_conversation AND kind = 'group' FOR UPDATE;
            IF NOT FOUND OR v_closed THEN RETURN; END IF;
            -- 2. A retry or a client id used before: the general path answers it.
            PERFORM 1 FROM messages WHERE sender_id = p_sender AND client_id = p_client_id;
            IF FOUND THEN RETURN; END IF;
            SELECT m.delivered_seq <= c.everyone_delivered_seq OR m.read_seq <= c.everyone_read_seq INTO v_held
            FROM conversation_members m JOIN conversations c ON c.id = m.conversation_id
            WHERE m.conversation_id = p_conversation AND m.user_id = p_sender;
            IF NOT FOUND THEN RETURN; END IF;
            UPDATE conversations SET last_seq = last_seq + 1, last_activity_at = p_now
            WHERE id = p_conversation RETURNING last_seq INTO v_seq;
            INSERT INTO messages (id, conversation_id, seq, sender_id, client_id, text, created_at)
            VALUES (p_message_id, p_conversation, v_seq, p_sender, p_client_id, p_text, p_now);
            UPDATE conversation_members SET delivered_seq = v_seq, read_seq = v_seq, first_sent_seq = COALESCE(first_sent_seq, v_seq)
            WHERE conversation_id = p_conversation AND user_id = p_sender;
            SELECT array_agg(user_id ORDER BY user_id COLLATE "C") INTO v_members
            FROM conversation_members WHERE conversation_id = p_conversation;
            FOREACH v_member IN ARRAY v_members LOOP
                UPDATE users SET stream_head = stream_head + 1 WHERE id = v_member RETURNING stream_head INTO v_pos;
                INSERT INTO events (user_id, pos, kind, conversation_id, seq, created_at)
                VALUES (v_member, v_pos, \(EventKind.message.rawValue), p_conversation, v_seq, p_now);
                v_positions := v_positions || v_pos;
            END LOOP;
            PERFORM parley_notify_event(p_node, json_build_object('message', json_build_object(
                'id', p_message_id, 'conversationId', p_conversation, 'seq', v_seq, 'senderId', p_sender,
                'clientId', p_client_id, 'text', p_text, 'createdAt', p_now))::TEXT, v_members, v_positions);
            -- The aggregate, when the sender's cursors were the lowest (GroupReceiptAggregate's rules).
            IF v_held THEN
                SELECT r_delivered, r_read, r_senders, r_positions INTO v_delivered, v_read, v_senders, v_summary
                FROM parley_group_aggregate(p_conversation, p_now, p_node);
            END IF;
            RETURN QUERY SELECT v_seq, v_members, v_positions, v_delivered, v_read, v_senders, v_summary;
        END
        $$
        """
}
