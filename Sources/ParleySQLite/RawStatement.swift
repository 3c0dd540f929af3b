import GRDB
import GRDBSQLite

/// A statement prepared once and run through SQLite's C API. On the group-commit writer GRDB's
/// per-run work (boxing each argument, looking the statement up by its SQL text, GRDB's bookkeeping
/// before and after each run) cost more CPU than SQLite's own work, for ~8 statements per message.
///
/// Rules:
/// 1. Only on the connection that prepared it, by one thread at a time: on the pool's writer only
///    inside a transaction GRDB opened (GRDB then still owns the transaction and its savepoints, and
///    these statements only read and write rows); on a lookup connection as ``LookupConnections``
///    says.
/// 2. Each run binds every parameter, and ends with the statement reset and its bindings cleared,
///    whether it succeeded or threw: no read lock or stale argument outlives a run.
/// 3. A failing step throws GRDB's `DatabaseError` with SQLite's extended code, so callers classify
///    it like any other storage error (a full disk stays `storageUnavailable`).
final class RawStatement {
    private let handle: OpaquePointer
    private let connection: OpaquePointer
    private let sql: String

    init(_ sql: String, on connection: OpaquePointer) throws {
        var handle: OpaquePointer?
        let code = sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        guard code == SQLITE_OK, let handle else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)), sql: sql)
        }
        self.handle = handle
        self.connection = connection
        self.sql = sql
    }

    /// Releases the statement: before its connection closes (SQLite refuses to close a connection
    /// with statements left), and never run after.
    func finalize() { sqlite3_finalize(handle) }

    /// Runs with `values` bound to the parameters in order; returns the first row read by `read`, or
    /// nil when there is none.
    func firstRow<T>(_ values: RawValue..., read: (RawRow) -> T) throws -> T? {
        defer { clear() }
        bind(values)
        guard try step() else { return nil }
        return read(RawRow(handle: handle))
    }

    /// Runs with `values` bound and returns every row read by `read`.
    func rows<T>(_ values: RawValue..., read: (RawRow) -> T) throws -> [T] {
        defer { clear() }
        bind(values)
        var rows: [T] = []
        while try step() { rows.append(read(RawRow(handle: handle))) }
        return rows
    }

    /// Runs a statement that returns no rows.
    func execute(_ values: RawValue...) throws {
        defer { clear() }
        bind(values)
        while try step() {}
    }

    private func bind(_ values: [RawValue]) {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case .int(let int): sqlite3_bind_int64(handle, index, int)
            case .null: sqlite3_bind_null(handle, index)
            case .text(var text):
                text.withUTF8 { bytes in
                    // An empty buffer may have no address, and a null pointer would bind NULL.
                    guard let start = bytes.baseAddress else { return _ = sqlite3_bind_text(handle, index, "", 0, Self.transient) }
                    _ = sqlite3_bind_text(handle, index, UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self), Int32(bytes.count), Self.transient)
                }
            }
        }
    }

    private func step() throws -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            throw DatabaseError(
                resultCode: ResultCode(rawValue: sqlite3_extended_errcode(connection)),
                message: String(cString: sqlite3_errmsg(connection)), sql: sql)
        }
    }

    private func clear() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// SQLite copies the text it is given (`SQLITE_TRANSIENT`), so no Swift string must outlive the call.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}

/// A parameter of a ``RawStatement``.
enum RawValue {
    case text(String)
    case int(Int64)
    case null
}

/// The current row of a ``RawStatement``, valid only inside the `read` closure.
struct RawRow {
    fileprivate let handle: OpaquePointer

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    /// The column's UTF-8 text, all of its bytes (a message may hold a NUL).
    func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, column))), as: UTF8.self)
    }
}
