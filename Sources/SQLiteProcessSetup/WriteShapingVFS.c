#define _GNU_SOURCE
#include <fcntl.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/stat.h>
#include "SQLiteProcessSetup.h"

// A VFS over the default one that gathers a commit's WAL frames into one write, and paces a
// checkpoint's writes to the database file.
//
// SQLite writes each WAL frame as two writes (its 24-byte header, then the page, at an offset that
// is not page-aligned), so a commit of N pages costs 2N pwrite calls, and the kernel takes each
// write's pages one by one: ~3 page-cache operations per frame. Here the frames are kept in memory
// and written with one pwrite when SQLite syncs the WAL.
//
// Rules:
// 1. Only a connection that asked (`PRAGMA parley_gather_wal = ON`) and whose last
//    `PRAGMA synchronous` was FULL or EXTRA gathers: such a commit syncs the WAL before it publishes
//    its frames to other connections, and the sync writes what was gathered. A connection that does
//    not sync at commit (NORMAL) would publish frames still in memory, so it never gathers.
// 2. Anything that could see the file, from this connection or another, finds what was gathered
//    written first: a sync, a read that overlaps it, the file's size, a truncate, a file control,
//    the close, and the release of the WAL's write lock (frames of a rolled-back transaction are
//    written as the default VFS would have written them, before another writer may write there).
// 3. A write inside what is gathered replaces those bytes; a write right after it extends it (up to
//    `GATHER_LIMIT` bytes); any other write first writes what was gathered.
// 4. A failed write of what was gathered is reported by the call that caused it, and what was
//    gathered is dropped (it belonged to a transaction that then fails, as with a failed pwrite).
// 5. A connection that asked (`PRAGMA parley_paced_writes = ON`, Linux) sends its database-file
//    writes to the disk every `PACE_PAGES` writes and waits for them, without a cache flush. In WAL
//    mode only checkpoints write the database file: a checkpoint's sync otherwise sent a thousand
//    scattered pages to the disk at once, and every commit's WAL sync queued behind them (at 5,000
//    sends/s, commits of 5-10 ms at each checkpoint). A write-out that fails fails the write.

#define GATHER_LIMIT (4 << 20)
// The default VFS writes at most 128 KiB at a time: it masks a longer write's length (`nBuf &=
// 0x1ffff` in os_unix.c), so a 256 KiB write writes nothing and reads as a full disk.
#define WRITE_LIMIT (124 * 1024)
#define WAL_WRITE_LOCK 0
// Rule 5: a checkpoint's database writes go to the disk 16 pages at a time.
#define PACE_PAGES 16

typedef struct GatherFile GatherFile;
struct GatherFile {
    sqlite3_file base;
    GatherFile *database;  // a WAL's database file
    GatherFile *wal;       // a database file's open WAL
    int isWAL;
    int asked;             // rule 1, on a database file
    int synchronousFull;   // rule 1, on a database file
    int descriptor;        // a database file's descriptor, or -1 (rule 5)
    int paced;             // rule 5, on a database file
    int writesSinceWriteOut;  // rule 5
    sqlite3_int64 writeOuts;  // rule 5: `PRAGMA parley_paced_writes`
    sqlite3_int64 walWritesAsked, walWritesMade;  // on a database file: `PRAGMA parley_wal_writes`
    unsigned char *buffer;
    sqlite3_int64 start;
    int length;
    int capacity;
    // the default VFS's file follows
};

#define REAL(f) ((sqlite3_file *)(((GatherFile *)(f)) + 1))

static sqlite3_vfs *defaultVFS;
static sqlite3_vfs gatherVFS;
static sqlite3_io_methods gatherMethods;

static int gathers(GatherFile *p) {
    return p->isWAL && p->database && p->database->asked && p->database->synchronousFull;
}

/// The default VFS's write, counted on the database file.
static int writeThrough(GatherFile *p, const void *data, int amount, sqlite3_int64 offset) {
    if (p->database) p->database->walWritesMade++;
    return REAL(p)->pMethods->xWrite(REAL(p), data, amount, offset);
}

static int writeGathered(GatherFile *p) {
    int length = p->length;
    p->length = 0;  // rule 4: dropped whether or not the write succeeds
    for (int done = 0; done < length; done += WRITE_LIMIT) {
        int amount = length - done < WRITE_LIMIT ? length - done : WRITE_LIMIT;
        int rc = writeThrough(p, p->buffer + done, amount, p->start + done);
        if (rc != SQLITE_OK) return rc;
    }
    return SQLITE_OK;
}

static int reserve(GatherFile *p, int needed) {
    if (needed <= p->capacity) return 1;
    int capacity = p->capacity ? p->capacity : 256 * 1024;
    while (capacity < needed) capacity *= 2;
    unsigned char *buffer = sqlite3_realloc(p->buffer, capacity);
    if (!buffer) return 0;
    p->buffer = buffer;
    p->capacity = capacity;
    return 1;
}

/// Rule 5: after every `PACE_PAGES` writes, the file's written pages are sent to the disk and
/// waited for (no cache flush: the checkpoint's sync does that).
static int pacedWrite(GatherFile *p, const void *data, int amount, sqlite3_int64 offset) {
    int rc = REAL(p)->pMethods->xWrite(REAL(p), data, amount, offset);
#ifdef __linux__
    if (rc == SQLITE_OK && ++p->writesSinceWriteOut >= PACE_PAGES) {
        p->writesSinceWriteOut = 0;
        p->writeOuts++;
        // An error here is the write's: the kernel reports a write-back error once per descriptor,
        // so the checkpoint's later sync on this descriptor would not see it.
        if (sync_file_range(p->descriptor, 0, 0,
                            SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER) != 0) {
            return SQLITE_IOERR_WRITE;
        }
    }
#endif
    return rc;
}

static int gatherWrite(sqlite3_file *f, const void *data, int amount, sqlite3_int64 offset) {
    GatherFile *p = (GatherFile *)f;
    if (!p->isWAL) {
        if (p->paced && p->descriptor >= 0) return pacedWrite(p, data, amount, offset);
        return REAL(f)->pMethods->xWrite(REAL(f), data, amount, offset);
    }
    if (p->database) p->database->walWritesAsked++;
    if (gathers(p)) {
        sqlite3_int64 end = p->start + p->length;
        if (p->length > 0 && offset >= p->start && offset + amount <= end) {
            memcpy(p->buffer + (offset - p->start), data, amount);
            return SQLITE_OK;
        }
        if (p->length > 0 && offset == end && p->length + amount <= GATHER_LIMIT && reserve(p, p->length + amount)) {
            memcpy(p->buffer + p->length, data, amount);
            p->length += amount;
            return SQLITE_OK;
        }
        int rc = writeGathered(p);
        if (rc != SQLITE_OK) return rc;
        if (amount <= GATHER_LIMIT && reserve(p, amount)) {
            memcpy(p->buffer, data, amount);
            p->start = offset;
            p->length = amount;
            return SQLITE_OK;
        }
    } else {
        int rc = writeGathered(p);
        if (rc != SQLITE_OK) return rc;
    }
    return writeThrough(p, data, amount, offset);
}

static int gatherRead(sqlite3_file *f, void *data, int amount, sqlite3_int64 offset) {
    GatherFile *p = (GatherFile *)f;
    if (p->length > 0 && offset < p->start + p->length && offset + amount > p->start) {
        int rc = writeGathered(p);
        if (rc != SQLITE_OK) return rc;
    }
    return REAL(f)->pMethods->xRead(REAL(f), data, amount, offset);
}

static int gatherClose(sqlite3_file *f) {
    GatherFile *p = (GatherFile *)f;
    int rc = writeGathered(p);
    if (p->isWAL && p->database && p->database->wal == p) p->database->wal = NULL;
    if (p->wal) p->wal->database = NULL;
    sqlite3_free(p->buffer);
    p->buffer = NULL;
    int closed = REAL(f)->pMethods->xClose(REAL(f));
    return rc != SQLITE_OK ? rc : closed;
}

static int gatherSync(sqlite3_file *f, int flags) {
    int rc = writeGathered((GatherFile *)f);
    return rc != SQLITE_OK ? rc : REAL(f)->pMethods->xSync(REAL(f), flags);
}

static int gatherTruncate(sqlite3_file *f, sqlite3_int64 size) {
    int rc = writeGathered((GatherFile *)f);
    return rc != SQLITE_OK ? rc : REAL(f)->pMethods->xTruncate(REAL(f), size);
}

static int gatherFileSize(sqlite3_file *f, sqlite3_int64 *size) {
    int rc = writeGathered((GatherFile *)f);
    return rc != SQLITE_OK ? rc : REAL(f)->pMethods->xFileSize(REAL(f), size);
}

static int isOneOf(const char *value, const char *const *words) {
    for (; *words; words++) if (sqlite3_stricmp(value, *words) == 0) return 1;
    return 0;
}

/// Rule 1: `parley_gather_wal` is this VFS's own pragma; `synchronous` is noted, then left to SQLite.
static int notePragma(GatherFile *p, char **arguments) {
    static const char *const on[] = {"on", "1", "true", "yes", NULL};
    static const char *const full[] = {"full", "extra", "2", "3", NULL};
    const char *name = arguments[1], *value = arguments[2];
    if (sqlite3_stricmp(name, "parley_gather_wal") == 0) {
        if (value) p->asked = isOneOf(value, on);
        arguments[0] = sqlite3_mprintf("%d", p->asked && p->synchronousFull);
        return SQLITE_OK;
    }
    if (sqlite3_stricmp(name, "parley_paced_writes") == 0) {
        // Rule 5: "on" (1 or 0: whether it is in effect) and the write-outs made so far.
        if (value) p->paced = isOneOf(value, on);
        arguments[0] = sqlite3_mprintf("%d %lld", p->paced && p->descriptor >= 0, p->writeOuts);
        return SQLITE_OK;
    }
    if (sqlite3_stricmp(name, "parley_wal_writes") == 0) {
        // What SQLite asked of this connection's WAL, and what reached the default VFS (tests).
        arguments[0] = sqlite3_mprintf("%lld %lld", p->walWritesAsked, p->walWritesMade);
        return SQLITE_OK;
    }
    if (sqlite3_stricmp(name, "synchronous") == 0 && value) {
        if (p->wal) writeGathered(p->wal);
        p->synchronousFull = isOneOf(value, full);
    }
    return SQLITE_NOTFOUND;
}

static int gatherFileControl(sqlite3_file *f, int op, void *argument) {
    GatherFile *p = (GatherFile *)f;
    if (op == SQLITE_FCNTL_PRAGMA && !p->isWAL) {
        int rc = notePragma(p, (char **)argument);
        if (rc != SQLITE_NOTFOUND) return rc;
    }
    int rc = writeGathered(p);
    return rc != SQLITE_OK ? rc : REAL(f)->pMethods->xFileControl(REAL(f), op, argument);
}

static int gatherShmLock(sqlite3_file *f, int offset, int n, int flags) {
    GatherFile *p = (GatherFile *)f;
    if (p->wal && offset <= WAL_WRITE_LOCK && WAL_WRITE_LOCK < offset + n && (flags & SQLITE_SHM_UNLOCK)) {
        // Rule 4: a failure drops what was gathered; the lock is released whatever happens.
        writeGathered(p->wal);
    }
    return REAL(f)->pMethods->xShmLock(REAL(f), offset, n, flags);
}

// Everything else is the default VFS's own.
static int gatherLock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xLock(REAL(f), level); }
static int gatherUnlock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xUnlock(REAL(f), level); }
static int gatherCheckReservedLock(sqlite3_file *f, int *out) { return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out); }
static int gatherSectorSize(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int gatherDeviceCharacteristics(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int gatherShmMap(sqlite3_file *f, int region, int size, int extend, void volatile **out) {
    return REAL(f)->pMethods->xShmMap(REAL(f), region, size, extend, out);
}
static void gatherShmBarrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int gatherShmUnmap(sqlite3_file *f, int deleteFlag) { return REAL(f)->pMethods->xShmUnmap(REAL(f), deleteFlag); }
static int gatherFetch(sqlite3_file *f, sqlite3_int64 offset, int amount, void **out) {
    return REAL(f)->pMethods->xFetch(REAL(f), offset, amount, out);
}
static int gatherUnfetch(sqlite3_file *f, sqlite3_int64 offset, void *page) {
    return REAL(f)->pMethods->xUnfetch(REAL(f), offset, page);
}

/// Rule 5: the default VFS's descriptor of `name`, or -1. The unix VFS keeps it after three
/// pointers (`pMethod`, `pVfs`, `pInode`, then `int h`: unchanged since 2010); it is taken only if it
/// is open on the very file `name` names, so another layout turns pacing off, nothing else.
static int descriptorOf(sqlite3_file *real, const char *name) {
#ifdef __linux__
    int h = *(int *)((char *)real + 3 * sizeof(void *));
    struct stat opened, named;
    if (h >= 0 && fstat(h, &opened) == 0 && stat(name, &named) == 0 && opened.st_dev == named.st_dev &&
        opened.st_ino == named.st_ino) {
        return h;
    }
#endif
    return -1;
}

static int gatherOpen(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags, int *outFlags) {
    GatherFile *p = (GatherFile *)f;
    memset(p, 0, sizeof(GatherFile));
    int rc = defaultVFS->xOpen(defaultVFS, name, REAL(f), flags, outFlags);
    if (rc != SQLITE_OK || REAL(f)->pMethods == NULL || REAL(f)->pMethods->iVersion < 3) {
        // Not wrapped: a file this VFS cannot pass every call of through is refused.
        if (rc == SQLITE_OK && REAL(f)->pMethods) REAL(f)->pMethods->xClose(REAL(f));
        p->base.pMethods = NULL;
        return rc == SQLITE_OK ? SQLITE_CANTOPEN : rc;
    }
    p->base.pMethods = &gatherMethods;
    p->descriptor = -1;
    if ((flags & SQLITE_OPEN_MAIN_DB) && name) p->descriptor = descriptorOf(REAL(f), name);
    if ((flags & SQLITE_OPEN_WAL) && name) {
        sqlite3_file *database = sqlite3_database_file_object(name);
        if (database && database->pMethods == &gatherMethods) {
            p->isWAL = 1;
            p->database = (GatherFile *)database;
            p->database->wal = p;
        }
    }
    return SQLITE_OK;
}

static int gatherDelete(sqlite3_vfs *v, const char *n, int s) { return defaultVFS->xDelete(defaultVFS, n, s); }
static int gatherAccess(sqlite3_vfs *v, const char *n, int fl, int *o) { return defaultVFS->xAccess(defaultVFS, n, fl, o); }
static int gatherFullPathname(sqlite3_vfs *v, const char *n, int l, char *o) {
    return defaultVFS->xFullPathname(defaultVFS, n, l, o);
}
static void *gatherDlOpen(sqlite3_vfs *v, const char *n) { return defaultVFS->xDlOpen(defaultVFS, n); }
static void gatherDlError(sqlite3_vfs *v, int l, char *o) { defaultVFS->xDlError(defaultVFS, l, o); }
static void (*gatherDlSym(sqlite3_vfs *v, void *h, const char *s))(void) { return defaultVFS->xDlSym(defaultVFS, h, s); }
static void gatherDlClose(sqlite3_vfs *v, void *h) { defaultVFS->xDlClose(defaultVFS, h); }
static int gatherRandomness(sqlite3_vfs *v, int l, char *o) { return defaultVFS->xRandomness(defaultVFS, l, o); }
static int gatherSleep(sqlite3_vfs *v, int m) { return defaultVFS->xSleep(defaultVFS, m); }
static int gatherCurrentTime(sqlite3_vfs *v, double *o) { return defaultVFS->xCurrentTime(defaultVFS, o); }
static int gatherGetLastError(sqlite3_vfs *v, int l, char *o) { return defaultVFS->xGetLastError(defaultVFS, l, o); }
static int gatherCurrentTimeInt64(sqlite3_vfs *v, sqlite3_int64 *o) { return defaultVFS->xCurrentTimeInt64(defaultVFS, o); }

int parley_gathered_wal_writes_register(void) {
    defaultVFS = sqlite3_vfs_find(NULL);
    if (!defaultVFS || defaultVFS->iVersion < 2) return 0;
    gatherMethods = (sqlite3_io_methods){
        3, gatherClose, gatherRead, gatherWrite, gatherTruncate, gatherSync, gatherFileSize, gatherLock,
        gatherUnlock, gatherCheckReservedLock, gatherFileControl, gatherSectorSize, gatherDeviceCharacteristics,
        gatherShmMap, gatherShmLock, gatherShmBarrier, gatherShmUnmap, gatherFetch, gatherUnfetch,
    };
    gatherVFS = (sqlite3_vfs){
        2, (int)sizeof(GatherFile) + defaultVFS->szOsFile, defaultVFS->mxPathname, NULL, "parley-gathered-wal", NULL,
        gatherOpen, gatherDelete, gatherAccess, gatherFullPathname, gatherDlOpen, gatherDlError, gatherDlSym,
        gatherDlClose, gatherRandomness, gatherSleep, gatherCurrentTime, gatherGetLastError, gatherCurrentTimeInt64,
    };
    return sqlite3_vfs_register(&gatherVFS, 1) == SQLITE_OK;
}
