#ifndef SQLITE_PROCESS_SETUP_H
#define SQLITE_PROCESS_SETUP_H

/// Whether this process's SQLite was set up before its first use (see SQLiteProcessSetup.c):
/// 1 if the set-up ran and SQLite accepted it.
int parley_sqlite_process_setup_applied(void);

/// Makes the VFS that gathers a commit's WAL frames into one write (WriteShapingVFS.c) the default;
/// 1 if it is. Called by the set-up; a connection gathers only once it asks, with
/// `PRAGMA parley_gather_wal = ON`, and only while its `PRAGMA synchronous` is FULL or EXTRA.
int parley_gathered_wal_writes_register(void);

/// Whether the set-up registered that VFS.
int parley_gathered_wal_writes_registered(void);

/// Adds `parley_width_forms(text)` to a connection (a `sqlite3 *`): 1 when the text holds what NFKC
/// changes inside CJK (see SQLiteProcessSetup.c). SQLITE_OK when added.
int parley_register_search_functions(void *db);

#endif
