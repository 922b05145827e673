/* server/store.c -- rspwalkd's store on SQLite: the file, the schema and its
 * migrations, and the calls of store.h.
 *
 * One connection in WAL mode, its prepared statements and one mutex; every
 * call is one transaction.  Not the registry's live state (server/registry.c
 * keeps that): only what must outlive the process.
 */
#define _DEFAULT_SOURCE /* flock */

#include "server/store.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <pwd.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* PRAGMA application_id: "RSWD", so a file of another program is told from
 * an rspwalkd store before anything is written to it. */
#define STORE_APP_ID 0x52535744
/* How long a call waits for a lock another process holds on the file (the
 * sqlite3 shell, a backup copying it) before it fails: long enough for a
 * backup step, short enough that a request does not hang. */
#define STORE_BUSY_MS 5000
/* A one-line message: the path (truncated when longer) and the cause. */
#define STORE_ERR_MAX 1024

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
};
#define STORE_SCHEMA_VERSION ((int)(sizeof store_migrations / sizeof store_migrations[0]))

/* Every statement a call runs, prepared once at open. */
enum store_sql {
    SQ_TARGET_ADD,
    SQ_TARGET_DELETE,
    SQ_TARGET_GET,
    SQ_TARGET_EACH,
    SQ_SNAP_ADD,
    SQ_SNAP_LIST,
    SQ_SNAP_GET,
    SQ_SAMPLE_NEW,
    SQ_SAMPLE_ADD,
    SQ_SAMPLE_FINISH,
    SQ_SAMPLE_GET,
    SQ_SAMPLE_STACKS,
    SQ_SAMPLE_EACH,
    SQ_COUNT
};

#define SAMPLE_COLS                                                                                \
    "id, targets, hz, seconds, started_us, ended_us, state,"                                       \
    " (SELECT count(*) FROM sample_stacks WHERE sample_id = samples.id)"

static const char *const store_sql_text[SQ_COUNT] = {
    [SQ_TARGET_ADD] = "INSERT INTO targets (name, target, exe, sysroot, created_us)"
                      " VALUES (?1, ?2, ?3, ?4, ?5)",
    [SQ_TARGET_DELETE] = "DELETE FROM targets WHERE id = ?1",
    [SQ_TARGET_GET] = "SELECT id, name, target, exe, sysroot, created_us FROM targets"
                      " WHERE id = ?1",
    [SQ_TARGET_EACH] = "SELECT id, name, target, exe, sysroot, created_us FROM targets"
                       " ORDER BY id",
    [SQ_SNAP_ADD] = "INSERT INTO snapshots (target_id, time_us, doc) VALUES (?1, ?2, ?3)",
    /* The document's pages are read only when ?4 asks for it. */
    [SQ_SNAP_LIST] = "SELECT id, target_id, time_us, CASE WHEN ?4 THEN doc END FROM snapshots"
                     " WHERE target_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3",
    [SQ_SNAP_GET] = "SELECT id, target_id, time_us, doc FROM snapshots WHERE id = ?1",
    [SQ_SAMPLE_NEW] = "INSERT INTO samples (targets, hz, seconds, started_us, ended_us, state)"
                      " VALUES (?1, ?2, ?3, ?4, 0, 'running')",
    [SQ_SAMPLE_ADD] = "INSERT INTO sample_stacks (sample_id, target_id, time_us, doc)"
                      " VALUES (?1, ?2, ?3, ?4)",
    [SQ_SAMPLE_FINISH] = "UPDATE samples SET state = ?2, ended_us = ?3 WHERE id = ?1",
    [SQ_SAMPLE_GET] = "SELECT " SAMPLE_COLS " FROM samples WHERE id = ?1",
    [SQ_SAMPLE_STACKS] = "SELECT id, target_id, time_us, doc FROM sample_stacks"
                         " WHERE sample_id = ?1 ORDER BY id",
    [SQ_SAMPLE_EACH] = "SELECT " SAMPLE_COLS " FROM samples ORDER BY id DESC LIMIT ?1",
};

struct srv_store {
    pthread_mutex_t lock; /* serialises every call: the statements and the connection */
    sqlite3 *db;
    sqlite3_stmt *sql[SQ_COUNT];
    int lock_fd; /* the file, flock'ed: one process per store */
    dev_t dev;   /* the file's identity, in store_open_list */
    ino_t ino;
    struct srv_store *next_open;
    char *path;
};

/* The stores open in this process, so that a second open of one of them is
 * refused before it opens the file: closing that second descriptor would
 * drop SQLite's POSIX locks on the file (they belong to the process), and
 * another process could then delete the -wal file under the first store. */
static pthread_mutex_t store_open_lock = PTHREAD_MUTEX_INITIALIZER;
static struct srv_store *store_open_list;

/* The last failure of a call on a store, per thread (store.h: valid until the
 * next call from the same thread). */
static _Thread_local const struct srv_store *store_err_owner;
static _Thread_local char store_err_msg[STORE_ERR_MAX];

/* Control characters (a newline in a path) would break the one-line rule. */
static void
store_msg_oneline(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

static void
store_msg_vformat(char *buf, size_t len, const char *path, const char *fmt, va_list ap)
{
    if (len == 0)
        return;
    int n = snprintf(buf, len, "%s: ", path);
    if (n >= 0 && (size_t)n < len)
        vsnprintf(buf + n, len - (size_t)n, fmt, ap);
    store_msg_oneline(buf);
}

/* Record "PATH: FMT..." as ST's last failure in this thread; returns -1. */
static int
store_fail(struct srv_store *st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    store_msg_vformat(store_err_msg, sizeof store_err_msg, st->path, fmt, ap);
    va_end(ap);
    store_err_owner = st;
    return -1;
}

/* store_fail with SQLite's reason for the last failure on the connection. */
static int
store_fail_db(struct srv_store *st, const char *what)
{
    return store_fail(st, "%s: %s", what, sqlite3_errmsg(st->db));
}

static void
store_enter(struct srv_store *st)
{
    pthread_mutex_lock(&st->lock);
    if (store_err_owner == st)
        store_err_msg[0] = '\0';
}

static void
store_leave(struct srv_store *st)
{
    pthread_mutex_unlock(&st->lock);
}

/* A statement ready to bind: reset and with its bindings cleared. */
static sqlite3_stmt *
store_stmt(struct srv_store *st, enum store_sql which)
{
    sqlite3_stmt *s = st->sql[which];
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return s;
}

static int64_t
store_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* NULL for SQL NULL; borrowed until the statement steps or resets. */
static char *
store_col_text(sqlite3_stmt *s, int col)
{
    return (char *)sqlite3_column_text(s, col);
}

/* A copy of S (NULL stays NULL); false when out of memory. */
static bool
store_dup(const char *s, char **out)
{
    *out = NULL;
    if (!s)
        return true;
    *out = strdup(s);
    return *out != NULL;
}

/* Check an optional string bound for a column: NULL allowed, length bounded. */
static int
store_check_str(struct srv_store *st, const char *what, const char *field, const char *s)
{
    if (s && strnlen(s, SRV_STORE_STR_MAX + 1) > SRV_STORE_STR_MAX)
        return store_fail(st, "%s: %s longer than %zu bytes", what, field, SRV_STORE_STR_MAX);
    return 0;
}

/* Check a document: present, at most SRV_STORE_DOC_MAX bytes; *LEN its length. */
static int
store_check_doc(struct srv_store *st, const char *what, const char *doc, size_t *len)
{
    if (!doc)
        return store_fail(st, "%s: no document", what);
    *len = strnlen(doc, SRV_STORE_DOC_MAX + 1);
    if (*len > SRV_STORE_DOC_MAX)
        return store_fail(st, "%s: document larger than %zu MiB", what, SRV_STORE_DOC_MAX >> 20);
    return 0;
}

static void
store_bind_opt_text(sqlite3_stmt *s, int i, const char *text)
{
    if (text)
        sqlite3_bind_text(s, i, text, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(s, i);
}

/* LIMIT's operand: -1 is SQLite's "no limit". */
static int64_t
store_limit(size_t limit)
{
    return limit == 0 || limit > (size_t)INT64_MAX ? -1 : (int64_t)limit;
}

/* ---- opening ------------------------------------------------------------ */

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

/* Connection settings.  Durability: in WAL mode a commit is complete once
 * its frames are written to the -wal file, and write() has put them in the
 * kernel's page cache before sqlite3_step returns.  A killed process (kill
 * -9, a crash) loses nothing the kernel holds: the next open replays the WAL
 * up to the last commit frame.  So synchronous=NORMAL, which syncs the WAL
 * only at checkpoints, keeps every committed row across a kill of the
 * process and keeps the file consistent across a power loss (which may drop
 * the last commits before a checkpoint).  FULL would add an fsync to every
 * sample stored, milliseconds each, for the power-loss case only. */
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
    /* The first read of the file: a file that is not a database fails here. */
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, "PRAGMA journal_mode = WAL", -1, &s, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    bool wal =
        rc == SQLITE_ROW && sqlite3_stricmp((const char *)sqlite3_column_text(s, 0), "wal") == 0;
    if (rc != SQLITE_ROW) {
        snprintf(err, errlen, "%s: cannot read the store: %s", st->path, sqlite3_errmsg(st->db));
        sqlite3_finalize(s);
        return -1;
    }
    sqlite3_finalize(s);
    if (!wal) {
        snprintf(err, errlen, "%s: the file system does not allow WAL mode", st->path);
        return -1;
    }
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
    int64_t app_id = 0, version = 0, tables = 0;
    int rc = store_query_int(st, "PRAGMA application_id", &app_id, err, errlen);
    if (rc == 0)
        rc = store_query_int(st, "PRAGMA user_version", &version, err, errlen);
    if (rc == 0)
        rc = store_query_int(st, "SELECT count(*) FROM sqlite_schema", &tables, err, errlen);
    if (rc == 0 && (app_id != 0 || tables != 0) && app_id != STORE_APP_ID) {
        snprintf(err, errlen, "%s: not an rspwalkd store (an SQLite database of another program)",
                 st->path);
        rc = -1;
    }
    if (rc == 0 && version > STORE_SCHEMA_VERSION) {
        snprintf(err, errlen,
                 "%s: the store's schema version %lld is newer than this rspwalkd's (%d); use a "
                 "newer rspwalkd or another --db",
                 st->path, (long long)version, STORE_SCHEMA_VERSION);
        rc = -1;
    }
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
                        "UPDATE samples SET state = 'interrupted', ended_us = coalesce("
                        "(SELECT max(time_us) FROM sample_stacks WHERE sample_id = samples.id),"
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
    for (int i = 0; i < SQ_COUNT; i++)
        sqlite3_finalize(st->sql[i]);
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
    if (store_err_owner == st)
        store_err_owner = NULL;
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
        rc = store_prepare_schema(st, tmp, sizeof tmp);
    for (int i = 0; rc == 0 && i < SQ_COUNT; i++) {
        if (sqlite3_prepare_v3(st->db, store_sql_text[i], -1, SQLITE_PREPARE_PERSISTENT,
                               &st->sql[i], NULL) != SQLITE_OK) {
            snprintf(tmp, sizeof tmp, "%s: preparing a statement: %s", path,
                     sqlite3_errmsg(st->db));
            rc = -1;
        }
    }
    if (rc != 0) {
        store_msg_oneline(tmp);
        snprintf(err, errlen, "%s", tmp);
        srv_store_close(st);
        return -1;
    }
    *out = st;
    return 0;
}

const char *
srv_store_errmsg(struct srv_store *st)
{
    return st && store_err_owner == st ? store_err_msg : "";
}

/* ---- targets ------------------------------------------------------------ */

int
srv_store_target_add(struct srv_store *st, const struct srv_target_rec *in, int64_t *id)
{
    const char *what = "adding a target";
    store_enter(st);
    int rc = 0;
    if (!in->target || !in->target[0])
        rc = store_fail(st, "%s: no target string", what);
    if (rc == 0)
        rc = store_check_str(st, what, "target", in->target);
    if (rc == 0)
        rc = store_check_str(st, what, "name", in->name);
    if (rc == 0)
        rc = store_check_str(st, what, "exe", in->exe);
    if (rc == 0)
        rc = store_check_str(st, what, "sysroot", in->sysroot);
    if (rc == 0) {
        sqlite3_stmt *s = store_stmt(st, SQ_TARGET_ADD);
        store_bind_opt_text(s, 1, in->name);
        sqlite3_bind_text(s, 2, in->target, -1, SQLITE_STATIC);
        store_bind_opt_text(s, 3, in->exe);
        store_bind_opt_text(s, 4, in->sysroot);
        sqlite3_bind_int64(s, 5, in->created_us ? in->created_us : store_now_us());
        if (sqlite3_step(s) != SQLITE_DONE)
            rc = store_fail_db(st, what);
        else
            *id = sqlite3_last_insert_rowid(st->db);
        sqlite3_reset(s);
    }
    store_leave(st);
    return rc;
}

int
srv_store_target_delete(struct srv_store *st, int64_t id)
{
    store_enter(st);
    sqlite3_stmt *s = store_stmt(st, SQ_TARGET_DELETE);
    sqlite3_bind_int64(s, 1, id);
    int rc;
    if (sqlite3_step(s) != SQLITE_DONE) {
        char what[64];
        snprintf(what, sizeof what, "deleting target %lld", (long long)id);
        rc = store_fail_db(st, what);
    } else {
        rc = sqlite3_changes(st->db) > 0 ? 0 : 1;
    }
    sqlite3_reset(s);
    store_leave(st);
    return rc;
}

static void
store_target_row(sqlite3_stmt *s, struct srv_target_rec *r)
{
    r->id = sqlite3_column_int64(s, 0);
    r->name = store_col_text(s, 1);
    r->target = store_col_text(s, 2);
    r->exe = store_col_text(s, 3);
    r->sysroot = store_col_text(s, 4);
    r->created_us = sqlite3_column_int64(s, 5);
}

int
srv_store_target_get(struct srv_store *st, int64_t id, struct srv_target_rec *out)
{
    memset(out, 0, sizeof *out);
    store_enter(st);
    sqlite3_stmt *s = store_stmt(st, SQ_TARGET_GET);
    sqlite3_bind_int64(s, 1, id);
    int step = sqlite3_step(s), rc = 1;
    if (step == SQLITE_ROW) {
        struct srv_target_rec r;
        store_target_row(s, &r);
        out->id = r.id;
        out->created_us = r.created_us;
        rc = 0;
        if (!store_dup(r.name, &out->name) || !store_dup(r.target, &out->target) ||
            !store_dup(r.exe, &out->exe) || !store_dup(r.sysroot, &out->sysroot)) {
            srv_target_rec_fini(out);
            rc = store_fail(st, "reading target %lld: out of memory", (long long)id);
        }
    } else if (step != SQLITE_DONE) {
        rc = store_fail(st, "reading target %lld: %s", (long long)id, sqlite3_errmsg(st->db));
    }
    sqlite3_reset(s);
    store_leave(st);
    return rc;
}

int
srv_store_target_each(struct srv_store *st, int (*fn)(void *arg, const struct srv_target_rec *r),
                      void *arg)
{
    store_enter(st);
    sqlite3_stmt *s = store_stmt(st, SQ_TARGET_EACH);
    int rc = 0, step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(s)) == SQLITE_ROW) {
        struct srv_target_rec r;
        store_target_row(s, &r);
        rc = fn(arg, &r);
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = store_fail_db(st, "listing targets");
    sqlite3_reset(s);
    store_leave(st);
    return rc;
}

/* ---- snapshots and sample stacks ------------------------------------------ */

/* The message of a failed insert of a document: NOT_STORED names what a
 * foreign key found missing. */
static int
store_fail_insert(struct srv_store *st, const char *what, const char *not_stored)
{
    if (sqlite3_extended_errcode(st->db) == SQLITE_CONSTRAINT_FOREIGNKEY)
        return store_fail(st, "%s: %s is not in the store", what, not_stored);
    return store_fail_db(st, what);
}

static void
store_doc_row(sqlite3_stmt *s, struct srv_doc_rec *r)
{
    r->id = sqlite3_column_int64(s, 0);
    r->target_id = sqlite3_column_int64(s, 1);
    r->time_us = sqlite3_column_int64(s, 2);
    r->doc = store_col_text(s, 3);
}

/* Run a statement of document rows (bound already), FN for each. */
static int
store_doc_rows(struct srv_store *st, sqlite3_stmt *s, const char *what,
               int (*fn)(void *arg, const struct srv_doc_rec *r), void *arg)
{
    int rc = 0, step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(s)) == SQLITE_ROW) {
        struct srv_doc_rec r;
        store_doc_row(s, &r);
        rc = fn(arg, &r);
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = store_fail_db(st, what);
    sqlite3_reset(s);
    return rc;
}

int
srv_store_snapshot_add(struct srv_store *st, int64_t target_id, int64_t time_us, const char *doc,
                       int64_t *id)
{
    char what[64];
    snprintf(what, sizeof what, "adding a snapshot of target %lld", (long long)target_id);
    store_enter(st);
    size_t len = 0;
    int rc = store_check_doc(st, what, doc, &len);
    if (rc == 0) {
        sqlite3_stmt *s = store_stmt(st, SQ_SNAP_ADD);
        sqlite3_bind_int64(s, 1, target_id);
        sqlite3_bind_int64(s, 2, time_us);
        sqlite3_bind_text(s, 3, doc, (int)len, SQLITE_STATIC);
        if (sqlite3_step(s) != SQLITE_DONE)
            rc = store_fail_insert(st, what, "the target");
        else
            *id = sqlite3_last_insert_rowid(st->db);
        sqlite3_reset(s);
    }
    store_leave(st);
    return rc;
}

int
srv_store_snapshot_list(struct srv_store *st, int64_t target_id, int64_t after_id, size_t limit,
                        int with_doc, int (*fn)(void *arg, const struct srv_doc_rec *r), void *arg)
{
    store_enter(st);
    sqlite3_stmt *s = store_stmt(st, SQ_SNAP_LIST);
    sqlite3_bind_int64(s, 1, target_id);
    sqlite3_bind_int64(s, 2, after_id);
    sqlite3_bind_int64(s, 3, store_limit(limit));
    sqlite3_bind_int(s, 4, with_doc != 0);
    int rc = store_doc_rows(st, s, "listing snapshots", fn, arg);
    store_leave(st);
    return rc;
}

int
srv_store_snapshot_get(struct srv_store *st, int64_t id, struct srv_doc_rec *out)
{
    memset(out, 0, sizeof *out);
    store_enter(st);
    sqlite3_stmt *s = store_stmt(st, SQ_SNAP_GET);
    sqlite3_bind_int64(s, 1, id);
    int step = sqlite3_step(s), rc = 1;
    if (step == SQLITE_ROW) {
        struct srv_doc_rec r;
        store_doc_row(s, &r);
        *out = r;
        rc = 0;
        if (!store_dup(r.doc, &out->doc)) {
            memset(out, 0, sizeof *out);
            rc = store_fail(st, "reading snapshot %lld: out of memory", (long long)id);
        }
    } else if (step != SQLITE_DONE) {
        rc = store_fail(st, "reading snapshot %lld: %s", (long long)id, sqlite3_errmsg(st->db));
    }
    sqlite3_reset(s);
    store_leave(st);
    return rc;
}

/* ---- sample runs -------------------------------------------------------- */

int
srv_store_sample_new(struct srv_store *st, const char *targets, double hz, double seconds,
                     int64_t started_us, int64_t *id)
{
    const char *what = "starting a sample run";
    store_enter(st);
    int rc = 0;
    if (!targets)
        rc = store_fail(st, "%s: no target list", what);
    else if (!isfinite(hz) || hz < 0 || !isfinite(seconds) || seconds < 0)
        rc = store_fail(st, "%s: hz %g and seconds %g must be finite and not negative", what, hz,
                        seconds);
    size_t len = 0;
    if (rc == 0)
        rc = store_check_doc(st, what, targets, &len);
    if (rc == 0) {
        sqlite3_stmt *s = store_stmt(st, SQ_SAMPLE_NEW);
        sqlite3_bind_text(s, 1, targets, (int)len, SQLITE_STATIC);
        sqlite3_bind_double(s, 2, hz);
        sqlite3_bind_double(s, 3, seconds);
        sqlite3_bind_int64(s, 4, started_us);
        if (sqlite3_step(s) != SQLITE_DONE)
            rc = sqlite3_extended_errcode(st->db) == SQLITE_CONSTRAINT_CHECK
                     ? store_fail(st, "%s: targets is not a JSON array", what)
                     : store_fail_db(st, what);
        else
            *id = sqlite3_last_insert_rowid(st->db);
        sqlite3_reset(s);
    }
    store_leave(st);
    return rc;
}

int
srv_store_sample_add(struct srv_store *st, int64_t sample_id, int64_t target_id, int64_t time_us,
                     const char *doc)
{
    char what[96];
    snprintf(what, sizeof what, "adding a stack of target %lld to sample run %lld",
             (long long)target_id, (long long)sample_id);
    store_enter(st);
    size_t len = 0;
    int rc = store_check_doc(st, what, doc, &len);
    if (rc == 0) {
        sqlite3_stmt *s = store_stmt(st, SQ_SAMPLE_ADD);
        sqlite3_bind_int64(s, 1, sample_id);
        sqlite3_bind_int64(s, 2, target_id);
        sqlite3_bind_int64(s, 3, time_us);
        sqlite3_bind_text(s, 4, doc, (int)len, SQLITE_STATIC);
        if (sqlite3_step(s) != SQLITE_DONE)
            rc = store_fail_insert(st, what, "the target or the run");
        sqlite3_reset(s);
    }
    store_leave(st);
    return rc;
}

int
srv_store_sample_finish(struct srv_store *st, int64_t sample_id, const char *state,
                        int64_t ended_us)
{
    char what[64];
    snprintf(what, sizeof what, "finishing sample run %lld", (long long)sample_id);
    store_enter(st);
    int rc = 0;
    if (!state || (strcmp(state, "done") != 0 && strcmp(state, "failed") != 0 &&
                   strcmp(state, "interrupted") != 0))
        rc = store_fail(st, "%s: state \"%.32s\" is not done, failed or interrupted", what,
                        state ? state : "(null)");
    if (rc == 0) {
        sqlite3_stmt *s = store_stmt(st, SQ_SAMPLE_FINISH);
        sqlite3_bind_int64(s, 1, sample_id);
        sqlite3_bind_text(s, 2, state, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 3, ended_us);
        if (sqlite3_step(s) != SQLITE_DONE)
            rc = store_fail_db(st, what);
        else if (sqlite3_changes(st->db) == 0)
            rc = store_fail(st, "%s: no such run", what);
        sqlite3_reset(s);
    }
    store_leave(st);
    return rc;
}

static void
store_sample_row(sqlite3_stmt *s, struct srv_sample_rec *r)
{
    r->id = sqlite3_column_int64(s, 0);
    r->targets = store_col_text(s, 1);
    r->hz = sqlite3_column_double(s, 2);
    r->seconds = sqlite3_column_double(s, 3);
    r->started_us = sqlite3_column_int64(s, 4);
    r->ended_us = sqlite3_column_int64(s, 5);
    r->state = store_col_text(s, 6);
    r->ticks = sqlite3_column_int64(s, 7);
}

int
srv_store_sample_get(struct srv_store *st, int64_t sample_id, struct srv_sample_rec *out)
{
    memset(out, 0, sizeof *out);
    store_enter(st);
    sqlite3_stmt *s = store_stmt(st, SQ_SAMPLE_GET);
    sqlite3_bind_int64(s, 1, sample_id);
    int step = sqlite3_step(s), rc = 1;
    if (step == SQLITE_ROW) {
        struct srv_sample_rec r;
        store_sample_row(s, &r);
        *out = r;
        rc = 0;
        if (!store_dup(r.targets, &out->targets) || !store_dup(r.state, &out->state)) {
            free(out->targets);
            memset(out, 0, sizeof *out);
            rc = store_fail(st, "reading sample run %lld: out of memory", (long long)sample_id);
        }
    } else if (step != SQLITE_DONE) {
        rc = store_fail(st, "reading sample run %lld: %s", (long long)sample_id,
                        sqlite3_errmsg(st->db));
    }
    sqlite3_reset(s);
    store_leave(st);
    return rc;
}

int
srv_store_sample_stacks(struct srv_store *st, int64_t sample_id,
                        int (*fn)(void *arg, const struct srv_doc_rec *r), void *arg)
{
    store_enter(st);
    sqlite3_stmt *s = store_stmt(st, SQ_SAMPLE_STACKS);
    sqlite3_bind_int64(s, 1, sample_id);
    int rc = store_doc_rows(st, s, "reading a sample run's stacks", fn, arg);
    store_leave(st);
    return rc;
}

int
srv_store_sample_each(struct srv_store *st, size_t limit,
                      int (*fn)(void *arg, const struct srv_sample_rec *r), void *arg)
{
    store_enter(st);
    sqlite3_stmt *s = store_stmt(st, SQ_SAMPLE_EACH);
    sqlite3_bind_int64(s, 1, store_limit(limit));
    int rc = 0, step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(s)) == SQLITE_ROW) {
        struct srv_sample_rec r;
        store_sample_row(s, &r);
        rc = fn(arg, &r);
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = store_fail_db(st, "listing sample runs");
    sqlite3_reset(s);
    store_leave(st);
    return rc;
}

/* ---- records ------------------------------------------------------------ */

void
srv_target_rec_fini(struct srv_target_rec *r)
{
    if (!r)
        return;
    free(r->name);
    free(r->target);
    free(r->exe);
    free(r->sysroot);
    memset(r, 0, sizeof *r);
}

void
srv_doc_rec_fini(struct srv_doc_rec *r)
{
    if (!r)
        return;
    free(r->doc);
    memset(r, 0, sizeof *r);
}

void
srv_sample_rec_fini(struct srv_sample_rec *r)
{
    if (!r)
        return;
    free(r->targets);
    free(r->state);
    memset(r, 0, sizeof *r);
}
