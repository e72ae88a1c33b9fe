#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast macro Swift cannot import.
static inline sqlite3_destructor_type rchat_sqlite_transient(void) { return SQLITE_TRANSIENT; }

// Closing this connection leaves the database and its write-ahead log exactly as they are
// (no checkpoint). sqlite3_db_config is variadic, which Swift cannot call.
static inline int rchat_sqlite_no_checkpoint_on_close(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}
