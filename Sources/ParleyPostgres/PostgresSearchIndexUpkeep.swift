import Logging
import PostgresNIO
import Synchronization

/// Merges the pending lists of the search indexes in the background, so no send waits while an
/// index catches up.
///
/// Rules:
/// 1. A GIN index queues new entries in a pending list and merges the list into the index when it
///    outgrows `gin_pending_list_limit` (4 MB), in the backend whose insert crossed the limit. For
///    Parley that backend is a node's send runner: one insert in ~28,000 took 200–320 ms, and every
///    send of the node waited behind it (docs/benchmarks.md "The search indexes' pending lists").
/// 2. So every node merges the lists itself every second (``start(_:every:)``) on a pooled connection
///    (`gin_clean_pending_list`), and they never grow near the limit. An insert that finds a merge
///    under way does not wait for it, and a merge does not hold inserts back. Merged in bulk, the
///    entries cost PostgreSQL less than taken one by one (`fastupdate = off` cost 45–67 µs more per
///    message), and searches read a short list.
/// 3. Nodes merging at once take turns on the index's cleanup lock; the later ones find little left.
/// 4. An error (an outage, a standby) is tried again at the next interval; a role that does not own
///    the indexes cannot merge them, which is said once, and the node goes on without merging.
enum PostgresSearchIndexUpkeep {
    /// Every GIN index of `messages`: the words, the CJK trigrams and the CJK characters.
    static let indexes = ["messages_words", "messages_cjk", "messages_cjk_chars"]

    /// One statement for all of them; it answers the pages merged.
    static let merge = "SELECT " + indexes.map { "gin_clean_pending_list('\($0)'::regclass)" }.joined(separator: " + ")

    /// Merges every index's pending list now; the pages that were pending.
    static func mergePending(_ store: PostgresStore) async throws -> Int {
        try await store.read { connection in
            var pages = 0
            for try await merged in try await connection.query(PostgresQuery(unsafeSQL: merge), logger: store.logger).decode(Int.self) {
                pages = merged
            }
            return pages
        }
    }

    /// Rule 2's loop, until cancelled (the store's close) or the store is gone (it holds the store
    /// only while it merges, so a store dropped without `close` does not query on forever).
    static func start(_ store: PostgresStore, every interval: Duration) -> Task<Void, Never> {
        Task { [weak store] in
            while true {
                do { try await Task.sleep(for: interval) } catch { return }
                guard let store else { return }
                do {
                    store.searchIndexPagesMerged.add(try await mergePending(store), ordering: .relaxed)
                } catch let error as PSQLError where error.sqlState == "42501" {
                    store.logger.notice(
                        "The search indexes' pending lists are left to PostgreSQL: this role does not own them",
                        metadata: ["indexes": "\(indexes.joined(separator: ", "))"])
                    return
                } catch {
                    if Task.isCancelled { return }
                }
            }
        }
    }
}
