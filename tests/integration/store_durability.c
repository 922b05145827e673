/* tests/integration/store_durability.c -- the store keeps every stack it
 * reported stored across a kill -9 (run-store-durability.sh builds and runs it).
 *
 * `store_durability DB ROUNDS SEED`: each round forks a writer that opens
 * DB, registers a target, starts a sample run and adds stacks (documents of
 * 100 B to 256 KiB, so WAL checkpoints happen too) in a loop, writing each
 * one's number on a pipe only after srv_store_sample_add returned.  The
 * parent kills it with SIGKILL at a random moment (during open as well),
 * reopens DB and checks that every reported stack is there, byte for byte,
 * that the run is now "interrupted", and that PRAGMA integrity_check says
 * ok.  One line per round: "PASS store-durability/round-N (...)" or
 * "FAIL store-durability/round-N: why".  Not a server test: the store alone.
 */
#define _DEFAULT_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "server/store.h"

/* The longest document: a few times SQLite's page cache, so that a round
 * crosses WAL checkpoints (every 1000 pages, 4 MiB). */
#define DOC_MAX (256 * 1024)
/* The kill lands within this many ms of the fork: some during open, most
 * mid-loop. */
#define KILL_MAX_MS 400

static uint64_t
mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

/* Stack K of round R's document into BUF (DOC_MAX + 64 bytes): mostly small,
 * one in ten large; its bytes follow from (SEED, R, K) so the parent can
 * check them. */
static void
doc_make(uint64_t seed, int round, int64_t k, char *buf)
{
    uint64_t h = mix(seed ^ mix((uint64_t)round << 40 ^ (uint64_t)k));
    size_t len = h % 10 ? 100 + h % 2000 : 10000 + h % (DOC_MAX - 10000);
    int n = sprintf(buf, "{\"k\": %" PRId64 ", \"pad\": \"", k);
    for (size_t i = 0; i < len; i++)
        buf[n + i] = (char)('a' + (mix(h + i / 64) + i) % 26);
    strcpy(buf + n + len, "\"}");
}

/* Write one report line; the pipe keeps it when the writer dies after. */
static void
report(int fd, const char *fmt, ...)
{
    char line[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (write(fd, line, (size_t)n) != n)
        _exit(3);
}

static void
writer(const char *db, int round, uint64_t seed, int fd)
{
    struct srv_store *st = NULL;
    char err[1024];
    if (srv_store_open(db, &st, err, sizeof err) != 0) {
        report(fd, "E open\n");
        _exit(2);
    }
    struct srv_target_rec t = { .target = (char *)"127.0.0.1:1" };
    int64_t tid = 0, run = 0;
    if (srv_store_target_add(st, &t, &tid) != 0 ||
        srv_store_sample_new(st, "[1]", 1000, 5, 1, &run) != 0)
        _exit(2);
    report(fd, "T %" PRId64 "\nR %" PRId64 "\n", tid, run);
    char *doc = malloc(DOC_MAX + 64);
    for (int64_t k = 1; doc; k++) {
        doc_make(seed, round, k, doc);
        if (srv_store_sample_add(st, run, tid, k, doc) != 0) {
            report(fd, "E add\n");
            _exit(2);
        }
        report(fd, "K %" PRId64 "\n", k);
        if (k % 50 == 0) {
            int64_t sid;
            if (srv_store_snapshot_add(st, tid, k, doc, &sid) != 0)
                _exit(2);
            report(fd, "S %" PRId64 " %" PRId64 "\n", sid, k);
        }
    }
    _exit(2);
}

/* What the writer reported before it died. */
struct reported {
    int64_t target, run, last_k, snaps, snap_id[4096], snap_k[4096];
    bool error;
};

static void
read_reports(int fd, struct reported *r)
{
    FILE *fp = fdopen(fd, "r");
    char line[128];
    memset(r, 0, sizeof *r);
    while (fp && fgets(line, sizeof line, fp)) {
        int64_t a = 0, b = 0;
        if (sscanf(line, "T %" SCNd64, &a) == 1)
            r->target = a;
        else if (sscanf(line, "R %" SCNd64, &a) == 1)
            r->run = a;
        else if (sscanf(line, "K %" SCNd64, &a) == 1)
            r->last_k = a;
        else if (sscanf(line, "S %" SCNd64 " %" SCNd64, &a, &b) == 2 && r->snaps < 4096) {
            r->snap_id[r->snaps] = a;
            r->snap_k[r->snaps++] = b;
        } else if (line[0] == 'E')
            r->error = true;
    }
    if (fp)
        fclose(fp);
}

struct check {
    uint64_t seed;
    int round;
    int64_t next_k; /* the stack expected next: they come back in the order added */
    int64_t stored;
    char *want;
    char why[256];
};

static int
check_stack(void *arg, const struct srv_doc_rec *r)
{
    struct check *c = arg;
    if (r->time_us != c->next_k) {
        snprintf(c->why, sizeof c->why, "stack %" PRId64 " where %" PRId64 " was expected",
                 r->time_us, c->next_k);
        return 1;
    }
    doc_make(c->seed, c->round, r->time_us, c->want);
    if (strcmp(r->doc, c->want) != 0) {
        snprintf(c->why, sizeof c->why, "stack %" PRId64 "'s document differs from what was added",
                 r->time_us);
        return 1;
    }
    c->next_k++;
    c->stored++;
    return 0;
}

static int
integrity(const char *db, char *why, size_t len)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *s = NULL;
    int ok = -1;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &s, NULL) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW) {
        const char *res = (const char *)sqlite3_column_text(s, 0);
        ok = strcmp(res, "ok") == 0 ? 0 : -1;
        if (ok)
            snprintf(why, len, "integrity_check: %s", res);
    } else {
        snprintf(why, len, "integrity_check: %s", sqlite3_errmsg(h));
    }
    sqlite3_finalize(s);
    sqlite3_close(h);
    return ok;
}

/* One round; returns 0 when it passed.  The line is printed here. */
static int
round_run(const char *db, int round, uint64_t seed)
{
    int fds[2];
    if (pipe(fds) != 0)
        return printf("FAIL store-durability/round-%d: pipe: %s\n", round, strerror(errno)), 1;
    long kill_ms = (long)(mix(seed + (uint64_t)round) % KILL_MAX_MS);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        writer(db, round, seed, fds[1]);
    }
    close(fds[1]);
    struct timespec ts = { kill_ms / 1000, (kill_ms % 1000) * 1000000 };
    nanosleep(&ts, NULL);
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    struct reported *rep = malloc(sizeof *rep);
    read_reports(fds[0], rep);

    char why[1200] = "";
    struct check c = { .seed = seed, .round = round, .next_k = 1, .want = malloc(DOC_MAX + 64) };
    struct srv_store *st = NULL;
    char err[1024];
    int64_t ticks = 0;
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
        snprintf(why, sizeof why, "the writer ended before the kill (status %d)", status);
    else if (rep->error)
        snprintf(why, sizeof why, "the writer's store call failed before the kill");
    else if (srv_store_open(db, &st, err, sizeof err) != 0)
        snprintf(why, sizeof why, "reopen: %s", err);
    if (!why[0] && rep->run) {
        struct srv_sample_rec sr;
        if (srv_store_sample_get(st, rep->run, &sr) != 0) {
            snprintf(why, sizeof why, "run %" PRId64 " is gone", rep->run);
        } else {
            ticks = sr.ticks;
            if (strcmp(sr.state, "interrupted") != 0)
                snprintf(why, sizeof why, "run %" PRId64 " is \"%s\", not interrupted", rep->run,
                         sr.state);
            else if (sr.ticks > 0 && sr.ended_us != sr.ticks)
                snprintf(why, sizeof why,
                         "run's ended_us %" PRId64 " is not its last stack %" PRId64, sr.ended_us,
                         sr.ticks);
            srv_sample_rec_fini(&sr);
        }
        if (!why[0] && srv_store_sample_stacks(st, rep->run, check_stack, &c) != 0)
            snprintf(why, sizeof why, "%s", c.why[0] ? c.why : srv_store_errmsg(st));
        /* Every reported stack, and at most the one in flight at the kill. */
        if (!why[0] && (c.stored < rep->last_k || c.stored > rep->last_k + 1))
            snprintf(why, sizeof why,
                     "%" PRId64 " stacks reported stored, %" PRId64 " in the store", rep->last_k,
                     c.stored);
        if (!why[0] && ticks != c.stored)
            snprintf(why, sizeof why, "ticks %" PRId64 " but %" PRId64 " stacks", ticks, c.stored);
        for (int64_t i = 0; !why[0] && i < rep->snaps; i++) {
            struct srv_doc_rec d;
            if (srv_store_snapshot_get(st, rep->snap_id[i], &d) != 0) {
                snprintf(why, sizeof why, "snapshot %" PRId64 " is gone", rep->snap_id[i]);
                break;
            }
            doc_make(seed, round, rep->snap_k[i], c.want);
            if (strcmp(d.doc, c.want) != 0)
                snprintf(why, sizeof why, "snapshot %" PRId64 " differs", rep->snap_id[i]);
            srv_doc_rec_fini(&d);
        }
    }
    srv_store_close(st);
    if (!why[0])
        integrity(db, why, sizeof why);
    if (why[0])
        printf("FAIL store-durability/round-%d: %s (seed %" PRIu64 ", killed at %ld ms)\n", round,
               why, seed, kill_ms);
    else
        printf("PASS store-durability/round-%d (killed at %ld ms: %" PRId64
               " stacks reported, %" PRId64 " stored, %" PRId64 " snapshots)\n",
               round, kill_ms, rep->last_k, c.stored, rep->snaps);
    fflush(stdout);
    free(c.want);
    free(rep);
    return why[0] != 0;
}

int
main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: store_durability DB ROUNDS SEED\n");
        return 2;
    }
    int rounds = atoi(argv[2]), failed = 0;
    uint64_t seed = strtoull(argv[3], NULL, 0);
    for (int r = 1; r <= rounds; r++)
        failed += round_run(argv[1], r, seed);
    return failed ? 1 : 0;
}
