import GRDB

/// Rewrites the FTS5 tables after a delete for everyone, so the message's words leave the file.
///
/// FTS5 removes an entry of a contentless table by writing a tombstone to a new segment; the
/// words stay in the older segment until a merge brings the two together (SQLite 3.42's
/// `secure-delete` would erase them in place; Debian 12 ships 3.40). A `'merge'` with a negative
/// page count merges every segment into one, a bounded number of pages per call, so the rewrite
/// runs as short write transactions beside the sends instead of one long `'optimize'`.
///
/// Rules:
/// 1. A delete for everyone marks the purge pending in its own transaction (``markPending(_:)``),
///    so a crash cannot lose the mark.
/// 2. A step that finds it pending clears it and starts a rewrite of at most twice the tables'
///    pages in steps of ``pagesPerStep`` (then `steps_left`): a merge that meets new segments
///    written meanwhile goes on with them, and the budget ends it after everything that was there
///    has been merged once.
/// 3. A rewrite ends when no table has anything left to merge, or its budget is spent; a delete
///    made during it marks the purge pending again, and the next step starts another.
enum SearchIndexPurge {
    static let tables = ["message_search", "message_search_cjk", "message_search_grams"]
    static let pagesPerStep = 50

    /// Rule 1.
    static func markPending(_ db: Database) throws {
        try db.cachedStatement(sql: "UPDATE search_index_purges SET pending = 1 WHERE pending = 0").execute()
    }

    /// One step (rules 2 and 3); whether another should follow.
    static func step(_ db: Database) throws -> Bool {
        guard let row = try Row.fetchOne(db, sql: "SELECT pending, steps_left FROM search_index_purges") else { return false }
        var (pending, stepsLeft): (Bool, Int) = (row[0], row[1])
        if pending {
            let pages = try tables.reduce(0) { total, table in total + (try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)_data") ?? 0) }
            (pending, stepsLeft) = (false, 2 * pages / pagesPerStep + 2)
        }
        guard stepsLeft > 0 else { return false }
        var merged = false
        for table in tables {
            let before = db.totalChangesCount
            try db.execute(sql: "INSERT INTO \(table) (\(table), rank) VALUES ('merge', ?)", arguments: [-pagesPerStep])
            merged = merged || db.totalChangesCount - before >= 2  // FTS5: fewer than 2 changes, nothing left to merge
        }
        stepsLeft = merged ? stepsLeft - 1 : 0
        try db.execute(sql: "UPDATE search_index_purges SET pending = ?, steps_left = ?", arguments: [pending, stepsLeft])
        return stepsLeft > 0
    }
}
