/// Migration `v18-committed-calls`: the hot writes, a batch of plain sends, a direct receipt, an
/// ordinary group send and a group receipt, as procedures that `COMMIT` before they answer, so each
/// is one round trip (``PostgresStore/committedCall(_:)``) instead of three (`BEGIN`, the function,
/// `COMMIT`), and a group's row lock is released by the commit itself, not a round trip later.
///
/// A procedure called outside a transaction block may end its transaction: PostgreSQL runs the
/// `COMMIT` (with `synchronous_commit` on, the WAL flush) inside the `CALL`, and only then sends
/// the procedure's `INOUT` values as the call's one row. So an answer still means committed, which
/// an autocommit `SELECT` would not (its commit comes at the `Sync`, after the rows: the package
/// README). The calls hold the same locks in the same order as the functions they wrap, and an
/// error before the `COMMIT` rolls the whole call back.
///
/// A `CALL` answers one row, the procedure's `INOUT` values: the function's one row (all NULL when
/// a group function returned none, its rule 2). A batch has a row per element: the procedure
/// answers them as one JSON array of arrays, in element order, each the function's columns in
/// order (``Prepared/SendBatch/rows(from:)``).
enum PostgresCommittedCalls {
    static let statements = [
        """
        CREATE PROCEDURE parley_send_batch_committed(
            p_senders TEXT[], p_client_ids TEXT[], p_conversations TEXT[], p_recipients TEXT[], p_texts TEXT[], p_nows BIGINT[],
            p_message_ids TEXT[], p_node TEXT, INOUT r_rows TEXT DEFAULT NULL)
        LANGUAGE plpgsql AS $$
        BEGIN
            SELECT json_agg(json_build_array(b.r_index, b.r_error, b.r_duplicate, b.r_message_id, b.r_seq, b.r_created_at,
                    b.r_text, b.r_conversation, b.r_contacts_formed, b.r_members, b.r_positions, b.r_created,
                    b.r_creation_positions) ORDER BY b.n)::TEXT
            INTO r_rows
            FROM parley_send_batch(p_senders, p_client_ids, p_conversations, p_recipients, p_texts, p_nows, p_message_ids, p_node)
                WITH ORDINALITY AS b(r_index, r_error, r_duplicate, r_message_id, r_seq, r_created_at, r_text, r_conversation,
                    r_contacts_formed, r_members, r_positions, r_created, r_creation_positions, n);
            COMMIT;
        END
        $$
        """,
        """
        CREATE PROCEDURE parley_receipt_committed(
            p_conversation TEXT, p_member TEXT, p_delivered BIGINT, p_read BIGINT, p_now BIGINT, p_node TEXT,
            INOUT r_delivered BIGINT DEFAULT NULL, INOUT r_read BIGINT DEFAULT NULL, INOUT r_moved BOOLEAN DEFAULT NULL,
            INOUT r_members TEXT[] DEFAULT NULL, INOUT r_positions BIGINT[] DEFAULT NULL)
        LANGUAGE plpgsql AS $$
        BEGIN
            SELECT * INTO r_delivered, r_read, r_moved, r_members, r_positions
            FROM parley_receipt(p_conversation, p_member, p_delivered, p_read, p_now, p_node);
            COMMIT;
        END
        $$
        """,
        """
        CREATE PROCEDURE parley_group_send_committed(
            p_sender TEXT, p_client_id TEXT, p_conversation TEXT, p_text TEXT, p_now BIGINT, p_message_id TEXT, p_node TEXT,
            INOUT r_seq BIGINT DEFAULT NULL, INOUT r_members TEXT[] DEFAULT NULL, INOUT r_positions BIGINT[] DEFAULT NULL,
            INOUT r_delivered BIGINT DEFAULT NULL, INOUT r_read BIGINT DEFAULT NULL, INOUT r_senders TEXT[] DEFAULT NULL,
            INOUT r_summary_positions BIGINT[] DEFAULT NULL)
        LANGUAGE plpgsql AS $$
        BEGIN
            SELECT * INTO r_seq, r_members, r_positions, r_delivered, r_read, r_senders, r_summary_positions
            FROM parley_group_send(p_sender, p_client_id, p_conversation, p_text, p_now, p_message_id, p_node);
            COMMIT;
        END
        $$
        """,
        """
        CREATE PROCEDURE parley_group_receipt_committed(
            p_conversation TEXT, p_member TEXT, p_delivered BIGINT, p_read BIGINT, p_now BIGINT, p_node TEXT,
            INOUT r_delivered BIGINT DEFAULT NULL, INOUT r_read BIGINT DEFAULT NULL, INOUT r_moved BOOLEAN DEFAULT NULL,
            INOUT r_position BIGINT DEFAULT NULL, INOUT r_summary_delivered BIGINT DEFAULT NULL, INOUT r_summary_read BIGINT DEFAULT NULL,
            INOUT r_senders TEXT[] DEFAULT NULL, INOUT r_summary_positions BIGINT[] DEFAULT NULL)
        LANGUAGE plpgsql AS $$
        BEGIN
            SELECT * INTO r_delivered, r_read, r_moved, r_position, r_summary_delivered, r_summary_read, r_senders, r_summary_positions
            FROM parley_group_receipt(p_conversation, p_member, p_delivered, p_read, p_now, p_node);
            COMMIT;
        END
        $$
        """,
    ]
}
