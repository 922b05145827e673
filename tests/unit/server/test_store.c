/* tests/unit/server/test_store.c -- rspwalkd's SQLite store (server/store.h).
 *
 * Every call of store.h on a database in a fresh temporary directory; a
 * close and reopen keeps everything; deleting a target takes its history;
 * a run left "running" is "interrupted" after a reopen; bad paths and files
 * fail with one line naming the path and the cause.  The kill -9 guarantee
 * is tested by tests/integration/run-store-durability.sh.
 */
#define _XOPEN_SOURCE   700 /* nftw */
#define _DEFAULT_SOURCE     /* setgroups */

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <pthread.h>
#include <setjmp.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "server/store.h"

struct fx {
    char dir[256];
    char path[320];
    struct srv_store *st;
    char err[1024];
};

static int
fx_setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "%s/rspwalk-store.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/state/rspwalk/rspwalkd.db", f->dir);
    *state = f;
    return 0;
}

static int
rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(p);
}

static int
fx_teardown(void **state)
{
    struct fx *f = *state;
    srv_store_close(f->st);
    nftw(f->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

/* Open F's database, failing the test with the message when it cannot. */
static void
fx_open(struct fx *f)
{
    int rc = srv_store_open(f->path, &f->st, f->err, sizeof f->err);
    if (rc != 0)
        fail_msg("srv_store_open: %s", f->err);
}

static void
fx_reopen(struct fx *f)
{
    srv_store_close(f->st);
    f->st = NULL;
    fx_open(f);
}

/* Assert that opening PATH fails with a message naming PATH and containing CAUSE. */
static void
assert_open_fails(const char *path, const char *cause)
{
    struct srv_store *st = (struct srv_store *)1;
    char err[1024] = "";
    assert_int_equal(srv_store_open(path, &st, err, sizeof err), -1);
    assert_null(st);
    if (!strstr(err, path) || !strstr(err, cause))
        fail_msg("message \"%s\" lacks the path or \"%s\"", err, cause);
    assert_null(strchr(err, '\n'));
}

static int64_t
add_target(struct fx *f, const char *target, const char *name)
{
    struct srv_target_rec in = { .target = (char *)target, .name = (char *)name };
    int64_t id = 0;
    assert_int_equal(srv_store_target_add(f->st, &in, &id), 0);
    assert_true(id > 0);
    return id;
}

/* Collects what a callback is handed. */
struct seen {
    size_t n;
    int64_t ids[64];
    int64_t other[64]; /* target_id, ticks */
    char text[64][64]; /* target string, doc, state */
    bool doc_null[64];
    size_t stop_at; /* return 7 at this call (1-based); 0: never */
};

static int
seen_target(void *arg, const struct srv_target_rec *r)
{
    struct seen *s = arg;
    s->ids[s->n] = r->id;
    snprintf(s->text[s->n], sizeof s->text[0], "%s", r->target);
    return ++s->n == s->stop_at ? 7 : 0;
}

static int
seen_doc(void *arg, const struct srv_doc_rec *r)
{
    struct seen *s = arg;
    s->ids[s->n] = r->id;
    s->other[s->n] = r->target_id;
    s->doc_null[s->n] = r->doc == NULL;
    snprintf(s->text[s->n], sizeof s->text[0], "%s", r->doc ? r->doc : "");
    return ++s->n == s->stop_at ? 7 : 0;
}

static int
seen_sample(void *arg, const struct srv_sample_rec *r)
{
    struct seen *s = arg;
    s->ids[s->n] = r->id;
    s->other[s->n] = r->ticks;
    snprintf(s->text[s->n], sizeof s->text[0], "%s", r->state);
    return ++s->n == s->stop_at ? 7 : 0;
}

/* One integer from SQL run on PATH's file directly, past the store. */
static int64_t
raw_int(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *s = NULL;
    int64_t v = -1;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int64(s, 0);
    else
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    sqlite3_finalize(s);
    sqlite3_close(db);
    return v;
}

/* Assert that SQLite's plan for SQL on PATH searches INDEX and scans no table. */
static void
assert_plan_uses(const char *path, const char *sql, const char *index)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *s = NULL;
    char q[512], plan[1024] = "";
    snprintf(q, sizeof q, "EXPLAIN QUERY PLAN %s", sql);
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, q, -1, &s, NULL), SQLITE_OK);
    while (sqlite3_step(s) == SQLITE_ROW) {
        size_t n = strlen(plan);
        snprintf(plan + n, sizeof plan - n, "%s; ", (const char *)sqlite3_column_text(s, 3));
    }
    sqlite3_finalize(s);
    sqlite3_close(db);
    if (!strstr(plan, index) || strstr(plan, "SCAN"))
        fail_msg("%s: plan \"%s\" does not search %s", sql, plan, index);
}

static void
raw_exec(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL),
                     SQLITE_OK);
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    sqlite3_close(db);
}

/* ---- the default path --------------------------------------------------- */

static void
test_default_path_uses_xdg_state_home(void **state)
{
    (void)state;
    char buf[256];
    setenv("XDG_STATE_HOME", "/x/state", 1);
    assert_int_equal(srv_store_default_path(buf, sizeof buf), 0);
    assert_string_equal(buf, "/x/state/rspwalk/rspwalkd.db");
    unsetenv("XDG_STATE_HOME");
}

static void
test_default_path_ignores_relative_xdg_and_uses_home(void **state)
{
    (void)state;
    char buf[256], *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    setenv("XDG_STATE_HOME", "relative", 1);
    setenv("HOME", "/home/u", 1);
    assert_int_equal(srv_store_default_path(buf, sizeof buf), 0);
    assert_string_equal(buf, "/home/u/.local/state/rspwalk/rspwalkd.db");
    unsetenv("XDG_STATE_HOME");
    if (home)
        setenv("HOME", home, 1);
    free(home);
}

static void
test_default_path_too_small_buffer_fails(void **state)
{
    (void)state;
    char buf[8];
    setenv("XDG_STATE_HOME", "/x/state", 1);
    assert_int_equal(srv_store_default_path(buf, sizeof buf), -1);
    unsetenv("XDG_STATE_HOME");
}

/* ---- opening ------------------------------------------------------------ */

static void
test_open_creates_directories_0700_and_file_0600(void **state)
{
    struct fx *f = *state;
    fx_open(f);
    struct stat sb;
    char dir[400];
    snprintf(dir, sizeof dir, "%s/state/rspwalk", f->dir);
    assert_int_equal(stat(dir, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0700);
    snprintf(dir, sizeof dir, "%s/state", f->dir);
    assert_int_equal(stat(dir, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0700);
    assert_int_equal(stat(f->path, &sb), 0);
    assert_true(S_ISREG(sb.st_mode));
    assert_int_equal(sb.st_mode & 0777, 0600);
    assert_string_equal(srv_store_errmsg(f->st), "");
}

static void
test_open_sets_wal_schema_version_and_indexes(void **state)
{
    struct fx *f = *state;
    fx_open(f);
    srv_store_close(f->st);
    f->st = NULL;
    assert_int_equal(raw_int(f->path, "SELECT journal_mode = 'wal' FROM pragma_journal_mode"), 1);
    assert_int_equal(raw_int(f->path, "PRAGMA user_version"), 3);
    assert_int_equal(raw_int(f->path, "PRAGMA application_id"), 0x52535744);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM sqlite_schema WHERE type = 'index'"
                                      " AND name IN ('snapshots_by_target',"
                                      " 'sample_stacks_by_sample', 'sample_stacks_by_target',"
                                      " 'sample_paths_by_target', 'sample_counts_by_target')"),
                     5);
    /* The history queries search those indexes, never scan a table. */
    assert_plan_uses(f->path,
                     "SELECT id, doc FROM snapshots WHERE target_id = 1 AND id > 0 ORDER BY id"
                     " LIMIT 10",
                     "snapshots_by_target");
    assert_plan_uses(f->path, "SELECT doc FROM sample_stacks WHERE sample_id = 1 ORDER BY id",
                     "sample_stacks_by_sample");
    assert_plan_uses(f->path, "SELECT count(*) FROM sample_stacks WHERE sample_id = 1",
                     "sample_stacks_by_sample");
    fx_open(f);
}

static void
test_open_directory_path_fails(void **state)
{
    struct fx *f = *state;
    assert_open_fails(f->dir, "is a directory");
}

static void
test_open_symlink_path_fails(void **state)
{
    struct fx *f = *state;
    fx_open(f);
    char link[400];
    snprintf(link, sizeof link, "%s/link.db", f->dir);
    assert_int_equal(symlink(f->path, link), 0);
    assert_open_fails(link, "symbolic link");
    snprintf(link, sizeof link, "%s/dangling.db", f->dir);
    assert_int_equal(symlink("/nonexistent/x.db", link), 0);
    assert_open_fails(link, "symbolic link");
}

static void
test_open_device_path_fails(void **state)
{
    (void)state;
    assert_open_fails("/dev/null", "not a regular file");
}

/* Open paths in DIR that a user without rights there cannot write: as root,
 * in a child that became nobody.  Exits 0 when every open failed clearly. */
static int
open_unwritable(const char *dir)
{
    char path[400], err[1024];
    struct srv_store *st = NULL;
    const char *causes[] = { "Permission denied", "Permission denied", "Permission denied" };
    const char *names[] = { "new.db", "sub/new.db", "root.db" };
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (srv_store_open(path, &st, err, sizeof err) != -1 || !strstr(err, path) ||
            !strstr(err, causes[i])) {
            fprintf(stderr, "open %s: \"%s\"\n", path, err);
            srv_store_close(st);
            return 1;
        }
    }
    return 0;
}

static void
test_open_unwritable_path_fails(void **state)
{
    struct fx *f = *state;
    char path[400];
    snprintf(path, sizeof path, "%s/root.db", f->dir);
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    assert_true(fd >= 0);
    close(fd);
    if (geteuid() != 0) {
        assert_int_equal(chmod(path, 0400), 0);
        assert_int_equal(chmod(f->dir, 0500), 0);
        int rc = open_unwritable(f->dir);
        chmod(f->dir, 0700);
        assert_int_equal(rc, 0);
        return;
    }
    /* root writes anywhere: drop to nobody in a child. */
    assert_int_equal(chmod(f->dir, 0755), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
            _exit(2);
        _exit(open_unwritable(f->dir));
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void
test_open_corrupt_file_fails(void **state)
{
    struct fx *f = *state;
    char path[400], junk[8192];
    snprintf(path, sizeof path, "%s/corrupt.db", f->dir);
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (char)(i * 131 + 7);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    assert_int_equal(fwrite(junk, 1, sizeof junk, fp), sizeof junk);
    fclose(fp);
    assert_open_fails(path, "file is not a database");
}

static void
test_open_foreign_database_fails(void **state)
{
    struct fx *f = *state;
    char path[400];
    snprintf(path, sizeof path, "%s/other.db", f->dir);
    raw_exec(path, "CREATE TABLE t (x)");
    assert_open_fails(path, "not an rspwalkd store");
    /* Refused before anything was written to it: still in its own journal mode. */
    assert_int_equal(raw_int(path, "SELECT journal_mode = 'delete' FROM pragma_journal_mode"), 1);
}

static void
test_open_newer_schema_fails(void **state)
{
    struct fx *f = *state;
    fx_open(f);
    srv_store_close(f->st);
    f->st = NULL;
    raw_exec(f->path, "PRAGMA user_version = 99");
    assert_open_fails(f->path, "schema version 99 is newer");
}

static void
test_open_twice_in_one_process_fails(void **state)
{
    struct fx *f = *state;
    fx_open(f);
    assert_open_fails(f->path, "already open in this process");
    char hard[400];
    snprintf(hard, sizeof hard, "%s/hard.db", f->dir);
    assert_int_equal(link(f->path, hard), 0);
    assert_open_fails(hard, "already open in this process");
    /* The first store is unharmed. */
    int64_t id = add_target(f, "127.0.0.1:1", NULL);
    assert_true(id > 0);
}

static void
test_open_while_another_process_has_it_fails(void **state)
{
    struct fx *f = *state;
    int up[2], down[2];
    assert_int_equal(pipe(up), 0);
    assert_int_equal(pipe(down), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct srv_store *st = NULL;
        char err[1024], c = 0;
        int rc = srv_store_open(f->path, &st, err, sizeof err);
        if (write(up[1], rc == 0 ? "y" : "n", 1) != 1 || read(down[0], &c, 1) < 0)
            rc = -1;
        srv_store_close(st);
        _exit(rc == 0 ? 0 : 1);
    }
    char c = 0;
    assert_int_equal(read(up[0], &c, 1), 1);
    assert_int_equal(c, 'y');
    assert_open_fails(f->path, "in use by another rspwalkd");
    assert_int_equal(write(down[1], "x", 1), 1);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    for (int i = 0; i < 2; i++) {
        close(up[i]);
        close(down[i]);
    }
    fx_open(f);
}

static void
test_open_parent_is_a_file_fails(void **state)
{
    struct fx *f = *state;
    char path[400];
    snprintf(path, sizeof path, "%s/file", f->dir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fclose(fp);
    snprintf(path, sizeof path, "%s/file/x.db", f->dir);
    assert_open_fails(path, "is not a directory");
}

static void
test_open_empty_path_fails(void **state)
{
    (void)state;
    struct srv_store *st = NULL;
    char err[256];
    assert_int_equal(srv_store_open("", &st, err, sizeof err), -1);
    assert_non_null(strstr(err, "no database path"));
}

/* ---- targets ------------------------------------------------------------ */

static void
test_target_add_get_each_in_id_order(void **state)
{
    struct fx *f = *state;
    fx_open(f);
    struct srv_target_rec in = { .target = (char *)"127.0.0.1:2345",
                                 .name = (char *)"board",
                                 .exe = (char *)"/bin/prog",
                                 .sysroot = (char *)"/srv/sysroot",
                                 .rtos = (char *)"freertos",
                                 .created_us = 1234 };
    int64_t a = 0;
    assert_int_equal(srv_store_target_add(f->st, &in, &a), 0);
    int64_t b = add_target(f, "unix:/run/stub", NULL);
    assert_true(b > a);

    struct srv_target_rec r;
    assert_int_equal(srv_store_target_get(f->st, a, &r), 0);
    assert_int_equal(r.id, a);
    assert_string_equal(r.target, "127.0.0.1:2345");
    assert_string_equal(r.name, "board");
    assert_string_equal(r.exe, "/bin/prog");
    assert_string_equal(r.sysroot, "/srv/sysroot");
    assert_string_equal(r.rtos, "freertos");
    assert_int_equal(r.created_us, 1234);
    srv_target_rec_fini(&r);
    assert_int_equal(srv_store_target_get(f->st, b, &r), 0);
    assert_null(r.name);
    assert_null(r.exe);
    assert_null(r.sysroot);
    assert_null(r.rtos);
    assert_true(r.created_us > 1600000000000000LL); /* now, not 0 */
    srv_target_rec_fini(&r);
    assert_int_equal(srv_store_target_get(f->st, b + 100, &r), 1);

    struct seen s = { 0 };
    assert_int_equal(srv_store_target_each(f->st, seen_target, &s), 0);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.ids[0], a);
    assert_int_equal(s.ids[1], b);
    assert_string_equal(s.text[1], "unix:/run/stub");
}

static void
test_target_add_without_target_string_fails(void **state)
{
    struct fx *f = *state;
    fx_open(f);
    struct srv_target_rec in = { .name = (char *)"x" };
    int64_t id = 0;
    assert_int_equal(srv_store_target_add(f->st, &in, &id), -1);
    assert_non_null(strstr(srv_store_errmsg(f->st), f->path));
    assert_non_null(strstr(srv_store_errmsg(f->st), "no target string"));
}

static void
test_target_add_string_too_long_fails(void **state)
{
    struct fx *f = *state;
    fx_open(f);
    char *big = malloc(SRV_STORE_STR_MAX + 2);
    assert_non_null(big);
    memset(big, 'a', SRV_STORE_STR_MAX + 1);
    big[SRV_STORE_STR_MAX + 1] = '\0';
    struct srv_target_rec in = { .target = (char *)"127.0.0.1:1", .exe = big };
    int64_t id = 0;
    assert_int_equal(srv_store_target_add(f->st, &in, &id), -1);
    assert_non_null(strstr(srv_store_errmsg(f->st), "exe longer than 4096 bytes"));
    free(big);
}

static void
test_target_delete_missing_returns_1(void **state)
{
    struct fx *f = *state;
    fx_open(f);
    int64_t a = add_target(f, "127.0.0.1:1", NULL);
    assert_int_equal(srv_store_target_delete(f->st, a), 0);
    assert_int_equal(srv_store_target_delete(f->st, a), 1);
    assert_int_equal(srv_store_target_delete(f->st, 999), 1);
}

static void
test_target_ids_never_reused_after_delete(void **state)
{
    struct fx *f = *state;
    fx_open(f);
    add_target(f, "127.0.0.1:1", NULL);
    int64_t b = add_target(f, "127.0.0.1:2", NULL);
    assert_int_equal(srv_store_target_delete(f->st, b), 0);
    fx_reopen(f);
    int64_t c = add_target(f, "127.0.0.1:3", NULL);
    assert_true(c > b);
}

static void
test_each_callback_nonzero_stops_and_is_returned(void **state)
{
    struct fx *f = *state;
    fx_open(f);
    int64_t t = add_target(f, "127.0.0.1:1", NULL);
    add_target(f, "127.0.0.1:2", NULL);
    add_target(f, "127.0.0.1:3", NULL);
    struct seen s = { .stop_at = 2 };
    assert_int_equal(srv_store_target_each(f->st, seen_target, &s), 7);
    assert_int_equal(s.n, 2);

    int64_t id, run;
    for (int i = 0; i < 3; i++)
        assert_int_equal(srv_store_snapshot_add(f->st, t, i, "{}", &id), 0);
    s = (struct seen){ .stop_at = 1 };
    assert_int_equal(srv_store_snapshot_list(f->st, t, 0, 0, 1, seen_doc, &s), 7);
    assert_int_equal(s.n, 1);

    assert_int_equal(srv_store_sample_new(f->st, "[1]", 100, 1, 5, &run), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(srv_store_sample_add(f->st, run, t, i, "{}"), 0);
    s = (struct seen){ .stop_at = 2 };
    assert_int_equal(srv_store_sample_stacks(f->st, run, seen_doc, &s), 7);
    assert_int_equal(s.n, 2);
    assert_int_equal(srv_store_sample_new(f->st, "[1]", 100, 1, 6, &run), 0);
    s = (struct seen){ .stop_at = 1 };
    assert_int_equal(srv_store_sample_each(f->st, 0, seen_sample, &s), 7);
    assert_int_equal(s.n, 1);
    /* A statement left mid-walk is reset: the next call works. */
    assert_int_equal(srv_store_snapshot_add(f->st, t, 9, "{}", &id), 0);
}

/* ---- snapshots ---------------------------------------------------------- */

static void
test_snapshot_add_get_list_after_and_limit(void **state)
{
    struct fx *f = *state;
    fx_open(f);
    int64_t t = add_target(f, "127.0.0.1:1", NULL);
    int64_t u = add_target(f, "127.0.0.1:2", NULL);
    int64_t ids[5], other;
    char doc[32];
    for (int i = 0; i < 5; i++) {
        snprintf(doc, sizeof doc, "{\"n\": %d}", i);
        assert_int_equal(srv_store_snapshot_add(f->st, t, 100 + i, doc, &ids[i]), 0);
        assert_int_equal(srv_store_snapshot_add(f->st, u, 200 + i, "{}", &other), 0);
    }
    struct srv_doc_rec r;
    assert_int_equal(srv_store_snapshot_get(f->st, ids[3], &r), 0);
    assert_int_equal(r.id, ids[3]);
    assert_int_equal(r.target_id, t);
    assert_int_equal(r.time_us, 103);
    assert_string_equal(r.doc, "{\"n\": 3}");
    srv_doc_rec_fini(&r);
    assert_null(r.doc);
    assert_int_equal(srv_store_snapshot_get(f->st, other + 1, &r), 1);

    struct seen s = { 0 };
    assert_int_equal(srv_store_snapshot_list(f->st, t, 0, 0, 1, seen_doc, &s), 0);
    assert_int_equal(s.n, 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(s.ids[i], ids[i]);
        assert_int_equal(s.other[i], t);
    }
    assert_string_equal(s.text[4], "{\"n\": 4}");
    s = (struct seen){ 0 };
    assert_int_equal(srv_store_snapshot_list(f->st, t, ids[1], 2, 1, seen_doc, &s), 0);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.ids[0], ids[2]);
    assert_int_equal(s.ids[1], ids[3]);
    s = (struct seen){ 0 };
    assert_int_equal(srv_store_snapshot_list(f->st, 999, 0, 0, 1, seen_doc, &s), 0);
    assert_int_equal(s.n, 0);
}

static void
test_snapshot_list_without_doc_leaves_doc_null(void **state)
{
    struct fx *f = *state;
    fx_open(f);
    int64_t t = add_target(f, "127.0.0.1:1", NULL), id;
    assert_int_equal(srv_store_snapshot_add(f->st, t, 1, "{\"big\": 1}", &id), 0);
    struct seen s = { 0 };
    assert_int_equal(srv_store_snapshot_list(f->st, t, 0, 10, 0, seen_doc, &s), 0);
    assert_int_equal(s.n, 1);
    assert_true(s.doc_null[0]);
}

static void
test_snapshot_of_unknown_target_is_refused(void **state)
{
    struct fx *f = *state;
    fx_open(f);
    int64_t id = 0;
    assert_int_equal(srv_store_snapshot_add(f->st, 42, 1, "{}", &id), -1);
    const char *m = srv_store_errmsg(f->st);
    assert_non_null(strstr(m, f->path));
    assert_non_null(strstr(m, "target 42"));
    assert_non_null(strstr(m, "not in the store"));
    assert_int_equal(srv_store_sample_add(f->st, 1, 42, 1, "{}"), -1);
    assert_non_null(strstr(srv_store_errmsg(f->st), "not in the store"));
}

static void
test_snapshot_doc_over_limit_is_refused(void **state)
{
    struct fx *f = *state;
    fx_open(f);
    int64_t t = add_target(f, "127.0.0.1:1", NULL), id = 0, run = 0;
    char *big = malloc(SRV_STORE_DOC_MAX + 2);
    assert_non_null(big);
    memset(big, ' ', SRV_STORE_DOC_MAX + 1);
    big[SRV_STORE_DOC_MAX + 1] = '\0';
    assert_int_equal(srv_store_snapshot_add(f->st, t, 1, big, &id), -1);
    assert_non_null(strstr(srv_store_errmsg(f->st), "document larger than 64 MiB"));
    assert_int_equal(srv_store_sample_new(f->st, "[]", 1, 1, 1, &run), 0);
    assert_int_equal(srv_store_sample_add(f->st, run, t, 1, big), -1);
    assert_non_null(strstr(srv_store_errmsg(f->st), "document larger than 64 MiB"));
    /* Exactly the limit is stored. */
    big[SRV_STORE_DOC_MAX] = '\0';
    assert_int_equal(srv_store_snapshot_add(f->st, t, 1, big, &id), 0);
    assert_string_equal(srv_store_errmsg(f->st), "");
    free(big);
    assert_int_equal(srv_store_snapshot_add(f->st, t, 1, NULL, &id), -1);
}

/* ---- sample runs -------------------------------------------------------- */

static void
test_sample_run_new_add_finish_get_stacks(void **state)
{
    struct fx *f = *state;
    fx_open(f);
    int64_t t = add_target(f, "127.0.0.1:1", NULL);
    int64_t u = add_target(f, "127.0.0.1:2", NULL);
    char targets[64];
    snprintf(targets, sizeof targets, "[%lld, %lld]", (long long)t, (long long)u);
    int64_t run = 0;
    assert_int_equal(srv_store_sample_new(f->st, targets, 250, 2.5, 1000, &run), 0);

    struct srv_sample_rec r;
    assert_int_equal(srv_store_sample_get(f->st, run, &r), 0);
    assert_int_equal(r.id, run);
    assert_string_equal(r.targets, targets);
    assert_true(r.hz == 250 && r.seconds == 2.5);
    assert_int_equal(r.started_us, 1000);
    assert_int_equal(r.ended_us, 0);
    assert_string_equal(r.state, "running");
    assert_int_equal(r.ticks, 0);
    srv_sample_rec_fini(&r);

    for (int i = 0; i < 3; i++) {
        assert_int_equal(srv_store_sample_add(f->st, run, t, 1000 + i, "{\"t\": 1}"), 0);
        assert_int_equal(srv_store_sample_add(f->st, run, u, 1000 + i, "{\"t\": 2}"), 0);
    }
    assert_int_equal(srv_store_sample_finish(f->st, run, "done", 3500), 0);
    assert_int_equal(srv_store_sample_get(f->st, run, &r), 0);
    assert_string_equal(r.state, "done");
    assert_int_equal(r.ended_us, 3500);
    assert_int_equal(r.ticks, 6);
    srv_sample_rec_fini(&r);
    assert_int_equal(srv_store_sample_get(f->st, run + 1, &r), 1);

    struct seen s = { 0 };
    assert_int_equal(srv_store_sample_stacks(f->st, run, seen_doc, &s), 0);
    assert_int_equal(s.n, 6);
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(s.other[i], i % 2 ? u : t);
        assert_string_equal(s.text[i], i % 2 ? "{\"t\": 2}" : "{\"t\": 1}");
        if (i > 0)
            assert_true(s.ids[i] > s.ids[i - 1]);
    }
}

static void
test_sample_each_newest_first_with_limit(void **state)
{
    struct fx *f = *state;
    fx_open(f);
    int64_t t = add_target(f, "127.0.0.1:1", NULL), runs[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(srv_store_sample_new(f->st, "[1]", 10, 1, i, &runs[i]), 0);
    assert_int_equal(srv_store_sample_add(f->st, runs[1], t, 1, "{}"), 0);
    assert_int_equal(srv_store_sample_finish(f->st, runs[0], "failed", 9), 0);
    struct seen s = { 0 };
    assert_int_equal(srv_store_sample_each(f->st, 0, seen_sample, &s), 0);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.ids[0], runs[2]);
    assert_int_equal(s.ids[1], runs[1]);
    assert_int_equal(s.other[1], 1);
    assert_string_equal(s.text[2], "failed");
    s = (struct seen){ 0 };
    assert_int_equal(srv_store_sample_each(f->st, 2, seen_sample, &s), 0);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.ids[1], runs[1]);
}

static void
test_sample_new_bad_targets_or_rate_fails(void **state)
{
    struct fx *f = *state;
    fx_open(f);
    int64_t run = 0;
    assert_int_equal(srv_store_sample_new(f->st, "{\"a\": 1}", 10, 1, 1, &run), -1);
    assert_non_null(strstr(srv_store_errmsg(f->st), "not a JSON array"));
    assert_int_equal(srv_store_sample_new(f->st, "[1", 10, 1, 1, &run), -1);
    assert_non_null(strstr(srv_store_errmsg(f->st), "not a JSON array"));
    assert_int_equal(srv_store_sample_new(f->st, "[1]", -1, 1, 1, &run), -1);
    assert_non_null(strstr(srv_store_errmsg(f->st), "not negative"));
    assert_int_equal(srv_store_sample_new(f->st, "[1]", 10, 0.0 / 0.0, 1, &run), -1);
    assert_int_equal(srv_store_sample_new(f->st, NULL, 10, 1, 1, &run), -1);
    assert_int_equal(run, 0);
}

static void
test_sample_finish_bad_state_or_missing_run_fails(void **state)
{
    struct fx *f = *state;
    fx_open(f);
    int64_t run = 0;
    assert_int_equal(srv_store_sample_new(f->st, "[]", 10, 1, 1, &run), 0);
    assert_int_equal(srv_store_sample_finish(f->st, run, "running", 2), -1);
    assert_non_null(strstr(srv_store_errmsg(f->st), "is not done, failed or interrupted"));
    assert_int_equal(srv_store_sample_finish(f->st, run + 7, "done", 2), -1);
    assert_non_null(strstr(srv_store_errmsg(f->st), "no such run"));
    assert_int_equal(srv_store_sample_finish(f->st, run, "interrupted", 2), 0);
}

/* ---- restart, cascades, interrupted runs ---------------------------------- */

static void
test_restart_keeps_everything(void **state)
{
    struct fx *f = *state;
    fx_open(f);
    int64_t t = add_target(f, "127.0.0.1:1", "one"), snap, run, done;
    assert_int_equal(srv_store_snapshot_add(f->st, t, 5, "{\"snap\": 1}", &snap), 0);
    assert_int_equal(srv_store_sample_new(f->st, "[1]", 10, 1, 1, &done), 0);
    assert_int_equal(srv_store_sample_add(f->st, done, t, 2, "{\"s\": 1}"), 0);
    assert_int_equal(srv_store_sample_finish(f->st, done, "done", 3), 0);
    assert_int_equal(srv_store_sample_new(f->st, "[1]", 10, 1, 1, &run), 0);
    fx_reopen(f);

    struct srv_target_rec tr;
    assert_int_equal(srv_store_target_get(f->st, t, &tr), 0);
    assert_string_equal(tr.name, "one");
    srv_target_rec_fini(&tr);
    struct srv_doc_rec dr;
    assert_int_equal(srv_store_snapshot_get(f->st, snap, &dr), 0);
    assert_string_equal(dr.doc, "{\"snap\": 1}");
    srv_doc_rec_fini(&dr);
    struct srv_sample_rec sr;
    assert_int_equal(srv_store_sample_get(f->st, done, &sr), 0);
    assert_string_equal(sr.state, "done");
    assert_int_equal(sr.ticks, 1);
    assert_int_equal(sr.ended_us, 3);
    srv_sample_rec_fini(&sr);
    struct seen s = { 0 };
    assert_int_equal(srv_store_sample_stacks(f->st, done, seen_doc, &s), 0);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.text[0], "{\"s\": 1}");
}

static void
test_target_delete_cascades_to_snapshots_and_sample_stacks(void **state)
{
    struct fx *f = *state;
    fx_open(f);
    int64_t t = add_target(f, "127.0.0.1:1", NULL);
    int64_t u = add_target(f, "127.0.0.1:2", NULL), snap_t, snap_u, run;
    assert_int_equal(srv_store_snapshot_add(f->st, t, 1, "{}", &snap_t), 0);
    assert_int_equal(srv_store_snapshot_add(f->st, u, 1, "{}", &snap_u), 0);
    assert_int_equal(srv_store_sample_new(f->st, "[1, 2]", 10, 1, 1, &run), 0);
    assert_int_equal(srv_store_sample_add(f->st, run, t, 1, "{}"), 0);
    assert_int_equal(srv_store_sample_add(f->st, run, u, 1, "{}"), 0);

    assert_int_equal(srv_store_target_delete(f->st, t), 0);
    struct srv_doc_rec dr;
    assert_int_equal(srv_store_snapshot_get(f->st, snap_t, &dr), 1);
    assert_int_equal(srv_store_snapshot_get(f->st, snap_u, &dr), 0);
    srv_doc_rec_fini(&dr);
    struct seen s = { 0 };
    assert_int_equal(srv_store_sample_stacks(f->st, run, seen_doc, &s), 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.other[0], u);
    /* The run itself stays: it is the other target's history too. */
    struct srv_sample_rec sr;
    assert_int_equal(srv_store_sample_get(f->st, run, &sr), 0);
    assert_int_equal(sr.ticks, 1);
    srv_sample_rec_fini(&sr);
    fx_reopen(f);
    assert_int_equal(srv_store_snapshot_get(f->st, snap_t, &dr), 1);
}

static void
test_reopen_marks_running_runs_interrupted(void **state)
{
    struct fx *f = *state;
    fx_open(f);
    int64_t t = add_target(f, "127.0.0.1:1", NULL), empty, fed, done;
    assert_int_equal(srv_store_sample_new(f->st, "[1]", 10, 1, 100, &empty), 0);
    assert_int_equal(srv_store_sample_new(f->st, "[1]", 10, 1, 200, &fed), 0);
    assert_int_equal(srv_store_sample_add(f->st, fed, t, 250, "{}"), 0);
    assert_int_equal(srv_store_sample_add(f->st, fed, t, 270, "{}"), 0);
    assert_int_equal(srv_store_sample_new(f->st, "[1]", 10, 1, 300, &done), 0);
    assert_int_equal(srv_store_sample_finish(f->st, done, "done", 400), 0);
    fx_reopen(f);

    struct srv_sample_rec r;
    assert_int_equal(srv_store_sample_get(f->st, empty, &r), 0);
    assert_string_equal(r.state, "interrupted");
    assert_int_equal(r.ended_us, 100); /* no stack: its start */
    srv_sample_rec_fini(&r);
    assert_int_equal(srv_store_sample_get(f->st, fed, &r), 0);
    assert_string_equal(r.state, "interrupted");
    assert_int_equal(r.ended_us, 270); /* its last stack */
    assert_int_equal(r.ticks, 2);
    srv_sample_rec_fini(&r);
    assert_int_equal(srv_store_sample_get(f->st, done, &r), 0);
    assert_string_equal(r.state, "done");
    assert_int_equal(r.ended_us, 400);
    srv_sample_rec_fini(&r);
}

/* ---- sample runs as folded paths ----------------------------------------- */

static int
seen_path(void *arg, const struct srv_path_rec *r)
{
    struct seen *s = arg;
    s->other[s->n] = r->count;
    snprintf(s->text[s->n], sizeof s->text[0], "%lld|%s|%s|%s", (long long)r->target_id, r->target,
             r->thread, r->path);
    s->n++;
    return s->stop_at && s->n == s->stop_at ? 7 : 0;
}

static void
test_sample_paths_add_up_and_count_ticks(void **state)
{
    struct fx *f = *state;
    fx_open(f);
    int64_t t = add_target(f, "127.0.0.1:1", NULL), u = add_target(f, "127.0.0.1:2", NULL), run;
    assert_int_equal(srv_store_sample_new(f->st, "[1, 2]", 1000, 1, 100, &run), 0);
    struct srv_path_rec b1[] = {
        { .thread = "p1.1", .path = "main\t/bin/a\nf\t/bin/a", .count = 3 },
        { .thread = "p1.2", .path = "main\t/bin/a", .count = 1 },
    };
    struct srv_path_rec b2[] = {
        { .thread = "p1.1", .path = "main\t/bin/a\nf\t/bin/a", .count = 2 },
    };
    assert_int_equal(srv_store_sample_paths_add(f->st, run, t, 150, 3, b1, 2), 0);
    assert_int_equal(srv_store_sample_paths_add(f->st, run, t, 180, 2, b2, 1), 0);
    assert_int_equal(srv_store_sample_paths_add(f->st, run, u, 170, 4, b2, 1), 0);
    /* A batch of samples where no thread was walked counts its ticks alone. */
    assert_int_equal(srv_store_sample_paths_add(f->st, run, u, 175, 1, NULL, 0), 0);

    struct srv_sample_rec r;
    assert_int_equal(srv_store_sample_get(f->st, run, &r), 0);
    assert_int_equal(r.ticks, 10);
    srv_sample_rec_fini(&r);
    struct seen s = { 0 };
    assert_int_equal(srv_store_sample_paths(f->st, run, seen_path, &s), 0);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.text[0], "1|127.0.0.1:1|p1.1|main\t/bin/a\nf\t/bin/a");
    assert_int_equal(s.other[0], 5);
    assert_string_equal(s.text[1], "1|127.0.0.1:1|p1.2|main\t/bin/a");
    assert_int_equal(s.other[1], 1);
    assert_string_equal(s.text[2], "2|127.0.0.1:2|p1.1|main\t/bin/a\nf\t/bin/a");
    assert_int_equal(s.other[2], 2);
    s = (struct seen){ .stop_at = 2 };
    assert_int_equal(srv_store_sample_paths(f->st, run, seen_path, &s), 7);

    /* A dead server's run ends at its last committed batch; a deleted
     * target's paths go with it. */
    fx_reopen(f);
    assert_int_equal(srv_store_sample_get(f->st, run, &r), 0);
    assert_string_equal(r.state, "interrupted");
    assert_int_equal(r.ended_us, 180);
    srv_sample_rec_fini(&r);
    assert_int_equal(srv_store_target_delete(f->st, t), 0);
    s = (struct seen){ 0 };
    assert_int_equal(srv_store_sample_paths(f->st, run, seen_path, &s), 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(srv_store_sample_get(f->st, run, &r), 0);
    assert_int_equal(r.ticks, 5);
    srv_sample_rec_fini(&r);
}

static void
test_sample_paths_bad_batch_is_refused_whole(void **state)
{
    struct fx *f = *state;
    fx_open(f);
    int64_t t = add_target(f, "127.0.0.1:1", NULL), run;
    assert_int_equal(srv_store_sample_new(f->st, "[1]", 10, 1, 1, &run), 0);
    struct srv_path_rec bad[] = {
        { .thread = "p1.1", .path = "main\t", .count = 1 },
        { .thread = "p1.1", .path = NULL, .count = 1 },
    };
    assert_int_equal(srv_store_sample_paths_add(f->st, run, t, 5, 2, bad, 2), -1);
    assert_non_null(strstr(srv_store_errmsg(f->st), "path 1 has no thread, no path or no count"));
    /* Nothing of a refused batch stays: neither its first path nor its ticks. */
    struct seen s = { 0 };
    assert_int_equal(srv_store_sample_paths(f->st, run, seen_path, &s), 0);
    assert_int_equal(s.n, 0);
    struct srv_sample_rec r;
    assert_int_equal(srv_store_sample_get(f->st, run, &r), 0);
    assert_int_equal(r.ticks, 0);
    srv_sample_rec_fini(&r);
    assert_int_equal(srv_store_sample_paths_add(f->st, run, 42, 5, 1, bad, 1), -1);
    assert_non_null(strstr(srv_store_errmsg(f->st), "is not in the store"));
    assert_int_equal(srv_store_sample_paths_add(f->st, run + 1, t, 5, 1, bad, 1), -1);
}

/* ---- threads ------------------------------------------------------------ */

struct adder {
    struct srv_store *st;
    int64_t run, target;
    int failures;
    char msg[256];
};

#define ADDS_PER_THREAD 100

static void *
adder_main(void *arg)
{
    struct adder *a = arg;
    for (int i = 0; i < ADDS_PER_THREAD; i++) {
        int64_t id;
        if (srv_store_sample_add(a->st, a->run, a->target, i, "{\"x\": 1}") != 0 ||
            srv_store_snapshot_add(a->st, a->target, i, "{}", &id) != 0) {
            snprintf(a->msg, sizeof a->msg, "%s", srv_store_errmsg(a->st));
            a->failures++;
        }
    }
    return NULL;
}

static void
test_threads_add_concurrently_and_all_are_stored(void **state)
{
    struct fx *f = *state;
    fx_open(f);
    struct adder a[4];
    pthread_t th[4];
    int64_t run;
    assert_int_equal(srv_store_sample_new(f->st, "[]", 10, 1, 1, &run), 0);
    for (int i = 0; i < 4; i++) {
        a[i] = (struct adder){ .st = f->st, .run = run };
        a[i].target = add_target(f, "127.0.0.1:1", NULL);
        assert_int_equal(pthread_create(&th[i], NULL, adder_main, &a[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        if (a[i].failures)
            fail_msg("thread %d: %d failures, last: %s", i, a[i].failures, a[i].msg);
    }
    struct srv_sample_rec r;
    assert_int_equal(srv_store_sample_get(f->st, run, &r), 0);
    assert_int_equal(r.ticks, 4 * ADDS_PER_THREAD);
    srv_sample_rec_fini(&r);
    struct seen s = { 0 };
    assert_int_equal(srv_store_snapshot_list(f->st, a[2].target, 0, 64, 0, seen_doc, &s), 0);
    assert_int_equal(s.n, 64);
}

int
main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, fx_setup, fx_teardown)
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_path_uses_xdg_state_home),
        cmocka_unit_test(test_default_path_ignores_relative_xdg_and_uses_home),
        cmocka_unit_test(test_default_path_too_small_buffer_fails),
        T(test_open_creates_directories_0700_and_file_0600),
        T(test_open_sets_wal_schema_version_and_indexes),
        T(test_open_directory_path_fails),
        T(test_open_symlink_path_fails),
        cmocka_unit_test(test_open_device_path_fails),
        T(test_open_unwritable_path_fails),
        T(test_open_corrupt_file_fails),
        T(test_open_foreign_database_fails),
        T(test_open_newer_schema_fails),
        T(test_open_twice_in_one_process_fails),
        T(test_open_while_another_process_has_it_fails),
        T(test_open_parent_is_a_file_fails),
        cmocka_unit_test(test_open_empty_path_fails),
        T(test_target_add_get_each_in_id_order),
        T(test_target_add_without_target_string_fails),
        T(test_target_add_string_too_long_fails),
        T(test_target_delete_missing_returns_1),
        T(test_target_ids_never_reused_after_delete),
        T(test_each_callback_nonzero_stops_and_is_returned),
        T(test_snapshot_add_get_list_after_and_limit),
        T(test_snapshot_list_without_doc_leaves_doc_null),
        T(test_snapshot_of_unknown_target_is_refused),
        T(test_snapshot_doc_over_limit_is_refused),
        T(test_sample_run_new_add_finish_get_stacks),
        T(test_sample_each_newest_first_with_limit),
        T(test_sample_new_bad_targets_or_rate_fails),
        T(test_sample_finish_bad_state_or_missing_run_fails),
        T(test_restart_keeps_everything),
        T(test_target_delete_cascades_to_snapshots_and_sample_stacks),
        T(test_reopen_marks_running_runs_interrupted),
        T(test_sample_paths_add_up_and_count_ticks),
        T(test_sample_paths_bad_batch_is_refused_whole),
        T(test_threads_add_concurrently_and_all_are_stored),
    };
#undef T
    return cmocka_run_group_tests_name("server/store", tests, NULL, NULL);
}
