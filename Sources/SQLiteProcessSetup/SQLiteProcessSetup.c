#include <sqlite3.h>
#include "SQLiteProcessSetup.h"

// SQLite's process-wide options can only be set before SQLite initializes, and not while another
// thread uses it (sqlite3_config is neither thread-safe nor callable from Swift, being variadic).
// A constructor runs when the binary loads, before main and before any thread starts: the one
// moment that is safe.
//
// Memory statistics off: with them on (Debian's default), every allocation and free inside SQLite
// takes one process-wide mutex to count bytes, shared by the writer, the readers and the
// checkpointer. The server reads no SQLite memory statistics. Measured in docs/benchmarks.md.
//
// Then the VFS that gathers WAL writes (WriteShapingVFS.c) becomes the default: registering a VFS
// initializes SQLite, so it comes after the options.
static int applied = 0;
static int gatheringRegistered = 0;

__attribute__((constructor)) static void parley_sqlite_process_setup(void) {
    applied = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK;
    gatheringRegistered = parley_gathered_wal_writes_register();
}

int parley_sqlite_process_setup_applied(void) { return applied; }

int parley_gathered_wal_writes_registered(void) { return gatheringRegistered; }
