/* tests/thread/walk8.c -- walkers of several targets in as many threads, one module cache.
 *
 *   walk8 ROUNDS HOST:PORT EXE EXPECT [HOST:PORT EXE EXPECT]...
 *
 * One thread per target (tests/thread/run starts them: fixtures under
 * gdbserver).  Every thread connects, resumes its target to its stop, and
 * walks it WALKS times; then, ROUNDS - 1 times, connects again (gdbserver
 * keeps the target stopped between connections) with a new walker and walks
 * again.
 * All walkers share one module cache, so the threads open, parse and look up
 * the same files at the same time.  A walk passes when the names of its
 * frames, kept to those EXPECT names ("e d c b a main"; "rec*3" is three
 * frames of rec), are EXPECT in order.  Prints one line per failed walk and
 * "walk8: N passed, M failed"; exits 0 when none failed.  Built with
 * ThreadSanitizer by `make check-tsan`, which fails on any report.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rspwalk/rspwalk.h"

#define MAX_TARGETS 16
#define MAX_EXPECT  512
/* Walks of one connection: the walker's own caches are warm after the
 * first, so the later ones spend their time in the shared ones. */
#define WALKS 8

struct target {
    const char *spec, *exe, *expect;
    const char *want[MAX_EXPECT]; /* EXPECT, one name a frame */
    char *words;                  /* owned: WANT's storage */
    size_t nwant;
    unsigned passed, failed;
};

static struct sw_modcache *g_cache;
static unsigned g_rounds;
static pthread_barrier_t g_start;

/* EXPECT's names, NAME*K written out K times. */
static int
parse_expect(struct target *t)
{
    t->words = strdup(t->expect);
    if (t->words == NULL)
        return -1;
    for (char *save = NULL, *w = strtok_r(t->words, " ", &save); w != NULL;
         w = strtok_r(NULL, " ", &save)) {
        char *star = strchr(w, '*');
        long k = 1;
        if (star != NULL) {
            *star = '\0';
            k = strtol(star + 1, NULL, 10);
        }
        for (long i = 0; i < k; i++) {
            if (t->nwant == MAX_EXPECT)
                return -1;
            t->want[t->nwant++] = w;
        }
    }
    return 0;
}

static bool
wanted(const struct target *t, const char *name)
{
    for (size_t i = 0; i < t->nwant; i++)
        if (strcmp(t->want[i], name) == 0)
            return true;
    return false;
}

/* Whether ST's frames named in EXPECT are EXPECT, in order; WHY says where not. */
static bool
check_walk(struct target *t, struct sw_walker *w, const struct sw_stack *st, char *why,
           size_t whylen)
{
    size_t k = 0;
    for (size_t i = 0; i < st->n; i++) {
        const struct sw_frame *f = &st->frames[i];
        struct sw_symbol sym;
        const char *name = f->vname;
        if (name == NULL && sw_frame_symbol(w, f, &sym) == 0)
            name = sym.name;
        if (name == NULL || !wanted(t, name))
            continue;
        if (k == t->nwant || strcmp(name, t->want[k]) != 0) {
            snprintf(why, whylen, "frame %zu is %s, expected %s", i, name,
                     k < t->nwant ? t->want[k] : "no more");
            return false;
        }
        k++;
    }
    if (k != t->nwant) {
        snprintf(why, whylen, "%zu of %zu expected frames (walk of %zu frames ended: %s)", k,
                 t->nwant, st->n, sw_walk_end_name(st->end));
        return false;
    }
    return true;
}

/* Connect to T, resume it to its stop the first time, walk its stopped
 * thread with a new walker over the shared cache.  0 or -1 (WHY says). */
static int
walk_once(struct target *t, bool resume, char *why, size_t whylen)
{
    struct rsp_session_config scfg;
    struct rsp_session *s = NULL;
    struct sw_proc *p = NULL;
    struct sw_walker *w = NULL;
    struct sw_errbuf err = { 0 };
    struct sw_stack st;
    int rc = -1;

    rsp_session_config_init(&scfg);
    if (rsp_session_open(t->spec, &scfg, &s, &err) < 0) {
        snprintf(why, whylen, "connecting: %s", err.msg);
        return -1;
    }
    struct sw_rsp_config pcfg = { .exe = t->exe };
    if (sw_proc_rsp_new(s, &pcfg, &p, &err) < 0) {
        snprintf(why, whylen, "process: %s", err.msg);
        return -1;
    }
    if (resume && (p->debug->resume(p, SW_TID_DEFAULT, 0) < 0 ||
                   p->debug->handle_debug_event(p, true) < 0)) {
        snprintf(why, whylen, "resuming: %s", sw_proc_errmsg(p));
        sw_proc_free(p);
        return -1;
    }
    struct sw_walker_config wcfg = { .sysroot = "/", .exe = t->exe, .modcache = g_cache };
    if (sw_walker_new(p, &wcfg, &w, &err) < 0) {
        snprintf(why, whylen, "walker: %s", err.msg);
        return -1;
    }
    sw_stack_init(&st);
    for (int i = 0; i < WALKS; i++) {
        rc = -1;
        if (sw_walk_stack(w, SW_TID_DEFAULT, &st) < 0)
            snprintf(why, whylen, "walking: %s", sw_walker_errmsg(w));
        else if (check_walk(t, w, &st, why, whylen))
            rc = 0;
        if (rc != 0)
            break;
    }
    sw_stack_fini(&st);
    sw_walker_free(w);
    return rc;
}

static void *
run_target(void *arg)
{
    struct target *t = arg;
    char why[512];

    pthread_barrier_wait(&g_start);
    for (unsigned r = 0; r < g_rounds; r++) {
        if (walk_once(t, r == 0, why, sizeof why) == 0) {
            t->passed++;
            continue;
        }
        t->failed++;
        printf("FAIL %s (%s) round %u: %s\n", t->exe, t->spec, r, why);
        if (r == 0)
            break; /* not at its stop: later rounds would walk something else */
    }
    return NULL;
}

int
main(int argc, char **argv)
{
    static struct target targets[MAX_TARGETS];
    pthread_t threads[MAX_TARGETS];
    size_t n = 0;
    unsigned passed = 0, failed = 0;

    if (argc < 5 || (argc - 2) % 3 != 0 || (size_t)(argc - 2) / 3 > MAX_TARGETS) {
        fprintf(stderr, "usage: walk8 ROUNDS HOST:PORT EXE EXPECT [HOST:PORT EXE EXPECT]...\n");
        return 2;
    }
    g_rounds = (unsigned)strtoul(argv[1], NULL, 10);
    for (int i = 2; i + 2 < argc; i += 3, n++) {
        targets[n] = (struct target){ .spec = argv[i], .exe = argv[i + 1], .expect = argv[i + 2] };
        if (parse_expect(&targets[n]) < 0) {
            fprintf(stderr, "walk8: %s: bad expectation '%s'\n", argv[i + 1], argv[i + 2]);
            return 2;
        }
    }
    if (sw_modcache_new(NULL, NULL, &g_cache) < 0) {
        fprintf(stderr, "walk8: out of memory\n");
        return 2;
    }
    pthread_barrier_init(&g_start, NULL, (unsigned)n);
    for (size_t i = 0; i < n; i++)
        if (pthread_create(&threads[i], NULL, run_target, &targets[i]) != 0) {
            fprintf(stderr, "walk8: cannot start thread %zu\n", i);
            return 2;
        }
    for (size_t i = 0; i < n; i++) {
        pthread_join(threads[i], NULL);
        passed += targets[i].passed;
        failed += targets[i].failed;
        free(targets[i].words);
    }
    pthread_barrier_destroy(&g_start);
    sw_modcache_free(g_cache);
    printf("walk8: %u passed, %u failed\n", passed, failed);
    return failed == 0 && passed == n * g_rounds ? 0 : 1;
}
