import GRDB
import GRDBSQLite
import ParleyStore

/// The search index writes of one group-commit batch (docs/protocol.md "Search"), kept in order
/// and applied to the three FTS5 tables after the batch's jobs, in the batch's transaction.
///
/// Why not triggers: a statement on an FTS5 table inside a savepoint (every job runs in one, and a
/// trigger's statement journal opens one too) makes FTS5 flush its pending terms to a new segment,
/// so a trigger wrote one segment per message: +39 % server CPU per send (docs/benchmarks.md). Kept
/// here, a batch's terms reach the index as one segment at the commit.
///
/// Rules:
/// 1. Every write of the index goes through the log, in the order the jobs made them (an edit
///    after a send in the same batch removes what the send added, then adds the new text).
/// 2. A job that fails takes its entries back with it (``rollBack(to:)`` to the ``mark`` taken
///    before it ran), as its savepoint takes back its rows.
/// 3. ``apply(_:)`` runs inside the batch's transaction, before the commit: a message is findable
///    once acknowledged, and a failed apply fails the whole batch (nothing of it was written).
/// 4. The text indexed is ``SearchText/fold(_:)`` of the message's text: in the word table spaced
///    where CJK meets the rest (``SearchText/wordIndexText(_:)``), as written in the CJK table when
///    the folded text has CJK (half-width katakana folds into it), and its ``SearchText/cjkGrams(_:)``
///    in the grams table; a removal gives back exactly what was added (contentless tables need the values).
/// 5. Nothing is applied outside a transaction: SQLite rolls the whole transaction back on a full
///    disk or an I/O error, and index rows written after that in autocommit would outlive their
///    messages (and their rowids would find the next messages).
///
/// Only the writer touches it, one batch at a time, like ``WriterStatements``.
final class SearchIndexLog: DeferredBatchWrites, @unchecked Sendable {
    private enum Entry {
        case add(rowid: Int64, text: String)
        case remove(rowid: Int64, text: String)
    }

    private var entries: [Entry] = []
    private let connection: OpaquePointer
    private let insertWords: RawStatement
    private let insertCJK: RawStatement
    private let deleteWords: RawStatement
    private let deleteCJK: RawStatement
    private let insertGrams: RawStatement
    private let deleteGrams: RawStatement

    init(on connection: OpaquePointer) throws {
        self.connection = connection
        insertWords = try RawStatement("INSERT INTO message_search (rowid, text) VALUES (?, ?)", on: connection)
        insertCJK = try RawStatement("INSERT INTO message_search_cjk (rowid, text) VALUES (?, ?)", on: connection)
        deleteWords = try RawStatement(
            "INSERT INTO message_search (message_search, rowid, text) VALUES ('delete', ?, ?)", on: connection)
        deleteCJK = try RawStatement(
            "INSERT INTO message_search_cjk (message_search_cjk, rowid, text) VALUES ('delete', ?, ?)", on: connection)
        insertGrams = try RawStatement("INSERT INTO message_search_grams (rowid, text) VALUES (?, ?)", on: connection)
        deleteGrams = try RawStatement(
            "INSERT INTO message_search_grams (message_search_grams, rowid, text) VALUES ('delete', ?, ?)", on: connection)
    }

    /// The message stored at `rowid` with `text` becomes findable.
    func add(rowid: Int64, text: String) { entries.append(.add(rowid: rowid, text: text)) }

    /// The message at `rowid`, indexed with `text`, is findable no more (edited or deleted).
    func remove(rowid: Int64, text: String) { entries.append(.remove(rowid: rowid, text: text)) }

    /// Where the log stands before a job (rule 2).
    var mark: Int { entries.count }

    /// Forgets what was logged since `mark` (rule 2).
    func rollBack(to mark: Int) { entries.removeSubrange(mark...) }

    private func reset() { entries.removeAll(keepingCapacity: true) }

    /// Writes the logged entries in order and empties the log (rules 1, 3 and 4).
    func apply(_ db: Database) throws {
        defer { reset() }
        guard !entries.isEmpty else { return }
        guard sqlite3_get_autocommit(connection) == 0 else {  // rule 5
            throw DatabaseError(resultCode: .SQLITE_ABORT, message: "The batch's transaction was rolled back")
        }
        for entry in entries {
            switch entry {
            case .add(let rowid, let text):
                let folded = SearchText.fold(text), cjk = SearchText.hasCJK(folded)
                try insertWords.execute(.int(rowid), .text(cjk ? SearchText.wordIndexText(folded) : folded))
                if cjk {
                    try insertCJK.execute(.int(rowid), .text(folded))
                    try insertGrams.execute(.int(rowid), .text(SearchText.cjkGramsText(folded)))
                }
            case .remove(let rowid, let text):
                let folded = SearchText.fold(text), cjk = SearchText.hasCJK(folded)
                try deleteWords.execute(.int(rowid), .text(cjk ? SearchText.wordIndexText(folded) : folded))
                if cjk {
                    try deleteCJK.execute(.int(rowid), .text(folded))
                    try deleteGrams.execute(.int(rowid), .text(SearchText.cjkGramsText(folded)))
                }
            }
        }
    }

    func finalize() {
        for statement in [insertWords, insertCJK, deleteWords, deleteCJK, insertGrams, deleteGrams] { statement.finalize() }
    }
}
