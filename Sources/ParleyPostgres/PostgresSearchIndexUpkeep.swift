/// Migration `v21-search-index-no-pending-list`: the search indexes take each message as it is
/// written, so no send waits for a quarter of a second while the index catches up.
///
/// Rules:
/// 1. A GIN index by default queues new entries in a pending list and merges it into the index
///    when it outgrows `gin_pending_list_limit` (4 MB), in the backend whose insert crossed the
///    limit. For Parley that backend is a node's send runner: one insert in ~28,000 took 200–290 ms
///    (docs/benchmarks.md "The search index's pending list"), and every send of that node waited
///    behind it. With `fastupdate = off` each insert pays its own share (~30 µs more a message),
///    and no insert pays for the others.
/// 2. Searches no longer read the pending list, which they scanned in full on every query.
/// 3. Turning it off leaves the entries already queued where they are, so the migration merges
///    them (`gin_clean_pending_list`) in the same transaction.
enum PostgresSearchIndexUpkeep {
    /// Every GIN index of `messages`: the words, the CJK trigrams and the CJK characters.
    static let indexes = ["messages_words", "messages_cjk", "messages_cjk_chars"]

    static let statements =
        indexes.map { "ALTER INDEX \($0) SET (fastupdate = off)" }
        + indexes.map { "SELECT gin_clean_pending_list('\($0)'::regclass)" }
}
