/* targets/proc.c -- the ProcessState base: validation, defaults, word reads.
 *
 * Backends live in targets/; this file only applies the ops table's contract.
 */
#include "rspwalk/proc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/util.h"

int
sw_proc_init(struct sw_proc *p, const struct sw_proc_ops *ops, const struct sw_procdebug_ops *debug,
             const struct arch_desc *arch)
{
    if (p == NULL)
        return SW_EINVAL;
    p->ops = ops;
    p->debug = debug;
    p->arch = arch;
    p->pid = 0;
    p->default_tid = SW_TID_DEFAULT;
    p->exe_path = NULL;
    sw_err_clear(&p->err);
    if (ops == NULL || ops->read_mem == NULL || ops->read_reg == NULL || arch == NULL)
        return sw_fail(&p->err, SW_EINVAL, "process backend lacks read_mem, read_reg or arch");
    return 0;
}

void
sw_proc_free(struct sw_proc *p)
{
    if (p == NULL)
        return;
    if (p->ops && p->ops->destroy)
        p->ops->destroy(p);
    sw_free(p->exe_path);
    free(p);
}

int
sw_proc_read_word(struct sw_proc *p, sw_addr addr, sw_word *val)
{
    uint8_t b[8];
    unsigned w = p->arch->word_size;
    int rc = p->ops->read_mem(p, addr, b, w);
    if (rc < 0)
        return rc;
    *val = arch_load(p->arch, b, w);
    return 0;
}

int
sw_proc_threads(struct sw_proc *p, sw_tid *tids, size_t max, size_t *n)
{
    if (p->ops->threads)
        return p->ops->threads(p, tids, max, n);
    if (max > 0)
        tids[0] = p->default_tid;
    *n = 1;
    return 0;
}

int
sw_proc_read_mem_batch(struct sw_proc *p, struct sw_mem_req *reqs, size_t n)
{
    if (p->ops->read_mem_batch)
        return p->ops->read_mem_batch(p, reqs, n);
    for (size_t i = 0; i < n; i++)
        reqs[i].rc = SW_ECONN; /* not read: a link error below stops the loop */
    for (size_t i = 0; i < n; i++) {
        /* A range without a buffer only warms a cache, which this backend has not. */
        bool read = reqs[i].len > 0 && reqs[i].buf != NULL;
        reqs[i].rc = read ? p->ops->read_mem(p, reqs[i].addr, reqs[i].buf, reqs[i].len) : 0;
        int rc = reqs[i].rc;
        if (rc == SW_ETIMEDOUT || rc == SW_ECONN || rc == SW_EEXITED || rc == SW_ENOMEM)
            return rc;
    }
    return 0;
}

int
sw_proc_read_mem_batch_while(struct sw_proc *p, struct sw_mem_req *reqs, size_t n,
                             bool (*while_fn)(void *), void *arg)
{
    if (p->ops->read_mem_batch_while)
        return p->ops->read_mem_batch_while(p, reqs, n, while_fn, arg);
    return sw_proc_read_mem_batch(p, reqs, n); /* no round trip to fill */
}

int
sw_proc_prefetch_threads(struct sw_proc *p, const sw_tid *tids, size_t n)
{
    if (p->ops->prefetch_threads)
        return p->ops->prefetch_threads(p, tids, n);
    return 0; /* a hint: the walks read what they need */
}

int
sw_proc_stop_reads(struct sw_proc *p, const struct sw_mem_req *ranges, size_t n)
{
    if (p->ops->stop_reads)
        return p->ops->stop_reads(p, ranges, n);
    return 0; /* a hint: the reads cost what they cost */
}

int
sw_proc_thread_info(struct sw_proc *p, sw_tid tid, struct sw_thread_info *out)
{
    if (p->ops->thread_info)
        return p->ops->thread_info(p, tid, out);
    return SW_EUNSUP; /* threads of a process, not tasks */
}

int
sw_proc_thread_label(struct sw_proc *p, sw_tid tid, char *buf, size_t len)
{
    if (p->ops->thread_label)
        return p->ops->thread_label(p, tid, buf, len);
    snprintf(buf, len, "%" PRIu64, tid);
    return 0;
}

const char *
sw_proc_errmsg(const struct sw_proc *p)
{
    return p->err.msg;
}

void
sw_modinfo_free(struct sw_modinfo *mods, size_t n)
{
    if (mods == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        free(mods[i].name);
    free(mods);
}
