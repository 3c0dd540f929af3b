import GRDB
import ParleyStore

/// The SQLite schema, as ordered migrations. Never edit a shipped migration: add a new one.
enum SQLiteSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE users (
                        id TEXT PRIMARY KEY NOT NULL,
                        username TEXT NOT NULL UNIQUE,
                        display_name TEXT NOT NULL,
                        display_name_key TEXT NOT NULL,
                        password_hash TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        last_seen_at INTEGER,
                        -- newest position of the user's event stream, and the newest one pruned
                        stream_head INTEGER NOT NULL DEFAULT 0,
                        stream_floor INTEGER NOT NULL DEFAULT 0
                    );
                    CREATE INDEX users_by_display_name ON users(display_name_key);

                    CREATE TABLE sessions (
                        token_hash TEXT PRIMARY KEY NOT NULL,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        created_at INTEGER NOT NULL,
                        expires_at INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    CREATE INDEX sessions_by_user ON sessions(user_id);

                    CREATE TABLE conversations (
                        id TEXT PRIMARY KEY NOT NULL,
                        kind TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        last_seq INTEGER NOT NULL DEFAULT 0,
                        last_activity_at INTEGER NOT NULL
                    ) WITHOUT ROWID;

                    CREATE TABLE conversation_members (
                        conversation_id TEXT NOT NULL REFERENCES conversations(id),
                        user_id TEXT NOT NULL REFERENCES users(id),
                        delivered_seq INTEGER NOT NULL DEFAULT 0,
                        read_seq INTEGER NOT NULL DEFAULT 0,
                        joined_at INTEGER NOT NULL,
                        PRIMARY KEY (conversation_id, user_id)
                    ) WITHOUT ROWID;
                    CREATE INDEX members_by_user ON conversation_members(user_id, conversation_id);

                    -- No index on id: it is a random UUID nothing looks up, and an index on it would
                        -- cost a random B-tree page per insert.
                    CREATE TABLE messages (
                        id TEXT NOT NULL,
                        conversation_id TEXT NOT NULL REFERENCES conversations(id),
                        seq INTEGER NOT NULL,
                        sender_id TEXT NOT NULL REFERENCES users(id),
                        client_id TEXT NOT NULL,
                        text TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        UNIQUE (conversation_id, seq),
                        UNIQUE (sender_id, client_id)
                    );

                    -- One row per event per user. Message events point at the message; receipt events
                    -- carry the cursors as they were; conversation events point at the conversation.
                    CREATE TABLE events (
                        user_id TEXT NOT NULL,
                        pos INTEGER NOT NULL,
                        kind INTEGER NOT NULL,
                        conversation_id TEXT NOT NULL,
                        seq INTEGER,
                        subject_id TEXT,
                        delivered_seq INTEGER,
                        read_seq INTEGER,
                        created_at INTEGER NOT NULL,
                        PRIMARY KEY (user_id, pos)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v2-first-sent") { db in
            // seq of each member's first message: presence is shared only once both have written.
            try db.execute(
                sql: """
                    ALTER TABLE conversation_members ADD COLUMN first_sent_seq INTEGER;
                    UPDATE conversation_members SET first_sent_seq = (
                        SELECT MIN(m.seq) FROM messages m
                        WHERE m.conversation_id = conversation_members.conversation_id AND m.sender_id = conversation_members.user_id);
                    """)
        }
        migrator.registerMigration("v3-groups") { db in
            // Groups (docs/protocol.md "Groups"). Direct conversations keep their rows and ids:
            // every new column defaults to what a direct conversation is.
            try db.execute(
                sql: """
                    ALTER TABLE conversations ADD COLUMN title TEXT;
                    ALTER TABLE conversations ADD COLUMN closed INTEGER NOT NULL DEFAULT 0;
                    -- The lowest cursors among the members (a group's receipt aggregate; never goes back).
                    ALTER TABLE conversations ADD COLUMN everyone_delivered_seq INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE conversations ADD COLUMN everyone_read_seq INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE conversation_members ADD COLUMN role TEXT;
                    -- A membership entry's JSON (GroupEntry) and a group message's mentioned user ids (JSON).
                    ALTER TABLE messages ADD COLUMN entry TEXT;
                    ALTER TABLE messages ADD COLUMN mentions TEXT;

                    -- The seqs a group member may see: one row per span, to_seq NULL while it lasts;
                    -- joined_seq is the entry that began it (from_seq is 1 when history was shared).
                    CREATE TABLE member_spans (
                        conversation_id TEXT NOT NULL,
                        user_id TEXT NOT NULL,
                        from_seq INTEGER NOT NULL,
                        joined_seq INTEGER NOT NULL,
                        to_seq INTEGER,
                        PRIMARY KEY (conversation_id, user_id, joined_seq)
                    ) WITHOUT ROWID;

                    -- People who were in a group and are not now: what their list still shows.
                    CREATE TABLE former_members (
                        user_id TEXT NOT NULL,
                        conversation_id TEXT NOT NULL,
                        left_seq INTEGER NOT NULL,
                        left_at INTEGER NOT NULL,
                        read_seq INTEGER NOT NULL,
                        title TEXT NOT NULL,
                        PRIMARY KEY (user_id, conversation_id)
                    ) WITHOUT ROWID;

                    CREATE TABLE invitations (
                        user_id TEXT NOT NULL,
                        conversation_id TEXT NOT NULL,
                        inviter_id TEXT NOT NULL,
                        share_history INTEGER NOT NULL,
                        created_at INTEGER NOT NULL,
                        PRIMARY KEY (user_id, conversation_id)
                    ) WITHOUT ROWID;

                    CREATE TABLE mentions (
                        user_id TEXT NOT NULL,
                        conversation_id TEXT NOT NULL,
                        seq INTEGER NOT NULL,
                        PRIMARY KEY (user_id, conversation_id, seq)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v4-group-actions") { db in
            // Creates and adds by (actor, client id), with whom they invited: a retried add that only
            // invited has no entry to find, and a retry answers the original invitees.
            try db.execute(
                sql: """
                    CREATE TABLE group_actions (
                        actor_id TEXT NOT NULL,
                        client_id TEXT NOT NULL,
                        conversation_id TEXT NOT NULL,
                        invited TEXT NOT NULL,
                        PRIMARY KEY (actor_id, client_id)
                    ) WITHOUT ROWID;
                    CREATE INDEX invitations_by_conversation ON invitations(conversation_id);
                    """)
        }
        migrator.registerMigration("v5-message-actions") { db in
            // Message actions (docs/protocol.md "Message actions"). reaction_count lets a read skip the
            // reactions query for the messages nobody reacted to (nearly all of them).
            try db.execute(
                sql: """
                    ALTER TABLE messages ADD COLUMN reply_to_seq INTEGER;
                    ALTER TABLE messages ADD COLUMN edited_at INTEGER;
                    ALTER TABLE messages ADD COLUMN deleted_at INTEGER;
                    ALTER TABLE messages ADD COLUMN reaction_count INTEGER NOT NULL DEFAULT 0;
                    CREATE INDEX messages_deleted ON messages(conversation_id, seq) WHERE deleted_at IS NOT NULL;

                    CREATE TABLE reactions (
                        conversation_id TEXT NOT NULL,
                        seq INTEGER NOT NULL,
                        user_id TEXT NOT NULL,
                        emoji TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        PRIMARY KEY (conversation_id, seq, user_id)
                    ) WITHOUT ROWID;

                    -- Earlier texts of edited messages; removed with the message's text when it is deleted.
                    CREATE TABLE message_versions (
                        conversation_id TEXT NOT NULL,
                        seq INTEGER NOT NULL,
                        version INTEGER NOT NULL,
                        text TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        replaced_at INTEGER NOT NULL,
                        PRIMARY KEY (conversation_id, seq, version)
                    ) WITHOUT ROWID;

                    -- Deleted for me.
                    CREATE TABLE hidden_messages (
                        user_id TEXT NOT NULL,
                        conversation_id TEXT NOT NULL,
                        seq INTEGER NOT NULL,
                        PRIMARY KEY (user_id, conversation_id, seq)
                    ) WITHOUT ROWID;

                    -- Each action by (actor, client id): a retry is answered, never applied again.
                    CREATE TABLE message_actions (
                        actor_id TEXT NOT NULL,
                        client_id TEXT NOT NULL,
                        conversation_id TEXT NOT NULL,
                        seq INTEGER NOT NULL,
                        kind TEXT NOT NULL,
                        PRIMARY KEY (actor_id, client_id)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v6-search") { db in
            // docs/protocol.md "Search": folded text (`parley_fold`, SearchText.fold) in a word index,
            // and, for messages holding CJK, in a trigram index. Both are contentless: the text lives
            // in `messages` only. Triggers keep them in the message's own transaction; an edit
            // re-indexes, a delete for everyone removes.
            try db.execute(
                sql: """
                    CREATE VIRTUAL TABLE message_search USING fts5(text, content='', tokenize='unicode61 remove_diacritics 2');
                    CREATE VIRTUAL TABLE message_search_cjk USING fts5(text, content='', tokenize='trigram');
                    INSERT INTO message_search(rowid, text)
                        SELECT rowid, parley_fold(text) FROM messages WHERE entry IS NULL AND deleted_at IS NULL;
                    INSERT INTO message_search_cjk(rowid, text)
                        SELECT rowid, parley_fold(text) FROM messages WHERE entry IS NULL AND deleted_at IS NULL AND parley_cjk(text);
                    CREATE TRIGGER message_search_insert AFTER INSERT ON messages WHEN new.entry IS NULL BEGIN
                        INSERT INTO message_search(rowid, text) VALUES (new.rowid, parley_fold(new.text));
                        INSERT INTO message_search_cjk(rowid, text) SELECT new.rowid, parley_fold(new.text) WHERE parley_cjk(new.text);
                    END;
                    CREATE TRIGGER message_search_update AFTER UPDATE OF text ON messages WHEN old.entry IS NULL BEGIN
                        INSERT INTO message_search(message_search, rowid, text)
                            SELECT 'delete', old.rowid, parley_fold(old.text) WHERE old.deleted_at IS NULL;
                        INSERT INTO message_search_cjk(message_search_cjk, rowid, text)
                            SELECT 'delete', old.rowid, parley_fold(old.text) WHERE old.deleted_at IS NULL AND parley_cjk(old.text);
                        INSERT INTO message_search(rowid, text) SELECT new.rowid, parley_fold(new.text) WHERE new.deleted_at IS NULL;
                        INSERT INTO message_search_cjk(rowid, text)
                            SELECT new.rowid, parley_fold(new.text) WHERE new.deleted_at IS NULL AND parley_cjk(new.text);
                    END;
                    """)
        }
        migrator.registerMigration("v7-search-log") { db in
            // The writer keeps the index itself (SearchIndexLog): a trigger's statement on FTS5 made it
            // flush a segment per message.
            try db.execute(sql: "DROP TRIGGER message_search_insert; DROP TRIGGER message_search_update;")
        }
        migrator.registerMigration("v8-push-subscriptions") { db in
            try db.execute(
                sql: """
                    CREATE TABLE push_subscriptions (
                        endpoint TEXT PRIMARY KEY,
                        user_id TEXT NOT NULL REFERENCES users(id),
                        p256dh BLOB NOT NULL,
                        auth BLOB NOT NULL,
                        created_at INTEGER NOT NULL
                    );
                    CREATE INDEX push_subscriptions_by_user ON push_subscriptions(user_id, created_at);
                    """)
        }
        // The push queue's cursors (rules in PushQueueStore), APNs devices and notification settings.
        migrator.registerMigration("v9-push-queue") { db in
            try db.execute(
                sql: """
                    CREATE TABLE push_cursors (
                        user_id TEXT PRIMARY KEY REFERENCES users(id),
                        pushed_pos INTEGER NOT NULL,
                        lease_owner TEXT,
                        lease_until INTEGER NOT NULL DEFAULT 0,
                        retry_at INTEGER NOT NULL DEFAULT 0,
                        attempts INTEGER NOT NULL DEFAULT 0
                    );
                    CREATE TABLE push_notified (
                        user_id TEXT NOT NULL,
                        conversation_id TEXT NOT NULL,
                        seq INTEGER NOT NULL,
                        PRIMARY KEY (user_id, conversation_id)
                    ) WITHOUT ROWID;
                    CREATE TABLE apns_tokens (
                        token TEXT PRIMARY KEY,
                        user_id TEXT NOT NULL REFERENCES users(id),
                        sandbox INTEGER NOT NULL,
                        created_at INTEGER NOT NULL
                    );
                    CREATE INDEX apns_tokens_by_user ON apns_tokens(user_id, created_at);
                    CREATE TABLE notification_settings (
                        user_id TEXT NOT NULL,
                        conversation_id TEXT NOT NULL,
                        level TEXT NOT NULL,
                        muted_until INTEGER,
                        PRIMARY KEY (user_id, conversation_id)
                    ) WITHOUT ROWID;
                    CREATE TABLE push_preferences (
                        user_id TEXT PRIMARY KEY,
                        preview TEXT NOT NULL
                    ) WITHOUT ROWID;
                    CREATE TABLE shared_secrets (
                        name TEXT PRIMARY KEY,
                        secret TEXT NOT NULL
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v10-uploads") { db in
            try db.execute(
                sql: """
                    CREATE TABLE uploads (
                        id TEXT PRIMARY KEY,
                        owner_id TEXT NOT NULL REFERENCES users(id),
                        name TEXT NOT NULL,
                        length INTEGER NOT NULL,
                        sha256 TEXT,
                        created_at INTEGER NOT NULL,
                        expires_at INTEGER NOT NULL,
                        blob TEXT,
                        mime_type TEXT,
                        kind TEXT,
                        width INTEGER,
                        height INTEGER,
                        conversation_id TEXT,
                        seq INTEGER
                    );
                    CREATE INDEX uploads_by_owner ON uploads(owner_id);
                    CREATE INDEX uploads_by_message ON uploads(conversation_id, seq) WHERE conversation_id IS NOT NULL;
                    CREATE INDEX uploads_by_blob ON uploads(blob) WHERE blob IS NOT NULL;
                    CREATE INDEX uploads_unclaimed ON uploads(expires_at) WHERE conversation_id IS NULL;
                    CREATE TABLE blob_candidates (
                        blob TEXT PRIMARY KEY,
                        since INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    ALTER TABLE messages ADD COLUMN attachments TEXT;
                    """)
        }
        migrator.registerMigration("v11-profile-photos") { db in
            // The user's current photo (an upload id), read with every user; the upload names its
            // user back, which claims it (no expiry, no message, no tus termination).
            try db.execute(
                sql: """
                    ALTER TABLE users ADD COLUMN photo_upload TEXT;
                    ALTER TABLE uploads ADD COLUMN photo_of TEXT;
                    """)
        }
        migrator.registerMigration("v12-search-widths") { db in
            // SearchText.fold now gives CJK runs their compatibility form (NFKC: half-width katakana
            // is CJK and becomes full-width, its voiced marks composed). The index is rebuilt with it.
            try db.execute(sql: SQLiteSchema.rebuildSearchIndex)
        }
        migrator.registerMigration("v13-group-message-positions") { db in
            // A group message is stored once, not as an event row per member (fan-out on read):
            // `pos` is its position in every recipient's stream, and a member's replay reads it
            // through their spans (SQLiteStore.events). NULL for direct messages and membership
            // entries, whose events stay rows of `events`, and for group messages stored before.
            try db.execute(
                sql: """
                    ALTER TABLE messages ADD COLUMN pos INTEGER;
                    CREATE INDEX messages_by_position ON messages(conversation_id, pos) WHERE pos IS NOT NULL;
                    CREATE INDEX member_spans_by_user ON member_spans(user_id);
                    -- The group's newest message position when the span began, and a closed span's last
                    -- position in its member's stream: bounds on what a replay scans (NULL for spans before).
                    ALTER TABLE member_spans ADD COLUMN joined_pos INTEGER;
                    ALTER TABLE member_spans ADD COLUMN to_pos INTEGER;
                    -- How many rows of `events` each user has: pruning keeps a number of events, and
                    -- positions no longer count them (a group message skips positions).
                    ALTER TABLE users ADD COLUMN event_rows INTEGER NOT NULL DEFAULT 0;
                    UPDATE users SET event_rows = (SELECT COUNT(*) FROM events WHERE events.user_id = users.id);
                    """)
        }
        migrator.registerMigration("v14-search-compatibility-forms") { db in
            // SearchText.fold now gives everything its compatibility form, as PostgreSQL's
            // parley_fold does (① is 1, ﬁ is fi, ㍻ is 平成), not CJK alone. Rebuilt as v12 did.
            try db.execute(sql: SQLiteSchema.rebuildSearchIndex)
        }
        migrator.registerMigration("v15-search-short-cjk") { db in
            // One or two CJK characters, which no trigram finds, are looked up among each message's
            // CJK characters and pairs (SearchText.cjkGrams), at any age: before, only each
            // conversation's newest 200 messages were scanned. Words apart, so FTS5's `ascii`
            // tokenizer (no Unicode tables: every non-ASCII character is part of a word) keeps them whole.
            try db.execute(sql: "CREATE VIRTUAL TABLE message_search_grams USING fts5(text, content='', tokenize='ascii')")
            let insert = try db.makeStatement(sql: "INSERT INTO message_search_grams (rowid, text) VALUES (?, ?)")
            let rows = try Row.fetchCursor(db, sql: "SELECT rowid, text FROM messages WHERE entry IS NULL AND deleted_at IS NULL")
            while let row = try rows.next() {
                let folded = SearchText.fold(row[1])
                if SearchText.hasCJK(folded) { try insert.execute(arguments: [row[0] as Int64, SearchText.cjkGramsText(folded)]) }
            }
        }
        migrator.registerMigration("v16-commit-order-marks") { db in
            // A former member's view cut by commit order, not clock time (``CommitOrderMarks``).
            try db.execute(sql: CommitOrderMarks.migration)
        }
        migrator.registerMigration("v17-search-word-boundaries") { db in
            // A word glued to CJK (`iPhoneを買った`) is a word of its own (SearchText.wordIndexText),
            // and a query's words of three characters or more are prefixes too, which an index of
            // every term's first three characters answers without merging every word that starts
            // so (docs/benchmarks.md). The word table is made again and filled.
            try db.execute(
                sql: """
                    DROP TABLE message_search;
                    CREATE VIRTUAL TABLE message_search USING fts5(text, content='', tokenize='unicode61 remove_diacritics 2', prefix='3');
                    """)
            let add = try db.makeStatement(sql: "INSERT INTO message_search (rowid, text) VALUES (?, ?)")
            let rows = try Row.fetchCursor(db, sql: "SELECT rowid, text FROM messages WHERE entry IS NULL AND deleted_at IS NULL")
            while let row = try rows.next() {
                try add.execute(arguments: [row[0] as Int64, SearchText.wordIndexText(SearchText.fold(row[1]))])
            }
        }
        migrator.registerMigration("v18-search-unaccented-letters") { db in
            // SearchText.fold now folds the letters PostgreSQL's unaccent folds and Foundation did
            // not (ł is l, ø is o, æ is ae: SearchText.unaccentedLetters), and keeps those unaccent
            // keeps (й is not и: SearchText.keptLetters). The two tables holding folded text are
            // filled again; the grams table holds CJK alone, which this leaves.
            try SQLiteSchema.refillFoldedSearchTables(db)
        }
        migrator.registerMigration("v19-search-purges") { db in
            // SearchIndexPurge: whether the FTS5 tables may hold words of a message deleted for
            // everyone, and what is left of a rewrite under way. Pending from the start: an older
            // database may hold some.
            try db.execute(
                sql: """
                    CREATE TABLE search_index_purges (
                        id INTEGER PRIMARY KEY CHECK (id = 1), pending INTEGER NOT NULL, steps_left INTEGER NOT NULL);
                    INSERT INTO search_index_purges VALUES (1, 1, 0);
                    """)
        }
        migrator.registerMigration("v20-uploads-keep-metadata") { db in
            // An upload sent as it was (tus metadata `original`) keeps a photo's metadata (ImageMetadataScrub).
            try db.execute(sql: "ALTER TABLE uploads ADD COLUMN keeps_metadata INTEGER NOT NULL DEFAULT 0")
        }
        migrator.registerMigration("v21-tombstones-not-edited") { db in
            // A message deleted for everyone says nothing of its edits (a former member learnt of one made after they left).
            try db.execute(sql: "UPDATE messages SET edited_at = NULL WHERE deleted_at IS NOT NULL AND edited_at IS NOT NULL")
        }
        migrator.registerMigration("v22-former-reactions-keys-first") { db in
            // The key's columns first: SQLite 3.40's `PRAGMA integrity_check` reported every row of a
            // WITHOUT ROWID table whose key has a column after others ("NULL value in
            // former_reactions.emoji"), so a sound database read as damaged.
            try db.execute(sql: CommitOrderMarks.keysFirst)
        }
        return migrator
    }

    /// The word and CJK tables emptied and filled again from the messages as ``SearchIndexLog``
    /// writes them now (its rule 4): contentless tables remove an entry only given the text it was
    /// added with, so an index of an older fold must not meet a removal made with this one.
    static func refillFoldedSearchTables(_ db: Database) throws {
        try db.execute(sql: "INSERT INTO message_search(message_search) VALUES ('delete-all')")
        try db.execute(sql: "INSERT INTO message_search_cjk(message_search_cjk) VALUES ('delete-all')")
        let words = try db.makeStatement(sql: "INSERT INTO message_search (rowid, text) VALUES (?, ?)")
        let cjk = try db.makeStatement(sql: "INSERT INTO message_search_cjk (rowid, text) VALUES (?, ?)")
        let rows = try Row.fetchCursor(db, sql: "SELECT rowid, text FROM messages WHERE entry IS NULL AND deleted_at IS NULL")
        while let row = try rows.next() {
            let rowid: Int64 = row[0], folded = SearchText.fold(row[1])
            guard SearchText.hasCJK(folded) else {
                try words.execute(arguments: [rowid, folded])
                continue
            }
            try words.execute(arguments: [rowid, SearchText.wordIndexText(folded)])
            try cjk.execute(arguments: [rowid, folded])
        }
    }

    /// Both search tables filled again from the messages with the current ``SearchText/fold(_:)``:
    /// contentless tables remove an entry only given the text it was added with.
    static let rebuildSearchIndex = """
        INSERT INTO message_search(message_search) VALUES ('delete-all');
        INSERT INTO message_search_cjk(message_search_cjk) VALUES ('delete-all');
        INSERT INTO message_search(rowid, text)
            SELECT rowid, parley_fold(text) FROM messages WHERE entry IS NULL AND deleted_at IS NULL;
        INSERT INTO message_search_cjk(rowid, text)
            SELECT rowid, parley_fold(text) FROM messages
            WHERE entry IS NULL AND deleted_at IS NULL AND parley_cjk(parley_fold(text));
        """
}

/// Event kinds as stored in `events.kind`.
enum EventKind: Int64 {
    case message = 1
    case receipt = 2
    case conversation = 3
    case invitation = 4
    case receiptSummary = 5
    case messageUpdated = 6
    case messageHidden = 7
}
