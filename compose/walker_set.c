/* compose/walker_set.c -- WalkerSet: the walkers of several processes, on one link or many.
 *
 * sw_walker_set_new attaches every process through the extended-remote stub
 * first, then builds one walker per process over a process that borrows the
 * shared session (targets/rsp_proc.c, sw_proc_rsp_new_shared).
 * sw_walker_set_add takes in walkers the caller made, each over its own
 * link (several QEMU user instances, different architectures).  Not a
 * scheduler: walks run one after the other.
 */
#include "rspwalk/walker_set.h"

#include <inttypes.h>
#include <string.h>

#include "rspwalk/rsp.h"
#include "rspwalk/target.h"
#include "rspwalk/walker.h"
#include "util/util.h"

struct sw_walker_set {
    struct rsp_session *s;      /* owned, NULL for a set made by sw_walker_set_create */
    struct sw_walker **walkers; /* owned: n walkers */
    int64_t *pids;              /* owned: n pids */
    size_t n, cap;
    size_t nshared;   /* walkers[0..nshared) borrow S; the others own their link */
    size_t nattached; /* pids[0..nattached) are attached through S */
    bool *detached;   /* owned: n flags, an added walker's process let go */
    struct sw_errbuf err;
};

static void
set_release(struct sw_walker_set *set)
{
    for (size_t i = 0; i < set->n; i++)
        sw_walker_free(set->walkers[i]); /* before the session they borrow */
    sw_free(set->walkers);
    sw_free(set->pids);
    sw_free(set->detached);
    rsp_session_close(set->s);
    sw_free(set);
}

int
sw_walker_set_new(struct rsp_session *s, const int64_t *pids, size_t n,
                  const struct sw_walker_config *cfg, struct sw_walker_set **out,
                  struct sw_errbuf *err)
{
    struct sw_walker_config none = { 0 };
    int rc;

    *out = NULL;
    if (s == NULL || pids == NULL || n == 0) {
        rsp_session_close(s);
        return sw_fail(err, SW_EINVAL, "creating a walker set: no session or no pids");
    }
    if (cfg == NULL)
        cfg = &none;
    struct sw_walker_set *set = sw_calloc(1, sizeof *set);
    if (set == NULL) {
        rsp_session_close(s);
        return sw_fail(err, SW_ENOMEM, "creating a walker set: out of memory");
    }
    set->s = s;
    set->walkers = sw_calloc(n, sizeof *set->walkers);
    set->pids = sw_calloc(n, sizeof *set->pids);
    set->detached = sw_calloc(n, sizeof *set->detached);
    if (set->walkers == NULL || set->pids == NULL || set->detached == NULL) {
        rc = sw_fail(err, SW_ENOMEM, "creating a walker set: out of memory");
        goto fail;
    }
    set->n = set->cap = set->nshared = n;
    memcpy(set->pids, pids, n * sizeof *pids);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < i; k++)
            if (pids[i] == pids[k]) {
                rc = sw_fail(err, SW_EINVAL, "process %" PRId64 " named twice", pids[i]);
                goto fail;
            }
    if ((rc = rsp_extended_mode(s)) < 0) {
        sw_fail(err, rc, "%s", rsp_session_errmsg(s));
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        if ((rc = rsp_attach(s, pids[i], NULL)) < 0) {
            sw_fail(err, rc, "%s", rsp_session_errmsg(s));
            goto fail;
        }
        set->nattached = i + 1;
    }
    struct sw_rsp_config pcfg;
    sw_rsp_config_init(&pcfg);
    pcfg.exe = cfg->exe;
    for (size_t i = 0; i < n; i++) {
        struct sw_proc *p;
        if ((rc = sw_proc_rsp_new_shared(s, pids[i], &pcfg, &p, err)) < 0)
            goto fail;
        if ((rc = sw_walker_new(p, cfg, &set->walkers[i], err)) < 0) {
            sw_err_prefix(err, "process %" PRId64 ": ", pids[i]);
            goto fail;
        }
    }
    *out = set;
    return 0;
fail:
    /* Leave the processes as found: running. */
    for (size_t i = 0; i < set->nattached; i++)
        (void)rsp_detach_pid(s, set->pids[i]);
    set_release(set);
    return rc;
}

void
sw_walker_set_free(struct sw_walker_set *set)
{
    if (set != NULL)
        set_release(set);
}

int
sw_walker_set_create(struct sw_walker_set **out, struct sw_errbuf *err)
{
    *out = sw_calloc(1, sizeof **out);
    return *out != NULL ? 0 : sw_fail(err, SW_ENOMEM, "creating a walker set: out of memory");
}

int
sw_walker_set_add(struct sw_walker_set *set, struct sw_walker *w)
{
    if (w == NULL)
        return sw_fail(&set->err, SW_EINVAL, "adding to a walker set: no walker");
    for (size_t i = 0; i < set->n; i++)
        if (set->walkers[i] == w)
            return sw_fail(&set->err, SW_EINVAL,
                           "adding to a walker set: the walker is already in it");
    if (set->n == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 4;
        struct sw_walker **ws = sw_realloc(set->walkers, cap * sizeof *ws);
        if (ws != NULL)
            set->walkers = ws;
        int64_t *ps = sw_realloc(set->pids, cap * sizeof *ps);
        if (ps != NULL)
            set->pids = ps;
        bool *ds = sw_realloc(set->detached, cap * sizeof *ds);
        if (ds != NULL)
            set->detached = ds;
        if (ws == NULL || ps == NULL || ds == NULL)
            return sw_fail(&set->err, SW_ENOMEM, "adding to a walker set: out of memory");
        set->cap = cap;
    }
    set->walkers[set->n] = w;
    set->pids[set->n] = sw_walker_proc(w)->pid;
    set->detached[set->n] = false;
    set->n++;
    return 0;
}

int
sw_walker_set_detach(struct sw_walker_set *set)
{
    int first = 0;
    for (size_t i = 0; i < set->nattached; i++) {
        int rc = rsp_detach_pid(set->s, set->pids[i]);
        if (rc < 0 && first == 0)
            first = sw_fail(&set->err, rc, "%s", rsp_session_errmsg(set->s));
    }
    set->nattached = 0;
    /* Walkers over links of their own: ProcDebug's detach, leaving it running. */
    for (size_t i = set->nshared; i < set->n; i++) {
        struct sw_proc *p = sw_walker_proc(set->walkers[i]);
        if (set->detached[i] || p->debug == NULL || p->debug->is_terminated(p))
            continue;
        int rc = p->debug->detach(p, false);
        if (rc < 0 && first == 0)
            first =
                sw_fail(&set->err, rc, "process %" PRId64 ": %s", set->pids[i], sw_proc_errmsg(p));
        set->detached[i] = rc == 0;
    }
    return first;
}

int
sw_walker_set_walk_all(struct sw_walker_set *set, sw_walker_set_walk_fn fn, void *arg)
{
    struct sw_stack st;
    int first = 0;
    sw_stack_init(&st);
    for (size_t i = 0; i < set->n; i++) {
        struct sw_walker *w = set->walkers[i];
        sw_tid *tids = NULL;
        size_t n = 0, cap = 16;
        int rc;
        for (;;) { /* the list may grow between the two calls */
            sw_tid *t = sw_realloc(tids, cap * sizeof *t);
            if (t == NULL) {
                rc = sw_fail(&set->err, SW_ENOMEM, "walking the set: out of memory");
                break;
            }
            tids = t;
            if ((rc = sw_threads(w, tids, cap, &n)) < 0 || n <= cap)
                break;
            cap = n;
        }
        if (rc < 0) {
            if (rc != SW_ENOMEM)
                sw_fail(&set->err, rc, "process %" PRId64 ": listing threads: %s", set->pids[i],
                        sw_walker_errmsg(w));
            sw_free(tids);
            sw_stack_fini(&st);
            return rc;
        }
        bool ahead = false;
        for (size_t k = 0; k < n; k++) {
            /* The threads after the stopped one are fetched ahead together
             * (sw_walker_prefetch: two round trips for all under gdbserver);
             * one thread alone would cost its walk's two anyway. */
            if (!ahead && tids[k] != sw_walker_proc(w)->default_tid && n - k >= 2) {
                ahead = true;
                rc = sw_walker_prefetch(w, tids + k, n - k);
                if (rc < 0 && first == 0)
                    first = sw_fail(&set->err, rc, "process %" PRId64 ": %s", set->pids[i],
                                    sw_walker_errmsg(w));
            }
            rc = sw_walk_stack(w, tids[k], &st);
            if (rc < 0 && first == 0)
                first = sw_fail(&set->err, rc, "process %" PRId64 " thread %" PRIu64 ": %s",
                                set->pids[i], tids[k], sw_walker_errmsg(w));
            if (fn != NULL && fn(arg, i, tids[k], rc, &st)) {
                sw_free(tids);
                sw_stack_fini(&st);
                return first;
            }
        }
        sw_free(tids);
    }
    sw_stack_fini(&st);
    return first;
}

size_t
sw_walker_set_count(const struct sw_walker_set *set)
{
    return set->n;
}

struct sw_walker *
sw_walker_set_walker(struct sw_walker_set *set, size_t i)
{
    return i < set->n ? set->walkers[i] : NULL;
}

int64_t
sw_walker_set_pid(const struct sw_walker_set *set, size_t i)
{
    return i < set->n ? set->pids[i] : 0;
}

struct rsp_session *
sw_walker_set_session(struct sw_walker_set *set)
{
    return set->s;
}

const char *
sw_walker_set_errmsg(const struct sw_walker_set *set)
{
    return set->err.msg;
}
