/* walker/walker_set.c -- WalkerSet: the walkers of several processes on one link.
 *
 * Attaches every process through the extended-remote stub first, then builds
 * one walker per process over a process that borrows the shared session
 * (targets/rsp_proc.c, sw_proc_rsp_new_shared).  Not a scheduler: walks run
 * one after the other on the one link.
 */
#include "rspwalk/walker_set.h"

#include <inttypes.h>
#include <string.h>

#include "rspwalk/rsp.h"
#include "rspwalk/target.h"
#include "rspwalk/walker.h"
#include "util/util.h"

struct sw_walker_set {
    struct rsp_session *s;      /* owned */
    struct sw_walker **walkers; /* owned: n walkers */
    int64_t *pids;              /* owned: n pids */
    size_t n;
    size_t nattached; /* pids[0..nattached) are attached */
    struct sw_errbuf err;
};

static void
set_release(struct sw_walker_set *set)
{
    for (size_t i = 0; i < set->n; i++)
        sw_walker_free(set->walkers[i]); /* before the session they borrow */
    sw_free(set->walkers);
    sw_free(set->pids);
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
    if (set->walkers == NULL || set->pids == NULL) {
        rc = sw_fail(err, SW_ENOMEM, "creating a walker set: out of memory");
        goto fail;
    }
    set->n = n;
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
    struct sw_rsp_config pcfg = { .exe = cfg->exe };
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
sw_walker_set_detach(struct sw_walker_set *set)
{
    int first = 0;
    for (size_t i = 0; i < set->nattached; i++) {
        int rc = rsp_detach_pid(set->s, set->pids[i]);
        if (rc < 0 && first == 0)
            first = sw_fail(&set->err, rc, "%s", rsp_session_errmsg(set->s));
    }
    set->nattached = 0;
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
