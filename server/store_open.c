/* server/store_open.c -- rspwalkd's store file: its path, directory and
 * lock, the connection's settings, the schema and its migrations, open and
 * close.  The calls on an open store are server/store.c's.
 */
#define _DEFAULT_SOURCE /* flock */

#include "server/store.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/store_impl.h"

/* PRAGMA application_id: "RSWD", so a file of another program is told from
 * an rspwalkd store before anything is written to it. */
#define STORE_APP_ID 0x52535744

/* How long a call waits for a lock another process holds on the file (the
 * sqlite3 shell, a backup copying it) before it fails: long enough for a
 * backup step, short enough that a request does not hang. */
#define STORE_BUSY_MS 5000

/* The schema, one migration per version: store_migrations[V] takes a store
 * from PRAGMA user_version V to V + 1 inside open's transaction.  A new
 * version appends an entry; an entry that has shipped is never edited.
 * Ids are AUTOINCREMENT so that a deleted target's or run's id is never
 * handed out again (a client may still hold it).  The child key of every
 * foreign key is indexed so a cascade does not scan its table. */
static const char *const store_migrations[] = {
    /* 0 -> 1 */
    "CREATE TABLE targets ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  name TEXT,"
    "  target TEXT NOT NULL,"
    "  exe TEXT,"
    "  sysroot TEXT,"
    "  created_us INTEGER NOT NULL);"
    "CREATE TABLE snapshots ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  target_id INTEGER NOT NULL REFERENCES targets(id) ON DELETE CASCADE,"
    "  time_us INTEGER NOT NULL,"
    "  doc TEXT NOT NULL);"
    "CREATE INDEX snapshots_by_target ON snapshots(target_id, id);"
    "CREATE TABLE samples ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  targets TEXT NOT NULL CHECK (json_valid(targets) AND json_type(targets) = 'array'),"
    "  hz REAL NOT NULL,"
    "  seconds REAL NOT NULL,"
    "  started_us INTEGER NOT NULL,"
    "  ended_us INTEGER NOT NULL DEFAULT 0,"
    "  state TEXT NOT NULL CHECK (state IN ('running', 'done', 'failed', 'interrupted')));"
    "CREATE TABLE sample_stacks ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  sample_id INTEGER NOT NULL REFERENCES samples(id) ON DELETE CASCADE,"
    "  target_id INTEGER NOT NULL REFERENCES targets(id) ON DELETE CASCADE,"
    "  time_us INTEGER NOT NULL,"
    "  doc TEXT NOT NULL);"
    "CREATE INDEX sample_stacks_by_sample ON sample_stacks(sample_id, id);"
    "CREATE INDEX sample_stacks_by_target ON sample_stacks(target_id);",
    /* 1 -> 2: a run's samples as folded call paths with counts, a row per
     * distinct (target, thread, path), and how many samples of each target
     * are in (server/store.h, srv_store_sample_paths_add). */
    "CREATE TABLE sample_paths ("
    "  sample_id INTEGER NOT NULL REFERENCES samples(id) ON DELETE CASCADE,"
    "  target_id INTEGER NOT NULL REFERENCES targets(id) ON DELETE CASCADE,"
    "  thread TEXT NOT NULL,"
    "  path TEXT NOT NULL,"
    "  count INTEGER NOT NULL CHECK (count > 0),"
    "  PRIMARY KEY (sample_id, target_id, thread, path)) WITHOUT ROWID;"
    "CREATE INDEX sample_paths_by_target ON sample_paths(target_id);"
    "CREATE TABLE sample_counts ("
    "  sample_id INTEGER NOT NULL REFERENCES samples(id) ON DELETE CASCADE,"
    "  target_id INTEGER NOT NULL REFERENCES targets(id) ON DELETE CASCADE,"
    "  samples INTEGER NOT NULL,"
    "  last_us INTEGER NOT NULL,"
    "  PRIMARY KEY (sample_id, target_id)) WITHOUT ROWID;"
    "CREATE INDEX sample_counts_by_target ON sample_counts(target_id);",
    /* 2 -> 3: the RTOS a board's tasks are read with (srv_target_spec.rtos). */
    "ALTER TABLE targets ADD COLUMN rtos TEXT CHECK (rtos IS NULL OR rtos IN ('freertos', "
    "'auto'));",
};

#define STORE_SCHEMA_VERSION ((int)(sizeof store_migrations / sizeof store_migrations[0]))

/* The stores open in this process, so that a second open of one of them is
 * refused before it opens the file: closing that second descriptor would
 * drop SQLite's POSIX locks on the file (they belong to the process), and
 * another process could then delete the -wal file under the first store. */
static pthread_mutex_t store_open_lock = PTHREAD_MUTEX_INITIALIZER;

static struct srv_store *store_open_list;

int
srv_store_default_path(char *buf, size_t len)
{
    const char *base = getenv("XDG_STATE_HOME");
    const char *tail = "/rspwalk/rspwalkd.db";
    /* The XDG Base Directory spec: a relative value is invalid and ignored. */
    if (!base || base[0] != '/') {
        const char *home = getenv("HOME");
        if (!home || home[0] != '/') {
            struct passwd *pw = getpwuid(getuid());
            home = pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
        }
        if (!home)
            return -1;
        base = home;
        tail = "/.local/state/rspwalk/rspwalkd.db";
    }
    int n = snprintf(buf, len, "%s%s", base, tail);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* Make PATH's missing parent directories, mode 0700 (the store holds what
 * the targets' stacks reveal: only its owner reads it). */
static int
store_make_parents(const char *path, char *err, size_t errlen)
{
    char *dir = strdup(path);
    if (!dir) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    int rc = 0;
    for (char *p = dir + 1; *p && rc == 0; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        struct stat sb;
        if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "%s: cannot create directory %s: %s", path, dir, strerror(errno));
            rc = -1;
        } else if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
            snprintf(err, errlen, "%s: %s is not a directory", path, dir);
            rc = -1;
        }
        *p = '/';
    }
    free(dir);
    return rc;
}

/* Open PATH itself, refusing a symbolic link or anything but a regular file,
 * creating it 0600 (SQLite gives its -wal and -shm files the same mode) and
 * taking the one-process lock.  Returns the descriptor or -1.  Called with
 * store_open_lock held. */
static int
store_open_file(const char *path, char *err, size_t errlen)
{
    struct stat sb;
    int lrc = lstat(path, &sb);
    bool exists = lrc == 0 || errno != ENOENT;
    for (struct srv_store *o = store_open_list; lrc == 0 && o; o = o->next_open) {
        if (o->dev == sb.st_dev && o->ino == sb.st_ino) {
            snprintf(err, errlen, "%s: already open in this process (as %s)", path, o->path);
            return -1;
        }
    }
    if (lrc == 0) {
        if (S_ISLNK(sb.st_mode)) {
            snprintf(err, errlen, "%s: is a symbolic link; give the file it points to", path);
            return -1;
        }
        if (S_ISDIR(sb.st_mode)) {
            snprintf(err, errlen, "%s: is a directory, not a database file", path);
            return -1;
        }
        if (!S_ISREG(sb.st_mode)) {
            snprintf(err, errlen, "%s: is not a regular file", path);
            return -1;
        }
    }
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        if (errno == ELOOP)
            snprintf(err, errlen, "%s: is a symbolic link; give the file it points to", path);
        else
            snprintf(err, errlen, "%s: cannot %s: %s", path,
                     exists ? "open for reading and writing" : "create", strerror(errno));
        return -1;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "%s: is not a regular file", path);
        close(fd);
        return -1;
    }
    /* flock, not fcntl locks: SQLite's own POSIX locks on the file are a
     * separate kind on Linux, and this descriptor is closed only after
     * SQLite's connection (closing any descriptor of a file drops the
     * process's POSIX locks on it). */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK)
            snprintf(err, errlen, "%s: in use by another rspwalkd (one server per store)", path);
        else
            snprintf(err, errlen, "%s: cannot lock: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* Run SQL (no rows wanted); the message in ERR on failure. */
static int
store_exec(struct srv_store *st, const char *sql, const char *what, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    snprintf(err, errlen, "%s: %s: %s", st->path, what, msg ? msg : sqlite3_errmsg(st->db));
    sqlite3_free(msg);
    return -1;
}

/* The single integer SQL answers; -1 with ERR on failure. */
static int
store_query_int(struct srv_store *st, const char *sql, int64_t *out, char *err, size_t errlen)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(s);
        if (rc == SQLITE_ROW) {
            *out = sqlite3_column_int64(s, 0);
            rc = SQLITE_OK;
        }
    }
    if (rc != SQLITE_OK)
        snprintf(err, errlen, "%s: %s", st->path, sqlite3_errmsg(st->db));
    sqlite3_finalize(s);
    return rc == SQLITE_OK ? 0 : -1;
}

/* Connection limits, before the file is read. */
static int
store_configure(struct srv_store *st, char *err, size_t errlen)
{
    sqlite3_extended_result_codes(st->db, 1);
    sqlite3_busy_timeout(st->db, STORE_BUSY_MS);
    /* Refuse oversized values in SQLite too: a document plus a little room. */
    sqlite3_limit(st->db, SQLITE_LIMIT_LENGTH, (int)(SRV_STORE_DOC_MAX + 4096));
    if (sqlite3_db_readonly(st->db, "main") == 1) {
        snprintf(err, errlen, "%s: opened read-only; the store must be writable", st->path);
        return -1;
    }
    return 0;
}

/* Refuse, before anything is written, a file that is not an rspwalkd store
 * (the first read: a file that is not SQLite fails here) or whose schema is
 * newer than this program's. */
static int
store_check_identity(struct srv_store *st, char *err, size_t errlen)
{
    int64_t app_id = 0, version = 0, tables = 0;
    const char *sql = "SELECT (SELECT application_id FROM pragma_application_id),"
                      " (SELECT user_version FROM pragma_user_version),"
                      " (SELECT count(*) FROM sqlite_schema)";
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        app_id = sqlite3_column_int64(s, 0);
        version = sqlite3_column_int64(s, 1);
        tables = sqlite3_column_int64(s, 2);
    }
    if (rc != SQLITE_ROW)
        snprintf(err, errlen, "%s: cannot read the store: %s", st->path, sqlite3_errmsg(st->db));
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW)
        return -1;
    if ((app_id != 0 || tables != 0) && app_id != STORE_APP_ID) {
        snprintf(err, errlen, "%s: not an rspwalkd store (an SQLite database of another program)",
                 st->path);
        return -1;
    }
    if (version > STORE_SCHEMA_VERSION) {
        snprintf(err, errlen,
                 "%s: the store's schema version %lld is newer than this rspwalkd's (%d); use a "
                 "newer rspwalkd or another --db",
                 st->path, (long long)version, STORE_SCHEMA_VERSION);
        return -1;
    }
    return 0;
}

/* The journal and the durability they give.  In WAL mode a commit is
 * complete once its frames are in the -wal file, and write() has put them
 * in the kernel's page cache before sqlite3_step returns.  A killed process
 * (kill -9, a crash) loses nothing the kernel holds: the next open replays
 * the WAL up to its last commit frame.  So synchronous=NORMAL, which syncs
 * the WAL only at checkpoints, keeps every committed row across a kill of
 * the process, and the file consistent across a power loss (which may drop
 * the commits since the last checkpoint).  FULL would add an fsync to every
 * stack stored, milliseconds each, for the power-loss case only. */
static int
store_set_journal(struct srv_store *st, char *err, size_t errlen)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, "PRAGMA journal_mode = WAL", -1, &s, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    bool wal =
        rc == SQLITE_ROW && sqlite3_stricmp((const char *)sqlite3_column_text(s, 0), "wal") == 0;
    if (rc != SQLITE_ROW)
        snprintf(err, errlen, "%s: cannot set WAL mode: %s", st->path, sqlite3_errmsg(st->db));
    else if (!wal)
        snprintf(err, errlen, "%s: the file system does not allow WAL mode", st->path);
    sqlite3_finalize(s);
    if (!wal)
        return -1;
    /* journal_size_limit: after a checkpoint the -wal file is cut back to
     * 64 MiB (one largest document) instead of keeping its high-water size. */
    return store_exec(st,
                      "PRAGMA synchronous = NORMAL;"
                      "PRAGMA foreign_keys = ON;"
                      "PRAGMA journal_size_limit = 67108864;",
                      "configuring the connection", err, errlen);
}

/* Create or migrate the schema and mark the runs a dead server left
 * "running", in one transaction. */
static int
store_prepare_schema(struct srv_store *st, char *err, size_t errlen)
{
    if (store_exec(st, "BEGIN IMMEDIATE", "starting the schema check", err, errlen) != 0)
        return -1;
    int64_t version = 0;
    int rc = store_query_int(st, "PRAGMA user_version", &version, err, errlen);
    for (int64_t v = version; rc == 0 && v < STORE_SCHEMA_VERSION; v++) {
        char what[64], sql[96];
        snprintf(what, sizeof what, "migrating the schema from version %lld", (long long)v);
        snprintf(sql, sizeof sql, "PRAGMA user_version = %lld; PRAGMA application_id = %d;",
                 (long long)v + 1, STORE_APP_ID);
        rc = store_exec(st, store_migrations[v], what, err, errlen);
        if (rc == 0)
            rc = store_exec(st, sql, what, err, errlen);
    }
    if (rc == 0)
        rc = store_exec(st,
                        "UPDATE samples SET state = 'interrupted', ended_us = coalesce(max("
                        "(SELECT max(time_us) FROM sample_stacks WHERE sample_id = samples.id),"
                        "(SELECT max(last_us) FROM sample_counts WHERE sample_id = samples.id)),"
                        "(SELECT max(time_us) FROM sample_stacks WHERE sample_id = samples.id),"
                        "(SELECT max(last_us) FROM sample_counts WHERE sample_id = samples.id),"
                        " started_us) WHERE state = 'running'",
                        "marking interrupted sample runs", err, errlen);
    if (rc == 0)
        return store_exec(st, "COMMIT", "committing the schema", err, errlen);
    sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

void
srv_store_close(struct srv_store *st)
{
    if (!st)
        return;
    srv_store_stmts_finalize(st);
    /* The last connection's close checkpoints the WAL into the file. */
    sqlite3_close_v2(st->db);
    pthread_mutex_lock(&store_open_lock);
    for (struct srv_store **p = &store_open_list; *p; p = &(*p)->next_open) {
        if (*p == st) {
            *p = st->next_open;
            break;
        }
    }
    if (st->lock_fd >= 0)
        close(st->lock_fd);
    pthread_mutex_unlock(&store_open_lock);
    pthread_mutex_destroy(&st->lock);
    srv_store_err_forget(st);
    free(st->path);
    free(st);
}

int
srv_store_open(const char *path, struct srv_store **out, char *err, size_t errlen)
{
    char tmp[STORE_ERR_MAX];
    *out = NULL;
    if (!path || !path[0]) {
        snprintf(err, errlen, "store: no database path given");
        return -1;
    }
    if (strlen(path) >= PATH_MAX) {
        snprintf(err, errlen, "store: database path longer than %d bytes", PATH_MAX - 1);
        return -1;
    }
    struct srv_store *st = calloc(1, sizeof *st);
    if (!st || !(st->path = strdup(path))) {
        free(st);
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    st->lock_fd = -1;
    pthread_mutex_init(&st->lock, NULL);
    int rc = store_make_parents(path, tmp, sizeof tmp);
    pthread_mutex_lock(&store_open_lock);
    if (rc == 0) {
        st->lock_fd = store_open_file(path, tmp, sizeof tmp);
        rc = st->lock_fd < 0 ? -1 : 0;
    }
    struct stat sb;
    if (rc == 0 && fstat(st->lock_fd, &sb) == 0) {
        st->dev = sb.st_dev;
        st->ino = sb.st_ino;
        st->next_open = store_open_list;
        store_open_list = st;
    }
    pthread_mutex_unlock(&store_open_lock);
    if (rc == 0) {
        /* Calls are serialised by st->lock: SQLite's own mutexes are not needed. */
        int flags =
            SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX;
        /* "./" keeps a relative path that begins "file:" from being read as a URI. */
        snprintf(tmp, sizeof tmp, "%s%s", path[0] == '/' ? "" : "./", path);
        if (sqlite3_open_v2(tmp, &st->db, flags, NULL) != SQLITE_OK) {
            snprintf(tmp, sizeof tmp, "%s: cannot open: %s", path,
                     st->db ? sqlite3_errmsg(st->db) : "out of memory");
            rc = -1;
        }
    }
    if (rc == 0)
        rc = store_configure(st, tmp, sizeof tmp);
    if (rc == 0)
        rc = store_check_identity(st, tmp, sizeof tmp);
    if (rc == 0)
        rc = store_set_journal(st, tmp, sizeof tmp);
    if (rc == 0)
        rc = store_prepare_schema(st, tmp, sizeof tmp);
    if (rc == 0)
        rc = srv_store_stmts_prepare(st, tmp, sizeof tmp);
    if (rc != 0) {
        srv_store_msg_oneline(tmp);
        snprintf(err, errlen, "%s", tmp);
        srv_store_close(st);
        return -1;
    }
    *out = st;
    return 0;
}
