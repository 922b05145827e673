/* tests/warm/warm_drive.c -- warm walks of a running target, each checked against a cold one.
 *
 * One walker over one link, kept across stops as the stack server keeps it: resume, let
 * the target run, pause (the interrupt), walk every thread as the CLI does (sw_threads,
 * sw_walker_prefetch, sw_walk_stack), and count the round trips from the interrupt on.
 * Then, on the same stop, a cold walk: the session's stop caches forgotten, a new process
 * object and walker (no plan, no library list), every thread again; the two must give the
 * same frames (pc and sp) and ends.  Built by the Makefile (build/release/warm_drive), run
 * by tests/integration/run-warm.sh and scripts/bench.  Not a benchmark of the walk itself.
 *
 *   warm_drive TARGET EXE SYSROOT CYCLES [MAX_RT]
 * MAX_RT: fail when a warm cycle after the second, with the threads and libraries of the
 * cycle before, costs more round trips than this.
 * The last line is JSON: cycles, threads, round trips per cycle (mean, max), time per cycle.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rspwalk/rspwalk.h>

#define MAX_THREADS 64
/* How long the target runs between two stops: long enough that every thread moves. */
#define RUN_NS (3 * 1000 * 1000)

struct walk {
    size_t n;
    sw_tid tids[MAX_THREADS];
    struct sw_stack st[MAX_THREADS];
    int rc[MAX_THREADS];
};

static uint64_t
now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void
walk_free(struct walk *wk)
{
    for (size_t i = 0; i < wk->n; i++)
        sw_stack_fini(&wk->st[i]);
    wk->n = 0;
}

/* Every thread, as cli/output.c's print_threads walks them. */
static int
walk_all(struct sw_walker *w, struct walk *wk)
{
    struct sw_proc *p = sw_walker_proc(w);
    size_t n = 0;
    bool ahead = false;
    if (sw_threads(w, wk->tids, MAX_THREADS, &n) < 0) {
        fprintf(stderr, "warm_drive: threads: %s\n", sw_walker_errmsg(w));
        return -1;
    }
    wk->n = n < MAX_THREADS ? n : MAX_THREADS;
    for (size_t i = 0; i < wk->n; i++) {
        if (!ahead && wk->tids[i] != p->default_tid && wk->n - i >= 2) {
            ahead = true;
            if (sw_walker_prefetch(w, wk->tids + i, wk->n - i) < 0)
                fprintf(stderr, "warm_drive: prefetch: %s\n", sw_walker_errmsg(w));
        }
        sw_stack_init(&wk->st[i]);
        wk->rc[i] = sw_walk_stack(w, wk->tids[i], &wk->st[i]);
        if (wk->rc[i] < 0)
            fprintf(stderr, "warm_drive: thread %" PRIu64 ": %s\n", wk->tids[i],
                    sw_walker_errmsg(w));
    }
    return 0;
}

/* The same threads with the same frames (pc, sp) and ends: 0, else the mismatches printed. */
static int
compare(const struct walk *warm, const struct walk *cold, unsigned cycle)
{
    int bad = 0;
    if (warm->n != cold->n) {
        printf("cycle %u: %zu threads warm, %zu cold\n", cycle, warm->n, cold->n);
        bad = 1;
    }
    for (size_t i = 0; i < warm->n; i++) {
        size_t j = 0;
        while (j < cold->n && cold->tids[j] != warm->tids[i])
            j++;
        if (j == cold->n) {
            printf("cycle %u: thread %" PRIu64 " not in the cold walk\n", cycle, warm->tids[i]);
            bad = 1;
            continue;
        }
        const struct sw_stack *a = &warm->st[i], *b = &cold->st[j];
        bool same = warm->rc[i] == cold->rc[j] && a->n == b->n && a->end == b->end;
        for (size_t k = 0; same && k < a->n; k++)
            same = a->frames[k].ra == b->frames[k].ra && a->frames[k].sp == b->frames[k].sp;
        if (!same) {
            printf("cycle %u: thread %" PRIu64 ": warm %zu frames (%s), cold %zu (%s)\n", cycle,
                   warm->tids[i], a->n, sw_walk_end_name(a->end), b->n, sw_walk_end_name(b->end));
            for (size_t k = 0; k < a->n || k < b->n; k++)
                printf("  #%zu warm %#" PRIx64 "/%#" PRIx64 "  cold %#" PRIx64 "/%#" PRIx64 "\n", k,
                       k < a->n ? a->frames[k].ra : 0, k < a->n ? a->frames[k].sp : 0,
                       k < b->n ? b->frames[k].ra : 0, k < b->n ? b->frames[k].sp : 0);
            bad = 1;
        }
    }
    return bad;
}

/* The same modules at the same places: 0, else the difference printed. */
static int
compare_libs(struct sw_walker *warm, struct sw_walker *cold, unsigned cycle)
{
    struct sw_libstate *a = sw_walker_libstate(warm), *b = sw_walker_libstate(cold);
    size_t n = sw_libstate_count(a);
    int bad = n != sw_libstate_count(b);
    for (size_t i = 0; i < n && !bad; i++) {
        const struct sw_lib *x = sw_libstate_lib(a, i), *y = sw_libstate_lib(b, i);
        bad = strcmp(x->name, y->name) != 0 || x->bias != y->bias;
    }
    if (bad) {
        printf("cycle %u: library lists differ (warm %zu, cold %zu modules)\n", cycle, n,
               sw_libstate_count(b));
        for (size_t i = 0; i < n || i < sw_libstate_count(b); i++)
            printf("  %-40s %-40s\n", i < n ? sw_libstate_lib(a, i)->name : "",
                   i < sw_libstate_count(b) ? sw_libstate_lib(b, i)->name : "");
    }
    return bad;
}

/* A cold walk of the stop the warm walker WARM is at, nothing of it kept; its library
 * list compared with WARM's. */
static int
cold_walk(struct rsp_session *s, struct sw_walker *warm, const char *exe, const char *sysroot,
          unsigned cycle, struct walk *wk)
{
    int64_t pid = sw_walker_proc(warm)->pid;
    struct sw_proc *p;
    struct sw_walker *w;
    struct sw_errbuf err;
    struct sw_rsp_config pcfg;
    sw_rsp_config_init(&pcfg);
    pcfg.exe = exe;
    rsp_session_forget_stop(s);
    if (sw_proc_rsp_new_shared(s, pid, &pcfg, &p, &err) < 0) {
        fprintf(stderr, "warm_drive: cold process: %s\n", err.msg);
        return -1;
    }
    struct sw_walker_config wcfg;
    sw_walker_config_init(&wcfg);
    wcfg.exe = exe;
    wcfg.sysroot = sysroot;
    if (sw_walker_new(p, &wcfg, &w, &err) < 0) {
        fprintf(stderr, "warm_drive: cold walker: %s\n", err.msg);
        return -1;
    }
    int rc = walk_all(w, wk);
    if (rc == 0 && compare_libs(warm, w, cycle) != 0)
        rc = 1;
    sw_walker_free(w);
    return rc;
}

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: warm_drive TARGET EXE SYSROOT CYCLES [MAX_RT]\n");
        return 2;
    }
    const char *exe = argv[2], *sysroot = argv[3];
    unsigned cycles = (unsigned)strtoul(argv[4], NULL, 10);
    long max_rt = argc > 5 ? strtol(argv[5], NULL, 10) : -1;
    struct rsp_session_config scfg;
    struct rsp_session *s;
    struct sw_proc *p;
    struct sw_walker *w;
    struct sw_errbuf err;

    rsp_session_config_init(&scfg);
    if (rsp_session_open(argv[1], &scfg, &s, &err) < 0) {
        printf("FAIL: %s\n", err.msg);
        return 1;
    }
    struct sw_rsp_config pcfg;
    sw_rsp_config_init(&pcfg);
    pcfg.exe = exe;
    if (sw_proc_rsp_new(s, &pcfg, &p, &err) < 0) {
        printf("FAIL: %s\n", err.msg);
        return 1;
    }
    struct sw_walker_config wcfg;
    sw_walker_config_init(&wcfg);
    wcfg.exe = exe;
    wcfg.sysroot = sysroot;
    if (sw_walker_new(p, &wcfg, &w, &err) < 0) {
        printf("FAIL: %s\n", err.msg);
        return 1;
    }
    uint64_t *rts = calloc(cycles ? cycles : 1, sizeof *rts);
    uint64_t *uss = calloc(cycles ? cycles : 1, sizeof *uss);
    size_t threads_max = 0, nwarm = 0;
    int bad = 0;
    /* The thread list and the library count of the last stop: a stop is warm
     * when both are as they were at the stop before (a thread or a library
     * new since then costs its own fetch, by design), from the third on. */
    sw_tid prev_tids[MAX_THREADS];
    size_t prev_n = SIZE_MAX, prev_libs = SIZE_MAX, nsame = 0;
    for (unsigned c = 0; c < cycles && rts && uss; c++) {
        struct walk warm = { 0 }, cold = { 0 };
        struct timespec run = { 0, RUN_NS };
        if (p->debug->resume(p, SW_TID_DEFAULT, 0) < 0) {
            printf("FAIL: cycle %u: resume: %s\n", c, sw_proc_errmsg(p));
            bad = 1;
            break;
        }
        nanosleep(&run, NULL);
        uint64_t rt0 = rsp_session_stats(s)->round_trips, t0 = now_us();
        if (p->debug->pause(p, SW_TID_DEFAULT) < 0) {
            printf("FAIL: cycle %u: pause: %s\n", c, sw_proc_errmsg(p));
            bad = 1;
            break;
        }
        if (walk_all(w, &warm) < 0) {
            bad = 1;
            break;
        }
        uint64_t rt = rsp_session_stats(s)->round_trips - rt0, us = now_us() - t0;
        if (cold_walk(s, w, exe, sysroot, c, &cold) != 0 || compare(&warm, &cold, c) != 0)
            bad = 1;
        printf("cycle %u: %zu threads, %" PRIu64 " round trips (interrupt included), %" PRIu64
               " us\n",
               c, warm.n, rt, us);
        if (warm.n > threads_max)
            threads_max = warm.n;
        /* The first two stops fill the plan: warm from the third on.  MAX_RT
         * holds for a stop whose threads and libraries are those of the stop
         * before (a new one costs its own fetch, by design: the program may
         * still be starting on a loaded machine). */
        size_t libs = sw_libstate_count(sw_walker_libstate(w));
        bool same = warm.n == prev_n && libs == prev_libs &&
                    memcmp(warm.tids, prev_tids, warm.n * sizeof *warm.tids) == 0;
        prev_n = warm.n;
        prev_libs = libs;
        memcpy(prev_tids, warm.tids, warm.n * sizeof *warm.tids);
        if (c >= 2) {
            rts[nwarm] = rt;
            uss[nwarm++] = us;
            nsame += same;
            if (same && max_rt >= 0 && rt > (uint64_t)max_rt) {
                printf("FAIL: cycle %u: %" PRIu64 " round trips, more than %ld\n", c, rt, max_rt);
                bad = 1;
            }
        }
        walk_free(&warm);
        walk_free(&cold);
    }
    if (max_rt >= 0 && nsame < nwarm / 2) {
        printf("FAIL: only %zu of %zu stops had the threads and libraries of the stop before\n",
               nsame, nwarm);
        bad = 1;
    }
    uint64_t sum = 0, max = 0;
    for (size_t i = 0; i < nwarm; i++) {
        sum += rts[i];
        max = rts[i] > max ? rts[i] : max;
    }
    if (nwarm > 0)
        qsort(uss, nwarm, sizeof *uss, cmp_u64);
    printf("{\"cycles\": %zu, \"threads\": %zu, \"rt_mean\": %.2f, \"rt_max\": %" PRIu64
           ", \"us_median\": %" PRIu64 ", \"ok\": %s}\n",
           nwarm, threads_max, nwarm ? (double)sum / (double)nwarm : 0.0, max,
           nwarm ? uss[nwarm / 2] : 0, bad ? "false" : "true");
    free(rts);
    free(uss);
    p->debug->detach(p, true); /* stopped: the test kills it */
    sw_walker_free(w);
    return bad;
}
