import PostgresNIO

/// The hot statements, prepared once per connection (parsed and planned once, then only bound and
/// run): a send, and a replay of a user's stream.
enum Prepared {
    /// `parley_send` (``PostgresSendFunction``).
    struct Send: PostgresPreparedStatement {
        static let sql = "SELECT * FROM parley_send($1, $2, $3, $4, $5, $6, $7, $8)"

        /// `parley_send`'s result row, by the names of its `RETURNS TABLE` columns.
        struct Row {
            /// The (sender, client id) was stored before: the fields below describe that message.
            var duplicate: Bool
            var messageId: String, seq: Int64, createdAt: Int64, text: String, conversation: String
            var contactsFormed: Bool
            /// Every member, in id order, and the position of the message event in each one's stream.
            var members: [String], positions: [Int64]
            /// The send created the direct conversation: the position of its `conversation` event per member.
            var created: Bool, creationPositions: [Int64]
        }

        var sender: String, clientId: String, conversation: String, recipient: String?, text: String, now: Int64
        var messageId: String, node: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 8)
            bindings.append(sender)
            bindings.append(clientId)
            bindings.append(conversation)
            bindings.append(recipient)
            bindings.append(text)
            bindings.append(now)
            bindings.append(messageId)
            bindings.append(node)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row {
            let c = try row.decode((Bool, String, Int64, Int64, String, String, Bool, [String]?, [Int64]?, Bool, [Int64]?).self)
            return Row(
                duplicate: c.0, messageId: c.1, seq: c.2, createdAt: c.3, text: c.4, conversation: c.5, contactsFormed: c.6,
                members: c.7 ?? [], positions: c.8 ?? [], created: c.9, creationPositions: c.10 ?? [])
        }
    }

    /// `parley_receipt` (``PostgresReceiptFunction``) in `parley_receipt_committed` (``PostgresCommittedCalls``).
    struct Receipt: PostgresPreparedStatement {
        static let sql = "CALL parley_receipt_committed($1, $2, $3, $4, $5, $6, NULL, NULL, NULL, NULL, NULL)"

        /// `parley_receipt`'s result row (the procedure's `INOUT` values), by the names of its `RETURNS TABLE` columns.
        struct Row {
            /// The member's cursors after the call (they only move forward).
            var delivered: Int64, read: Int64
            /// A cursor moved: every member, and the position of the receipt event in each one's stream.
            var moved: Bool, members: [String], positions: [Int64]
        }

        var conversation: String, member: String, delivered: Int64?, read: Int64?, now: Int64, node: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 6)
            bindings.append(conversation)
            bindings.append(member)
            bindings.append(delivered)
            bindings.append(read)
            bindings.append(now)
            bindings.append(node)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row {
            let c = try row.decode((Int64, Int64, Bool, [String]?, [Int64]?).self)
            return Row(delivered: c.0, read: c.1, moved: c.2, members: c.3 ?? [], positions: c.4 ?? [])
        }
    }

    /// A user's stream bounds and the events after a position, in one round trip: every row carries
    /// the bounds; a user with no events after `after` gives one row with NULL event columns.
    struct Replay: PostgresPreparedStatement {
        static let sql = """
            SELECT u.stream_head, u.stream_floor, ev.pos, ev.kind, ev.conversation_id, ev.subject_id, ev.delivered_seq, ev.read_seq,
                   ev.m_id, ev.m_conversation, ev.m_seq, ev.m_sender, ev.m_client, ev.m_text, ev.m_created, ev.m_entry, ev.m_mentions,
                   ev.created_at, ev.m_reply, ev.m_edited, ev.m_deleted, ev.m_reactions, ev.seq, ev.m_attachments
            FROM users u
            LEFT JOIN LATERAL (
                SELECT e.pos, e.kind, e.conversation_id, e.subject_id, e.delivered_seq, e.read_seq,
                       m.id AS m_id, m.conversation_id AS m_conversation, m.seq AS m_seq, m.sender_id AS m_sender,
                       m.client_id AS m_client, m.text AS m_text, m.created_at AS m_created, m.entry AS m_entry, m.mentions AS m_mentions,
                       e.created_at, m.reply_to_seq AS m_reply, m.edited_at AS m_edited, m.deleted_at AS m_deleted,
                       m.reaction_count AS m_reactions, e.seq, m.attachments AS m_attachments
                FROM events e
                LEFT JOIN messages m ON e.kind IN (1, 6) AND m.conversation_id = e.conversation_id AND m.seq = e.seq
                WHERE e.user_id = u.id AND e.pos > $2 ORDER BY e.pos LIMIT $3
            ) ev ON true
            WHERE u.id = $1
            ORDER BY ev.pos
            """
        typealias Row = (
            Int64, Int64, Int64?, Int16?, String?, String?, Int64?, Int64?,
            String?, String?, Int64?, String?, String?, String?, Int64?, String?, String?, Int64?,
            Int64?, Int64?, Int64?, Int32?, Int64?, String?
        )

        var user: String, after: Int64, limit: Int64

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(user)
            bindings.append(after)
            bindings.append(limit)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }
}
