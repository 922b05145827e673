/* cli/attach.c -- rspwalk --attach PID[,PID...] HOST:PORT: many processes on one link.
 *
 * Attaches every process through the extended-remote stub (a walker set),
 * walks every thread of each, prints them as one document and detaches
 * leaving them running.  No walking logic here, as in cli/main.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "rspwalk/rspwalk.h"
#include "rspwalk/walker_set.h"

/* At most this many processes on one command line. */
#define CLI_MAX_PIDS 1024

static int
parse_pids(const char *list, int64_t *pids, size_t max, size_t *n)
{
    const char *p = list;
    *n = 0;
    while (*p != '\0') {
        char *e;
        errno = 0;
        long long v = strtoll(p, &e, 10);
        if (errno || e == p || v <= 0 || v > INT32_MAX || (*e != ',' && *e != '\0') || *n == max) {
            fprintf(stderr, "rspwalk: --attach: '%s' is not a list of process ids\n", list);
            return -1;
        }
        pids[(*n)++] = v;
        p = *e == ',' ? e + 1 : e;
    }
    if (*n == 0) {
        fprintf(stderr, "rspwalk: --attach: no process id given\n");
        return -1;
    }
    return 0;
}

/* Every thread of W into *TIDS (caller frees), their number in *N. */
static int
list_threads(struct sw_walker *w, sw_tid **tids, size_t *n)
{
    size_t cap = 64;
    *tids = NULL;
    for (;;) {
        sw_tid *t = realloc(*tids, cap * sizeof *t);
        if (t == NULL)
            return -1;
        *tids = t;
        if (sw_threads(w, t, cap, n) < 0)
            return -1;
        if (*n <= cap)
            return 0;
        cap = *n;
    }
}

/* The library states' warnings (local files not used), as a single walk
 * prints them (cli_print_warnings), each text once however many of the N
 * processes share the file. */
static void
print_warnings(struct sw_walker *const *w, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *const *msgs;
        size_t nm = sw_libstate_warnings(sw_walker_libstate(w[i]), &msgs);
        for (size_t k = 0; k < nm; k++) {
            bool seen = false;
            for (size_t j = 0; j < i && !seen; j++) {
                const char *const *earlier;
                size_t ne = sw_libstate_warnings(sw_walker_libstate(w[j]), &earlier);
                for (size_t e = 0; e < ne && !seen; e++)
                    seen = strcmp(earlier[e], msgs[k]) == 0;
            }
            for (size_t e = 0; e < k && !seen; e++)
                seen = strcmp(msgs[e], msgs[k]) == 0;
            if (!seen)
                cli_warn_line("warning: ", msgs[k]);
        }
    }
}

int
cli_run_attach(const struct cli_opts *o)
{
    static int64_t pids[CLI_MAX_PIDS];
    struct rsp_session_config scfg;
    struct rsp_session *s = NULL;
    struct sw_walker_set *set = NULL;
    struct sw_errbuf err = { 0 };
    size_t n;
    int status = 1;

    if (parse_pids(o->attach, pids, CLI_MAX_PIDS, &n) < 0)
        return 2;
    rsp_session_config_init(&scfg);
    scfg.timeout_ms = o->timeout_ms;
    scfg.deadline_ms = o->deadline_ms;
    scfg.no_cache = scfg.no_cache || o->no_cache;
    scfg.max_threads = o->max_threads;
    if (rsp_session_open(o->target, &scfg, &s, &err) < 0) {
        cli_error("%s", err.msg);
        return 1;
    }
    struct sw_walker_config wcfg = { .sysroot = o->sysroot,
                                     .lib_path = o->lib_path,
                                     .exe = o->exe,
                                     .debug_dir = o->debug_dir,
                                     .max_frames = o->max_frames,
                                     .cache_dir = o->cache_dir,
                                     .cache_max_bytes = o->cache_max_bytes,
                                     .no_jit = o->no_jit,
                                     .no_maps = o->no_maps,
                                     .no_default_steppers = o->steppers != NULL };
    if (sw_walker_set_new(s, pids, n, &wcfg, &set, &err) < 0) {
        cli_error("%s: %s", o->target, err.msg);
        return 1;
    }
    struct sw_walker **w = calloc(n, sizeof *w);
    sw_tid **tids = calloc(n, sizeof *tids);
    size_t *ntids = calloc(n, sizeof *ntids);
    if (w == NULL || tids == NULL || ntids == NULL) {
        fprintf(stderr, "rspwalk: out of memory\n");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        w[i] = sw_walker_set_walker(set, i);
        if (cli_add_steppers(o, w[i]) < 0)
            goto out;
        if (list_threads(w[i], &tids[i], &ntids[i]) < 0) {
            cli_error("process %" PRId64 ": listing threads: %s", pids[i], sw_walker_errmsg(w[i]));
            goto out;
        }
        if (cli_threads_cut(o, w[i]) < 0)
            goto out;
    }
    status = cli_print_processes(o, w, pids, tids, ntids, n) < 0 ? 1 : 0;
    print_warnings(w, n);
out:
    /* Running again, as they were found, whatever happened above. */
    if (sw_walker_set_detach(set) < 0) {
        cli_error("%s", sw_walker_set_errmsg(set));
        status = 1;
    }
    for (size_t i = 0; tids != NULL && i < n; i++)
        free(tids[i]);
    free(tids);
    free(ntids);
    free(w);
    sw_walker_set_free(set);
    return status;
}
