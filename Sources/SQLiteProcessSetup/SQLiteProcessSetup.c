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

// `parley_width_forms(text)`: 1 when UTF-8 text holds what NFKC turns into CJK or changes inside
// it, as SearchText.fold does: conjoining Hangul jamo U+1100–11FF (decomposed Hangul, as macOS file
// names and some keyboards write it), Kangxi radicals U+2F00–2FDF, Hangul compatibility jamo
// U+3130–318F (ㄱ is U+1100 after NFKC), enclosed CJK and CJK compatibility squares U+3200–33FF
// (㈱, ㍻), voiced sound marks U+3099–309C, compatibility ideographs U+F900–FAFF, half-width forms
// U+FF61–FFDC. A short CJK search checks its term in each message the grams index names; this byte
// scan lets it fold (in Swift, costly per call) only the few messages the fold changes.
static void parley_width_forms(sqlite3_context *context, int argc, sqlite3_value **argv) {
    (void)argc;
    const unsigned char *s = sqlite3_value_text(argv[0]);
    int n = sqlite3_value_bytes(argv[0]);
    for (int i = 0; s && i + 2 < n; i++) {
        if ((s[i] == 0xE1 && s[i + 1] >= 0x84 && s[i + 1] <= 0x87)
            || (s[i] == 0xE2 && s[i + 1] >= 0xBC && s[i + 1] <= 0xBF)
            || (s[i] == 0xE3 && s[i + 1] >= 0x88 && s[i + 1] <= 0x8F)
            || (s[i] == 0xE3 && ((s[i + 1] == 0x84 && s[i + 2] >= 0xB0) || s[i + 1] == 0x85 || (s[i + 1] == 0x86 && s[i + 2] <= 0x8F)))
            || (s[i] == 0xE3 && s[i + 1] == 0x82 && s[i + 2] >= 0x99 && s[i + 2] <= 0x9C)) {
            sqlite3_result_int(context, 1);
            return;
        }
        if (s[i] == 0xEF) {
            unsigned int cp = 0xF000u | ((s[i + 1] & 0x3Fu) << 6) | (s[i + 2] & 0x3Fu);
            if ((cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0xFF61 && cp <= 0xFFDC)) {
                sqlite3_result_int(context, 1);
                return;
            }
        }
    }
    sqlite3_result_int(context, 0);
}

int parley_register_search_functions(void *db) {
    return sqlite3_create_function_v2(
        (sqlite3 *)db, "parley_width_forms", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, 0, parley_width_forms, 0, 0, 0);
}
