/* mpi/walk.c -- a rank's share of the targets file: parsed, walked concurrently, merged in order.
 *
 * A line is written as the CLI's arguments (docs/usage.md, "rspwalk-mpi").
 * Each target is walked by a thread of its own into a tree of its own; the
 * trees are merged in file order, so that the tasks are numbered as one
 * `rspwalk` over the same targets one after the other would number them.
 * No walking logic here: the library's walker, walker set and renderer.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/rmpi.h"
#include "rspwalk/walker_set.h"

/* At most this many processes on one line, as the CLI's --attach. */
#define RMPI_MAX_PIDS 1024
/* At most this many words on one line: a target and its options. */
#define RMPI_MAX_WORDS 64

/* ---- the targets file ----------------------------------------------------- */

static void
set_err(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
}

void
rmpi_targets_free(struct rmpi_target *v, size_t n)
{
    for (size_t i = 0; v != NULL && i < n; i++) {
        free(v[i].target);
        free(v[i].exe);
        free(v[i].sysroot);
        free(v[i].lib_path);
        free(v[i].debug_dir);
        free(v[i].token_file);
        free(v[i].pids);
    }
    free(v);
}

bool
rmpi_target_is_rspwalkd(const char *target)
{
    return strncmp(target, "http://", 7) == 0;
}

static int
parse_pids(const char *list, struct rmpi_target *t)
{
    const char *p = list;
    t->pids = calloc(RMPI_MAX_PIDS, sizeof *t->pids);
    if (t->pids == NULL)
        return -1;
    while (*p != '\0') {
        char *e;
        errno = 0;
        long long v = strtoll(p, &e, 10);
        if (errno || e == p || v <= 0 || v > INT32_MAX || (*e != ',' && *e != '\0') ||
            t->npids == RMPI_MAX_PIDS)
            return -1;
        t->pids[t->npids++] = v;
        p = *e == ',' ? e + 1 : e;
    }
    return t->npids > 0 ? 0 : -1;
}

static int
parse_size(const char *s, long long max, long long *out)
{
    char *e;
    errno = 0;
    long long v = strtoll(s, &e, 10);
    if (errno || e == s || *e != '\0' || v <= 0 || v > max)
        return -1;
    *out = v;
    return 0;
}

/* One line's words W (NW of them) into T.  Returns 0 or -1 with ERR. */
static int
parse_line(const char *file, unsigned line, char **w, size_t nw, struct rmpi_target *t, char *err,
           size_t errlen)
{
    t->line = line;
    for (size_t i = 0; i < nw; i++) {
        const char *opt = w[i];
        char **dst = NULL;
        if (opt[0] != '-') {
            if (t->target != NULL) {
                set_err(err, errlen, "%s:%u: two targets on one line ('%s' and '%s')", file, line,
                        t->target, opt);
                return -1;
            }
            if (strncmp(opt, "https://", 8) == 0) {
                set_err(err, errlen,
                        "%s:%u: %s: no TLS in rspwalk-mpi: http:// on a trusted "
                        "network, or the stubs themselves",
                        file, line, opt);
                return -1;
            }
            if ((t->target = strdup(opt)) == NULL)
                goto nomem;
            continue;
        }
        if (i + 1 == nw) {
            set_err(err, errlen, "%s:%u: %s: missing its argument", file, line, opt);
            return -1;
        }
        const char *arg = w[++i];
        long long v;
        if (strcmp(opt, "--exe") == 0)
            dst = &t->exe;
        else if (strcmp(opt, "--sysroot") == 0)
            dst = &t->sysroot;
        else if (strcmp(opt, "--lib-path") == 0)
            dst = &t->lib_path;
        else if (strcmp(opt, "--debug-dir") == 0)
            dst = &t->debug_dir;
        else if (strcmp(opt, "--token-file") == 0)
            dst = &t->token_file;
        if (dst != NULL) {
            free(*dst);
            if ((*dst = strdup(arg)) == NULL)
                goto nomem;
        } else if (strcmp(opt, "--attach") == 0) {
            free(t->pids);
            t->pids = NULL;
            t->npids = 0;
            if (parse_pids(arg, t) < 0) {
                set_err(err, errlen, "%s:%u: --attach: '%s' is not a list of process ids", file,
                        line, arg);
                return -1;
            }
        } else if (strcmp(opt, "-n") == 0 || strcmp(opt, "--max-frames") == 0) {
            if (parse_size(arg, 1 << 20, &v) < 0) {
                set_err(err, errlen, "%s:%u: %s: '%s' is not a number of frames", file, line, opt,
                        arg);
                return -1;
            }
            t->max_frames = (size_t)v;
        } else if (strcmp(opt, "--timeout") == 0) {
            if (parse_size(arg, 3600, &v) < 0) {
                set_err(err, errlen, "%s:%u: --timeout: '%s' is not a number of seconds", file,
                        line, arg);
                return -1;
            }
            t->timeout_ms = (int)v * 1000;
        } else {
            set_err(err, errlen,
                    "%s:%u: %s: not an option of a target line (--exe, --sysroot, "
                    "--lib-path, --debug-dir, --attach, --max-frames, --timeout, --token-file)",
                    file, line, opt);
            return -1;
        }
    }
    if (t->target == NULL) {
        set_err(err, errlen, "%s:%u: no target on the line", file, line);
        return -1;
    }
    /* An rspwalkd walks its own targets with its own settings. */
    bool http = rmpi_target_is_rspwalkd(t->target);
    if (http && (t->pids || t->exe || t->sysroot || t->lib_path || t->debug_dir || t->max_frames)) {
        set_err(err, errlen, "%s:%u: %s: an rspwalkd's line takes --timeout and --token-file only",
                file, line, t->target);
        return -1;
    }
    if (!http && t->token_file != NULL) {
        set_err(err, errlen, "%s:%u: --token-file is for an rspwalkd's line (http://)", file, line);
        return -1;
    }
    return 0;
nomem:
    set_err(err, errlen, "%s:%u: out of memory", file, line);
    return -1;
}

int
rmpi_targets_parse(const char *file, const char *text, size_t len, struct rmpi_target **out,
                   size_t *n, char *err, size_t errlen)
{
    struct rmpi_target *v = NULL;
    size_t nv = 0, cap = 0;
    unsigned line = 0;
    const char *p = text, *end = text + len;

    if (memchr(text, '\0', len) != NULL) {
        set_err(err, errlen, "%s: a NUL byte in the file: not a targets file", file);
        return -1;
    }
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (eol == NULL)
            eol = end;
        line++;
        char *copy = strndup(p, (size_t)(eol - p));
        p = eol + 1;
        if (copy == NULL)
            goto nomem;
        char *w[RMPI_MAX_WORDS], *save = NULL;
        size_t nw = 0;
        for (char *tok = strtok_r(copy, " \t\r", &save); tok != NULL;
             tok = strtok_r(NULL, " \t\r", &save)) {
            if (nw == RMPI_MAX_WORDS) {
                set_err(err, errlen, "%s:%u: more than %d words on the line", file, line,
                        RMPI_MAX_WORDS);
                free(copy);
                rmpi_targets_free(v, nv);
                return -1;
            }
            w[nw++] = tok;
        }
        if (nw == 0 || w[0][0] == '#') {
            free(copy);
            continue;
        }
        if (nv == cap) {
            size_t ncap = cap ? 2 * cap : 16;
            struct rmpi_target *g = realloc(v, ncap * sizeof *g);
            if (g == NULL) {
                free(copy);
                goto nomem;
            }
            v = g;
            cap = ncap;
        }
        v[nv] = (struct rmpi_target){ 0 };
        int rc = parse_line(file, line, w, nw, &v[nv], err, errlen);
        nv++;
        free(copy);
        if (rc < 0) {
            rmpi_targets_free(v, nv);
            return -1;
        }
    }
    if (nv == 0) {
        set_err(err, errlen, "%s: no target in the file", file);
        free(v);
        return -1;
    }
    *out = v;
    *n = nv;
    return 0;
nomem:
    set_err(err, errlen, "%s: out of memory", file);
    rmpi_targets_free(v, nv);
    return -1;
}

/* ---- walking ---------------------------------------------------------------- */

struct walk_job {
    const char *file;
    const struct rmpi_target *t;
    struct sw_tree *tree;         /* owned: the target's own tree */
    struct sw_modcache *modcache; /* borrowed; NULL: the walker's own */
    int rc;                       /* 0, -1 (message printed), SW_ENOMEM */
};

struct walk_pool {
    struct walk_job *jobs;
    size_t n, next;
    pthread_mutex_t lock;
};

static void
job_warn(void *arg, const char *line)
{
    const struct walk_job *j = arg;
    fprintf(stderr, "rspwalk-mpi: %s:%u: %s: %s\n", j->file, j->t->line, j->t->target, line);
}

static void
job_fail(struct walk_job *j, const char *what, const char *why)
{
    fprintf(stderr, "rspwalk-mpi: %s:%u: %s: %s%s\n", j->file, j->t->line, j->t->target, what, why);
    if (j->rc == 0)
        j->rc = -1;
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
            return SW_ENOMEM;
        *tids = t;
        int rc = sw_threads(w, t, cap, n);
        if (rc < 0)
            return rc;
        if (*n <= cap)
            return 0;
        cap = *n;
    }
}

/* Walk W's threads into the job's tree.  Returns 0, or the failure (its
 * lines already printed). */
static int
job_walk_one(struct walk_job *j, struct sw_walker *w, const char *what)
{
    sw_tid *tids = NULL;
    size_t n = 0;
    int rc = list_threads(w, &tids, &n);
    if (rc < 0) {
        job_fail(j, what, rc == SW_ENOMEM ? "listing threads: out of memory" : sw_walker_errmsg(w));
        free(tids);
        return rc;
    }
    struct sw_render_opts ro = { .target = j->t->target, .warn = job_warn, .warn_arg = j };
    rc = sw_render_stacks_tree(j->tree, &ro, w, tids, n, NULL);
    free(tids);
    if (rc == SW_ENOMEM)
        j->rc = SW_ENOMEM;
    else if (rc < 0 && j->rc == 0)
        j->rc = -1; /* the thread's line is on stderr (job_warn) */
    return rc;
}

static void
job_run(struct walk_job *j)
{
    const struct rmpi_target *t = j->t;
    struct rsp_session_config scfg;
    struct rsp_session *s = NULL;
    struct sw_errbuf err = { 0 };
    struct sw_walker_config wcfg = { .sysroot = t->sysroot,
                                     .lib_path = t->lib_path,
                                     .exe = t->exe,
                                     .debug_dir = t->debug_dir,
                                     .max_frames = t->max_frames,
                                     .modcache = t->debug_dir == NULL ? j->modcache : NULL };

    if (sw_tree_new(&j->tree) < 0) {
        j->rc = SW_ENOMEM;
        return;
    }
    if (rmpi_target_is_rspwalkd(t->target)) {
        char msg[512];
        if (rmpi_rspwalkd_tree(j->tree, t, msg, sizeof msg) < 0)
            job_fail(j, "", msg);
        return;
    }
    rsp_session_config_init(&scfg);
    if (t->timeout_ms > 0)
        scfg.timeout_ms = t->timeout_ms;
    if (rsp_session_open(t->target, &scfg, &s, &err) < 0) {
        /* The message names the target already. */
        fprintf(stderr, "rspwalk-mpi: %s:%u: %s\n", j->file, t->line, err.msg);
        j->rc = -1;
        return;
    }
    if (t->pids != NULL) {
        struct sw_walker_set *set = NULL;
        if (sw_walker_set_new(s, t->pids, t->npids, &wcfg, &set, &err) < 0) {
            job_fail(j, "", err.msg);
            return;
        }
        for (size_t i = 0; i < t->npids; i++) {
            char what[48];
            snprintf(what, sizeof what, "process %" PRId64 ": ", t->pids[i]);
            if (job_walk_one(j, sw_walker_set_walker(set, i), what) == SW_ENOMEM)
                break;
        }
        /* Running again, as they were found. */
        if (sw_walker_set_detach(set) < 0)
            job_fail(j, "detaching: ", sw_walker_set_errmsg(set));
        sw_walker_set_free(set);
        return;
    }
    struct sw_rsp_config pcfg;
    struct sw_proc *p = NULL;
    struct sw_walker *w = NULL;
    sw_rsp_config_init(&pcfg);
    pcfg.exe = t->exe;
    if (sw_proc_rsp_new(s, &pcfg, &p, &err) < 0) {
        job_fail(j, "", err.msg);
        return;
    }
    if (sw_walker_new(p, &wcfg, &w, &err) < 0) {
        job_fail(j, "", err.msg);
        return;
    }
    job_walk_one(j, w, "");
    sw_walker_free(w); /* closes the link without detaching, as rspwalk does */
}

static void *
pool_worker(void *arg)
{
    struct walk_pool *pool = arg;
    for (;;) {
        pthread_mutex_lock(&pool->lock);
        size_t i = pool->next < pool->n ? pool->next++ : pool->n;
        pthread_mutex_unlock(&pool->lock);
        if (i == pool->n)
            return NULL;
        job_run(&pool->jobs[i]);
    }
}

int
rmpi_walk_targets(struct sw_tree *t, const char *file, const struct rmpi_target *v, size_t n,
                  size_t max_threads)
{
    struct walk_pool pool = { .n = n };
    struct sw_modcache *mc = NULL;
    pthread_t th[256];
    size_t nth = n < max_threads ? n : max_threads;
    int status = 0;

    if (n == 0)
        return 0;
    if (nth > sizeof th / sizeof th[0])
        nth = sizeof th / sizeof th[0];
    if (nth == 0)
        nth = 1;
    pool.jobs = calloc(n, sizeof *pool.jobs);
    if (pool.jobs == NULL || sw_modcache_new(NULL, NULL, &mc) < 0) {
        free(pool.jobs);
        return SW_ENOMEM;
    }
    pthread_mutex_init(&pool.lock, NULL);
    for (size_t i = 0; i < n; i++)
        pool.jobs[i] = (struct walk_job){ .file = file, .t = &v[i], .modcache = mc };
    size_t started = 0;
    for (; started < nth; started++)
        if (pthread_create(&th[started], NULL, pool_worker, &pool) != 0)
            break;
    if (started == 0)
        pool_worker(&pool); /* no thread to be had: walk them here, one by one */
    for (size_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&pool.lock);
    for (size_t i = 0; i < n; i++) {
        struct walk_job *j = &pool.jobs[i];
        if (j->rc == SW_ENOMEM ||
            (j->tree != NULL && status != SW_ENOMEM && sw_tree_merge(t, j->tree) < 0))
            status = SW_ENOMEM;
        else if (j->rc < 0 && status == 0)
            status = -1;
        sw_tree_free(j->tree);
    }
    free(pool.jobs);
    sw_modcache_free(mc);
    return status;
}
