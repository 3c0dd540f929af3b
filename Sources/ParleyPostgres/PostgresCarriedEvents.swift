import Foundation

/// Migration `v14-carried-events`: `parley_send` and `parley_receipt` notify the event itself
/// (`e`, ``ClusterWire/eventPayloads(_:node:)``'s shape) instead of only the positions (`s`), so the
/// other nodes deliver a message or a receipt without reading it back from the store.
///
/// Each function is its shipped text (``PostgresSendFunction``, ``PostgresReceiptFunction``, kept
/// as migrations `v2` and `v3` ran them) with its one `pg_notify` replaced: the event's JSON as
/// clients see it, with the streams it went to; the positions alone when the payload would pass
/// ``ClusterWire/maxBytes`` (a long text).
///
/// Events are carried only once every node of the cluster reads them (`parley_cluster_carries()`:
/// no row of `cluster_nodes` without `carries_events`, which nodes from this version on set when
/// they beat). During a rolling upgrade the older nodes, which ignore `e`, are still beating, so
/// everyone notifies positions until the last of them has left.
///
/// A send carries its message only when its transaction says the message is whole
/// (`parley.carry_events` set on, which `parley_send_batch` does for its plain sends): a reply or a
/// send with files gets its quote and attachments from statements after `parley_send`, so it
/// notifies positions, as does a send that created the conversation (the receiving node reads the
/// conversation event and the message in one replay).
///
/// The migration also drops the two foreign keys of `messages` (why: beside the statements).
enum PostgresCarriedEvents {
    static let statements = [
        "ALTER TABLE cluster_nodes ADD COLUMN carries_events BOOLEAN NOT NULL DEFAULT false",
        """
        CREATE FUNCTION parley_cluster_carries() RETURNS BOOLEAN LANGUAGE sql STABLE
        AS $$ SELECT NOT EXISTS (SELECT 1 FROM cluster_nodes WHERE NOT carries_events) $$
        """,
        revise(
            PostgresSendFunction.create, carrying: "'message'",
            """
            json_build_object('id', p_message_id, 'conversationId', p_conversation, 'seq', v_seq, 'senderId', p_sender,
                'clientId', p_client_id, 'text', p_text, 'createdAt', p_now)
            """, unless: "v_created OR current_setting('parley.carry_events', true) IS DISTINCT FROM 'on'"),
        revise(
            PostgresReceiptFunction.create, carrying: "'receipt'",
            "json_build_object('conversationId', p_conversation, 'userId', p_member, 'deliveredSeq', v_delivered, 'readSeq', v_read)",
            unless: "NOT parley_cluster_carries()"),
        batch,
        // A message is only ever inserted by a send that has just updated its conversation's row
        // and found its sender among the members (whose rows reference both), and nothing deletes
        // users, conversations or messages: these two checks proved nothing the send had not, at
        // two lookups per message, a tenth of PostgreSQL's CPU per send (docs/benchmarks.md).
        "ALTER TABLE messages DROP CONSTRAINT messages_conversation_id_fkey",
        "ALTER TABLE messages DROP CONSTRAINT messages_sender_id_fkey",
    ]

    /// The batch function with plain sends marked whole (`parley.carry_events`).
    static let batch = PostgresSendBatchFunction.create
        .replacingOccurrences(of: "CREATE FUNCTION", with: "CREATE OR REPLACE FUNCTION")
        .replacingOccurrences(
            of: batchBody,
            with: batchBody + "    IF parley_cluster_carries() THEN PERFORM set_config('parley.carry_events', 'on', true); END IF;\n")

    /// Where the batch function's body starts.
    static let batchBody = "    v_current INT := 0;\nBEGIN\n"

    /// The notification both shipped functions end with: the positions of `v_members`' streams.
    static let positionsOnly = """
            PERFORM pg_notify('parley_cluster',
                's ' || p_node || (SELECT string_agg(' ' || m || ':' || p, '') FROM unnest(v_members, v_positions) AS t(m, p)));
        """

    /// `function` replaced in place, notifying `kind: value` to `v_members` at `v_positions`.
    static func revise(_ function: String, carrying kind: String, _ value: String, unless positionsSuffice: String) -> String {
        let carried = """
                v_payload := CASE WHEN NOT (\(positionsSuffice)) THEN 'e ' || p_node || ' ' || json_build_object(
                    'event', json_build_object(\(kind), \(value)),
                    'to', (SELECT json_object_agg(m, p) FROM unnest(v_members, v_positions) AS t(m, p)))::TEXT END;
                IF v_payload IS NULL OR octet_length(v_payload) > \(ClusterWire.maxBytes) THEN
                    v_payload := 's ' || p_node || (SELECT string_agg(' ' || m || ':' || p, '') FROM unnest(v_members, v_positions) AS t(m, p));
                END IF;
                PERFORM pg_notify('parley_cluster', v_payload);
            """
        return
            function
            .replacingOccurrences(of: "CREATE FUNCTION", with: "CREATE OR REPLACE FUNCTION")
            .replacingOccurrences(of: "\nDECLARE\n", with: "\nDECLARE\n    v_payload TEXT;\n")
            .replacingOccurrences(of: positionsOnly, with: carried)
    }
}
