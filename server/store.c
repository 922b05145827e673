/* server/store.c -- the calls on an open store: targets, snapshots, sample
 * runs, each one transaction under the store's mutex, on statements
 * prepared at open.  Opening the file, the schema and its migrations are
 * server/store_open.c's.
 */
#include "server/store.h"

#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/store_impl.h"

/* The statements, by enum store_sql (store_impl.h).  A sample run's ticks
 * are counted, not kept: the count is then right after a cascade too.  A
 * run keeps either documents (sample_stacks, written before schema 2) or
 * folded paths with per-target counts (sample_paths, sample_counts). */
#define SAMPLE_COLS                                                                                \
    "id, targets, hz, seconds, started_us, ended_us, state,"                                       \
    " (SELECT count(*) FROM sample_stacks WHERE sample_id = samples.id) +"                         \
    " (SELECT coalesce(sum(samples), 0) FROM sample_counts WHERE sample_id = samples.id)"

static const char *const store_sql_text[SQ_COUNT] = {
    [SQ_TARGET_ADD] = "INSERT INTO targets (name, target, exe, sysroot, created_us, rtos)"
                      " VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    [SQ_TARGET_DELETE] = "DELETE FROM targets WHERE id = ?1",
    [SQ_TARGET_GET] = "SELECT id, name, target, exe, sysroot, created_us, rtos FROM targets"
                      " WHERE id = ?1",
    [SQ_TARGET_EACH] = "SELECT id, name, target, exe, sysroot, created_us, rtos FROM targets"
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
    [SQ_PATH_ADD] = "INSERT INTO sample_paths (sample_id, target_id, thread, path, count)"
                    " VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO UPDATE SET count = count + ?5",
    [SQ_PATH_COUNT] = "INSERT INTO sample_counts (sample_id, target_id, samples, last_us)"
                      " VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO UPDATE"
                      " SET samples = samples + ?3, last_us = max(last_us, ?4)",
    [SQ_PATH_EACH] = "SELECT p.target_id, t.target, p.thread, p.path, p.count"
                     " FROM sample_paths p JOIN targets t ON t.id = p.target_id"
                     " WHERE p.sample_id = ?1 ORDER BY p.target_id, p.thread, p.path",
};

int
srv_store_stmts_prepare(struct srv_store *st, char *err, size_t errlen)
{
    for (int i = 0; i < SQ_COUNT; i++) {
        if (sqlite3_prepare_v3(st->db, store_sql_text[i], -1, SQLITE_PREPARE_PERSISTENT,
                               &st->sql[i], NULL) != SQLITE_OK) {
            snprintf(err, errlen, "%s: preparing a statement: %s", st->path,
                     sqlite3_errmsg(st->db));
            return -1;
        }
    }
    return 0;
}

void
srv_store_stmts_finalize(struct srv_store *st)
{
    for (int i = 0; i < SQ_COUNT; i++) {
        sqlite3_finalize(st->sql[i]);
        st->sql[i] = NULL;
    }
}

/* The last failure of a call on a store, per thread (store.h: valid until the
 * next call from the same thread). */
static _Thread_local const struct srv_store *store_err_owner;
static _Thread_local char store_err_msg[STORE_ERR_MAX];

void
srv_store_msg_oneline(char *s)
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
    srv_store_msg_oneline(buf);
}

void
srv_store_err_forget(const struct srv_store *st)
{
    if (store_err_owner == st)
        store_err_owner = NULL;
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
    if (rc == 0)
        rc = store_check_str(st, what, "rtos", in->rtos);
    if (rc == 0) {
        sqlite3_stmt *s = store_stmt(st, SQ_TARGET_ADD);
        store_bind_opt_text(s, 1, in->name);
        sqlite3_bind_text(s, 2, in->target, -1, SQLITE_STATIC);
        store_bind_opt_text(s, 3, in->exe);
        store_bind_opt_text(s, 4, in->sysroot);
        sqlite3_bind_int64(s, 5, in->created_us ? in->created_us : store_now_us());
        store_bind_opt_text(s, 6, in->rtos);
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
    r->rtos = store_col_text(s, 6);
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
            !store_dup(r.exe, &out->exe) || !store_dup(r.sysroot, &out->sysroot) ||
            !store_dup(r.rtos, &out->rtos)) {
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

/* ---- sample runs as folded paths ------------------------------------------ */
static int
store_paths_insert(struct srv_store *st, const char *what, int64_t sample_id, int64_t target_id,
                   int64_t time_us, uint64_t samples, const struct srv_path_rec *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!p[i].thread || !p[i].path || p[i].count <= 0)
            return store_fail(st, "%s: path %zu has no thread, no path or no count", what, i);
        size_t len = strnlen(p[i].path, SRV_STORE_DOC_MAX + 1);
        if (len > SRV_STORE_DOC_MAX || store_check_str(st, what, "thread", p[i].thread) < 0)
            return store_fail(st, "%s: path %zu is too long", what, i);
        sqlite3_stmt *s = store_stmt(st, SQ_PATH_ADD);
        sqlite3_bind_int64(s, 1, sample_id);
        sqlite3_bind_int64(s, 2, target_id);
        sqlite3_bind_text(s, 3, p[i].thread, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 4, p[i].path, (int)len, SQLITE_STATIC);
        sqlite3_bind_int64(s, 5, p[i].count);
        int step = sqlite3_step(s);
        sqlite3_reset(s);
        if (step != SQLITE_DONE)
            return store_fail_insert(st, what, "the target or the run");
    }
    sqlite3_stmt *s = store_stmt(st, SQ_PATH_COUNT);
    sqlite3_bind_int64(s, 1, sample_id);
    sqlite3_bind_int64(s, 2, target_id);
    sqlite3_bind_int64(s, 3, (int64_t)samples);
    sqlite3_bind_int64(s, 4, time_us);
    int step = sqlite3_step(s);
    sqlite3_reset(s);
    return step == SQLITE_DONE ? 0 : store_fail_insert(st, what, "the target or the run");
}

int
srv_store_sample_paths_add(struct srv_store *st, int64_t sample_id, int64_t target_id,
                           int64_t time_us, uint64_t samples, const struct srv_path_rec *paths,
                           size_t n)
{
    char what[96];
    snprintf(what, sizeof what, "adding %llu samples of target %lld to sample run %lld",
             (unsigned long long)samples, (long long)target_id, (long long)sample_id);
    store_enter(st);
    int rc = 0;
    if (samples > (uint64_t)INT64_MAX || (n > 0 && !paths))
        rc = store_fail(st, "%s: no paths or too many samples", what);
    else if (sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        rc = store_fail_db(st, what);
    else {
        rc = store_paths_insert(st, what, sample_id, target_id, time_us, samples, paths, n);
        if (rc == 0 && sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
            rc = store_fail_db(st, what);
        if (rc != 0)
            sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    }
    store_leave(st);
    return rc;
}

int
srv_store_sample_paths(struct srv_store *st, int64_t sample_id,
                       int (*fn)(void *arg, const struct srv_path_rec *r), void *arg)
{
    store_enter(st);
    sqlite3_stmt *s = store_stmt(st, SQ_PATH_EACH);
    sqlite3_bind_int64(s, 1, sample_id);
    int rc = 0, step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(s)) == SQLITE_ROW) {
        struct srv_path_rec r = {
            .target_id = sqlite3_column_int64(s, 0),
            .target = store_col_text(s, 1),
            .thread = store_col_text(s, 2),
            .path = store_col_text(s, 3),
            .count = sqlite3_column_int64(s, 4),
        };
        rc = fn(arg, &r);
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = store_fail_db(st, "reading a sample run's paths");
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
    free(r->rtos);
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
