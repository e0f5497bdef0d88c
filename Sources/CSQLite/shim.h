#pragma once
#include <sqlite3.h>

/// `sqlite3_config` is variadic, which Swift cannot call: this turns off SQLite's memory statistics (a global
/// mutex taken around every allocation and free, ~5 % of an import's CPU; Roost never reads them). Only valid
/// before SQLite is initialised (the first connection opened); returns SQLITE_MISUSE afterwards.
static inline int roost_sqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
