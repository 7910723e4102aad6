#include <sqlite3.h>
/* statfs(2), for refusing WAL keychains on network file systems (Store/FileSafety.swift). */
#include <sys/vfs.h>

/* sqlite3_db_config is variadic, which Swift cannot call: one boolean setting at a time
   (Store/Database.swift turns on defensive mode and turns off triggers, views and the
   trusted schema). Returns SQLite's result code; *applied receives the setting now in force. */
static inline int kc_sqlite3_db_config_bool(sqlite3 *db, int op, int value, int *applied) {
    return sqlite3_db_config(db, op, value, applied);
}
