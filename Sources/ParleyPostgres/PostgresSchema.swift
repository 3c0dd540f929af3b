import Logging
import PostgresNIO

/// The PostgreSQL schema, as ordered migrations applied at start-up. Never edit a shipped
/// migration: add a new one. Nodes that start together take turns on an advisory lock, so each
/// migration runs once; each runs in its own transaction with its bookkeeping row.
enum PostgresSchema {
    /// Arbitrary, fixed: the advisory lock key of Parley's migrations.
    static let migrationLock: Int64 = 0x5061_726C_6579

    static let migrations: [(version: String, statements: [String])] = [
        (
            "v1",
            [
                """
                CREATE TABLE users (
                    id TEXT PRIMARY KEY,
                    username TEXT NOT NULL UNIQUE,
                    display_name TEXT NOT NULL,
                    display_name_key TEXT NOT NULL,
                    password_hash TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    last_seen_at BIGINT,
                    stream_head BIGINT NOT NULL DEFAULT 0,
                    stream_floor BIGINT NOT NULL DEFAULT 0)
                """,
                "CREATE INDEX users_by_username_prefix ON users (username text_pattern_ops)",
                "CREATE INDEX users_by_display_name ON users (display_name_key text_pattern_ops)",
                """
                CREATE TABLE sessions (
                    token_hash TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL)
                """,
                "CREATE INDEX sessions_by_user ON sessions (user_id)",
                """
                CREATE TABLE conversations (
                    id TEXT PRIMARY KEY,
                    kind TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    last_seq BIGINT NOT NULL DEFAULT 0,
                    last_activity_at BIGINT NOT NULL)
                """,
                """
                CREATE TABLE conversation_members (
                    conversation_id TEXT NOT NULL REFERENCES conversations(id),
                    user_id TEXT NOT NULL REFERENCES users(id),
                    delivered_seq BIGINT NOT NULL DEFAULT 0,
                    read_seq BIGINT NOT NULL DEFAULT 0,
                    joined_at BIGINT NOT NULL,
                    first_sent_seq BIGINT,
                    PRIMARY KEY (conversation_id, user_id))
                """,
                "CREATE INDEX members_by_user ON conversation_members (user_id, conversation_id)",
                """
                CREATE TABLE messages (
                    id TEXT NOT NULL,
                    conversation_id TEXT NOT NULL REFERENCES conversations(id),
                    seq BIGINT NOT NULL,
                    sender_id TEXT NOT NULL REFERENCES users(id),
                    client_id TEXT NOT NULL,
                    text TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    PRIMARY KEY (conversation_id, seq),
                    CONSTRAINT messages_sender_id_client_id_key UNIQUE (sender_id, client_id))
                """,
                """
                CREATE TABLE events (
                    user_id TEXT NOT NULL,
                    pos BIGINT NOT NULL,
                    kind SMALLINT NOT NULL,
                    conversation_id TEXT NOT NULL,
                    seq BIGINT,
                    subject_id TEXT,
                    delivered_seq BIGINT,
                    read_seq BIGINT,
                    created_at BIGINT NOT NULL,
                    PRIMARY KEY (user_id, pos))
                """,
                // A row to write when probing writability.
                "CREATE TABLE parley_meta (id INT PRIMARY KEY, checked_at TIMESTAMPTZ)",
                "INSERT INTO parley_meta VALUES (1, now())",
                // Cluster membership: each node's heartbeat, by the database's clock (no skew between nodes).
                "CREATE TABLE cluster_nodes (node_id TEXT PRIMARY KEY, heartbeat_at TIMESTAMPTZ NOT NULL)",
                // Live connections per user per node: a user is online while a live node counts one.
                """
                CREATE TABLE presence (
                    user_id TEXT NOT NULL,
                    node_id TEXT NOT NULL,
                    connections INT NOT NULL,
                    PRIMARY KEY (user_id, node_id))
                """,
                "CREATE INDEX presence_by_node ON presence (node_id)",
            ]
        ),
        ("v2-send-function", [PostgresSendFunction.create]),
        ("v3-receipt-function", [PostgresReceiptFunction.create]),
        (
            "v4-groups",
            [
                // Groups (docs/protocol.md "Groups"); every default is what a direct conversation is.
                "ALTER TABLE conversations ADD COLUMN title TEXT",
                "ALTER TABLE conversations ADD COLUMN closed BOOLEAN NOT NULL DEFAULT false",
                "ALTER TABLE conversations ADD COLUMN everyone_delivered_seq BIGINT NOT NULL DEFAULT 0",
                "ALTER TABLE conversations ADD COLUMN everyone_read_seq BIGINT NOT NULL DEFAULT 0",
                "ALTER TABLE conversation_members ADD COLUMN role TEXT",
                "ALTER TABLE messages ADD COLUMN entry TEXT",
                "ALTER TABLE messages ADD COLUMN mentions TEXT",
                """
                CREATE TABLE member_spans (
                    conversation_id TEXT NOT NULL, user_id TEXT NOT NULL, from_seq BIGINT NOT NULL, joined_seq BIGINT NOT NULL,
                    to_seq BIGINT, PRIMARY KEY (conversation_id, user_id, joined_seq))
                """,
                """
                CREATE TABLE former_members (
                    user_id TEXT NOT NULL, conversation_id TEXT NOT NULL, left_seq BIGINT NOT NULL, left_at BIGINT NOT NULL,
                    read_seq BIGINT NOT NULL, title TEXT NOT NULL, PRIMARY KEY (user_id, conversation_id))
                """,
                """
                CREATE TABLE invitations (
                    user_id TEXT NOT NULL, conversation_id TEXT NOT NULL, inviter_id TEXT NOT NULL, share_history BOOLEAN NOT NULL,
                    created_at BIGINT NOT NULL, PRIMARY KEY (user_id, conversation_id))
                """,
                """
                CREATE TABLE mentions (
                    user_id TEXT NOT NULL, conversation_id TEXT NOT NULL, seq BIGINT NOT NULL, PRIMARY KEY (user_id, conversation_id, seq))
                """,
            ]
        ),
        (
            "v5-group-actions",
            [
                // Creates and adds by (actor, client id), with whom they invited (see SQLite's v4-group-actions).
                """
                CREATE TABLE group_actions (
                    actor_id TEXT NOT NULL, client_id TEXT NOT NULL, conversation_id TEXT NOT NULL, invited TEXT NOT NULL,
                    PRIMARY KEY (actor_id, client_id))
                """,
                "CREATE INDEX invitations_by_conversation ON invitations (conversation_id)",
            ]
        ),
        (
            "v6-message-actions",
            [
                // Message actions (see SQLite's v5-message-actions).
                "ALTER TABLE messages ADD COLUMN reply_to_seq BIGINT",
                "ALTER TABLE messages ADD COLUMN edited_at BIGINT",
                "ALTER TABLE messages ADD COLUMN deleted_at BIGINT",
                "ALTER TABLE messages ADD COLUMN reaction_count INTEGER NOT NULL DEFAULT 0",
                "CREATE INDEX messages_deleted ON messages (conversation_id, seq) WHERE deleted_at IS NOT NULL",
                """
                CREATE TABLE reactions (
                    conversation_id TEXT NOT NULL, seq BIGINT NOT NULL, user_id TEXT NOT NULL, emoji TEXT NOT NULL, created_at BIGINT NOT NULL,
                    PRIMARY KEY (conversation_id, seq, user_id))
                """,
                """
                CREATE TABLE message_versions (
                    conversation_id TEXT NOT NULL, seq BIGINT NOT NULL, version INTEGER NOT NULL, text TEXT NOT NULL,
                    created_at BIGINT NOT NULL, replaced_at BIGINT NOT NULL, PRIMARY KEY (conversation_id, seq, version))
                """,
                """
                CREATE TABLE hidden_messages (
                    user_id TEXT NOT NULL, conversation_id TEXT NOT NULL, seq BIGINT NOT NULL, PRIMARY KEY (user_id, conversation_id, seq))
                """,
                """
                CREATE TABLE message_actions (
                    actor_id TEXT NOT NULL, client_id TEXT NOT NULL, conversation_id TEXT NOT NULL, seq BIGINT NOT NULL, kind TEXT NOT NULL,
                    PRIMARY KEY (actor_id, client_id))
                """,
            ]
        ),
        (
            "v7-search",
            [
                // docs/protocol.md "Search": folded text (lower-case, accents off) in a word index and a
                // trigram index, as expressions on `messages`, so they are written with the row.
                // Both extensions are Debian's postgresql-contrib and trusted: the database's owner creates them.
                "CREATE EXTENSION IF NOT EXISTS unaccent",
                "CREATE EXTENSION IF NOT EXISTS pg_trgm",
                """
                CREATE FUNCTION parley_fold(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
                AS $$ SELECT lower(unaccent('unaccent'::regdictionary, $1)) $$
                """,
                """
                CREATE INDEX messages_words ON messages USING GIN (to_tsvector('simple'::regconfig, parley_fold(text)))
                WHERE entry IS NULL AND deleted_at IS NULL
                """,
                "CREATE INDEX messages_trigrams ON messages USING GIN (parley_fold(text) gin_trgm_ops) WHERE entry IS NULL AND deleted_at IS NULL",
            ]
        ),
        (
            "v8-search-cjk",
            [
                // CJK of three characters or more is found in the raw text (folding leaves CJK as it is),
                // through a trigram index of only the messages that hold CJK: a tenth of the size, no
                // trigrams written for the other messages, and a recheck without `unaccent`.
                """
                CREATE INDEX messages_cjk ON messages USING GIN (text gin_trgm_ops)
                WHERE entry IS NULL AND deleted_at IS NULL AND text ~ '\(SearchStatement.cjkClass)'
                """,
                "DROP INDEX messages_trigrams",
            ]
        ),
        (
            "v9-push-subscriptions",
            [
                """
                CREATE TABLE push_subscriptions (
                    endpoint TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL REFERENCES users(id),
                    p256dh BYTEA NOT NULL,
                    auth BYTEA NOT NULL,
                    created_at BIGINT NOT NULL)
                """,
                "CREATE INDEX push_subscriptions_by_user ON push_subscriptions (user_id, created_at)",
            ]
        ),
        (
            "v10-push-queue",
            [
                """
                CREATE TABLE push_cursors (
                    user_id TEXT PRIMARY KEY REFERENCES users(id),
                    pushed_pos BIGINT NOT NULL,
                    lease_owner TEXT,
                    lease_until BIGINT NOT NULL DEFAULT 0,
                    retry_at BIGINT NOT NULL DEFAULT 0,
                    attempts INTEGER NOT NULL DEFAULT 0)
                """,
                """
                CREATE TABLE push_notified (
                    user_id TEXT NOT NULL, conversation_id TEXT NOT NULL, seq BIGINT NOT NULL,
                    PRIMARY KEY (user_id, conversation_id))
                """,
                """
                CREATE TABLE apns_tokens (
                    token TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL REFERENCES users(id),
                    sandbox BOOLEAN NOT NULL,
                    created_at BIGINT NOT NULL)
                """,
                "CREATE INDEX apns_tokens_by_user ON apns_tokens (user_id, created_at)",
                """
                CREATE TABLE notification_settings (
                    user_id TEXT NOT NULL, conversation_id TEXT NOT NULL, level TEXT NOT NULL, muted_until BIGINT,
                    PRIMARY KEY (user_id, conversation_id))
                """,
                "CREATE TABLE push_preferences (user_id TEXT PRIMARY KEY, preview TEXT NOT NULL)",
                "CREATE TABLE shared_secrets (name TEXT PRIMARY KEY, secret TEXT NOT NULL)",
            ]
        ),
        (
            "v11-uploads",
            [
                """
                CREATE TABLE uploads (
                    id TEXT PRIMARY KEY,
                    owner_id TEXT NOT NULL REFERENCES users(id),
                    name TEXT NOT NULL,
                    length BIGINT NOT NULL,
                    sha256 TEXT,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    blob TEXT,
                    mime_type TEXT,
                    kind TEXT,
                    width INTEGER,
                    height INTEGER,
                    conversation_id TEXT,
                    seq BIGINT)
                """,
                "CREATE INDEX uploads_by_owner ON uploads (owner_id)",
                "CREATE INDEX uploads_by_message ON uploads (conversation_id, seq) WHERE conversation_id IS NOT NULL",
                "CREATE INDEX uploads_by_blob ON uploads (blob) WHERE blob IS NOT NULL",
                "CREATE INDEX uploads_unclaimed ON uploads (expires_at) WHERE conversation_id IS NULL",
                "CREATE TABLE blob_candidates (blob TEXT PRIMARY KEY, since BIGINT NOT NULL)",
                "ALTER TABLE messages ADD COLUMN attachments TEXT",
            ]
        ),
        (
            // The user's current photo (an upload id), read with every user; the upload names its
            // user back, which claims it (no expiry, no message, no tus termination).
            "v12-profile-photos",
            [
                "ALTER TABLE users ADD COLUMN photo_upload TEXT",
                "ALTER TABLE uploads ADD COLUMN photo_of TEXT",
            ]
        ),
        // Plain sends written together (``PostgresSendQueue``).
        ("v13-send-batch", [PostgresSendBatchFunction.create]),
        // Sends and receipts notify the event itself (``PostgresCarriedEvents``).
        ("v14-carried-events", PostgresCarriedEvents.statements),
        // Ordinary batches written with a statement per table (``PostgresSetWiseBatch``).
        ("v15-set-wise-batch", PostgresSetWiseBatch.statements),
        // An ordinary group send and a group receipt in one statement each (``PostgresGroupFunctions``).
        ("v16-group-functions", PostgresGroupFunctions.statements),
        (
            "v17-search-widths",
            [
                // Widths folded as SQLite's index folds them (``SearchText``): half-width katakana (ｶﾀｶﾅ)
                // is found as カタカナ and the other way round, full-width Latin as Latin. NFKC does it
                // inside PostgreSQL; the CJK index and its predicate hold the text so normalized.
                "DROP INDEX messages_words",
                "DROP INDEX messages_cjk",
                """
                CREATE FUNCTION parley_width(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
                AS $$ SELECT normalize($1, NFKC) $$
                """,
                """
                CREATE OR REPLACE FUNCTION parley_fold(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
                AS $$ SELECT lower(unaccent('unaccent'::regdictionary, normalize($1, NFKC))) $$
                """,
                """
                CREATE INDEX messages_words ON messages USING GIN (to_tsvector('simple'::regconfig, parley_fold(text)))
                WHERE entry IS NULL AND deleted_at IS NULL
                """,
                """
                CREATE INDEX messages_cjk ON messages USING GIN (parley_width(text) gin_trgm_ops)
                WHERE entry IS NULL AND deleted_at IS NULL AND \(SearchStatement.holdsCJK.replacing("m.text", with: "text"))
                """,
            ]
        ),
        // Send batches, receipts and ordinary group sends in one round trip each, committed before they answer (``PostgresCommittedCalls``).
        ("v18-committed-calls", PostgresCommittedCalls.statements),
        // A send batch's locks by index probe and its plans kept, and two functions no longer planned per call (``PostgresLeanBatch``).
        ("v19-lean-batch", PostgresLeanBatch.statements),
        // One or two CJK characters looked up at any age, not in each conversation's newest 200 messages.
        ("v20-search-short-cjk", PostgresShortCJKSearch.statements),
        // A former member's view cut by commit order, not clock time (``PostgresCommitOrderMarks``).
        ("v21-commit-order-marks", PostgresCommitOrderMarks.statements),
        // A word glued to CJK is a word of its own (``PostgresSearchWords``).
        ("v22-search-word-boundaries", PostgresSearchWords.statements),
        // An upload sent as it was (tus metadata `original`) keeps a photo's metadata (``ImageMetadataScrub``).
        ("v23-uploads-keep-metadata", ["ALTER TABLE uploads ADD COLUMN keeps_metadata BOOLEAN NOT NULL DEFAULT false"]),
        // A message deleted for everyone says nothing of its edits (a former member learnt of one made after they left).
        ("v24-tombstones-not-edited", ["UPDATE messages SET edited_at = NULL WHERE deleted_at IS NOT NULL AND edited_at IS NOT NULL"]),
    ]

    static func migrate(_ client: PostgresClient, logger: Logger) async throws {
        try await client.withConnection { connection in
            try await connection.query("SELECT pg_advisory_lock(\(migrationLock))", logger: logger)
            do {
                try await apply(on: connection, logger: logger)
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(\(migrationLock))", logger: logger)
                throw error
            }
            try await connection.query("SELECT pg_advisory_unlock(\(migrationLock))", logger: logger)
        }
    }

    private static func apply(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            "CREATE TABLE IF NOT EXISTS parley_migrations (version TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
            logger: logger)
        var applied = Set<String>()
        for try await version in try await connection.query("SELECT version FROM parley_migrations", logger: logger).decode(String.self) {
            applied.insert(version)
        }
        for migration in migrations where !applied.contains(migration.version) {
            logger.info("Applying database migration", metadata: ["version": "\(migration.version)"])
            try await connection.query("BEGIN", logger: logger)
            do {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query("INSERT INTO parley_migrations (version) VALUES (\(migration.version))", logger: logger)
                try await connection.query("COMMIT", logger: logger)
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }
}

/// Event kinds as stored in `events.kind`.
enum EventKind: Int16 {
    case message = 1
    case receipt = 2
    case conversation = 3
    case invitation = 4
    case receiptSummary = 5
    case messageUpdated = 6
    case messageHidden = 7
}
