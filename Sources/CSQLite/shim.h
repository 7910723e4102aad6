#include <sqlite3.h>
/* statfs(2), for refusing WAL keychains on network file systems (Store/FileSafety.swift). */
#include <sys/vfs.h>
