#ifndef SQLITE_PROCESS_SETUP_H
#define SQLITE_PROCESS_SETUP_H

/// Whether this process's SQLite was set up before its first use (see SQLiteProcessSetup.c):
/// 1 if the set-up ran and SQLite accepted it.
int parley_sqlite_process_setup_applied(void);

#endif
