/* targets/rsp_stop.c -- the stop an RSP process is at: taken in, its thread ids, its caches.
 *
 * Every stop or exit taken in drops the per-stop caches (registers here,
 * memory windows in targets/rsp_mem.c) and moves stop_gen.  Shared by the
 * ProcessState (targets/rsp_proc.c) and ProcDebug (targets/rsp_debug.c),
 * which call down to it; it calls neither.
 */
#include "targets/rsp_proc_internal.h"

#include <inttypes.h>
#include <stdlib.h>

#include "rspwalk/rsp.h"
#include "util/util.h"

void
tgt_rsp_drop_caches(struct tgt_rsp_proc *rp)
{
    for (size_t i = 0; i < rp->ngcache; i++)
        sw_free(rp->gcache[i].data);
    sw_free(rp->gcache);
    rp->gcache = NULL;
    rp->ngcache = rp->gcache_cap = 0;
    sw_idmap_fini(&rp->gcache_idx);
    tgt_rsp_mem_drop(rp);
}

void
tgt_rsp_threads_indexed(struct tgt_rsp_proc *rp)
{
    sw_idmap_clear(&rp->threads_idx);
    for (size_t i = 0; i < rp->nthreads; i++)
        if (sw_idmap_put(&rp->threads_idx, 0, (int64_t)(sw_tid)rp->threads[i].tid, i) != 0) {
            sw_idmap_fini(&rp->threads_idx);
            return;
        }
}

bool
tgt_rsp_thread_row(struct tgt_rsp_proc *rp, sw_tid tid, size_t *row)
{
    if (rp->nthreads > 0 && rp->threads_idx.n > 0)
        return sw_idmap_get(&rp->threads_idx, 0, (int64_t)tid, row) && *row < rp->nthreads &&
               (sw_tid)rp->threads[*row].tid == tid;
    for (size_t i = 0; i < rp->nthreads; i++)
        if ((sw_tid)rp->threads[i].tid == tid) {
            *row = i;
            return true;
        }
    return false;
}

static bool
gcache_row_is(const struct tgt_rsp_proc *rp, size_t row, sw_tid tid)
{
    return row < rp->ngcache && rp->gcache[row].tid == tid;
}

/* A row that moved (sw_proc_rsp_forget_regs compacts) rebuilds the index. */
size_t
tgt_rsp_gcache_row(struct tgt_rsp_proc *rp, sw_tid tid)
{
    size_t row;
    if (!sw_idmap_get(&rp->gcache_idx, 0, (int64_t)tid, &row))
        return rp->ngcache;
    if (gcache_row_is(rp, row, tid))
        return row;
    sw_idmap_clear(&rp->gcache_idx);
    for (size_t i = 0; i < rp->ngcache; i++)
        if (sw_idmap_put(&rp->gcache_idx, 0, (int64_t)rp->gcache[i].tid, i) != 0) {
            sw_idmap_fini(&rp->gcache_idx);
            for (size_t k = 0; k < rp->ngcache; k++)
                if (gcache_row_is(rp, k, tid))
                    return k;
            return rp->ngcache;
        }
    return sw_idmap_get(&rp->gcache_idx, 0, (int64_t)tid, &row) ? row : rp->ngcache;
}

struct rsp_thread_id
tgt_rsp_thread_id(struct tgt_rsp_proc *rp, sw_tid tid)
{
    struct rsp_thread_id id = { .pid = rp->base.pid, .tid = (int64_t)tid };
    size_t row;
    if (tgt_rsp_thread_row(rp, tid, &row))
        return rp->threads[row];
    if (rp->stop.has_thread && (sw_tid)rp->stop.thread.tid == tid)
        return rp->stop.thread;
    return id;
}

/* Take in stop reply ST: who stopped, what was expedited; caches dropped.
 * False for another process's stop on the same link (nothing changes). */
bool
tgt_rsp_take_stop(struct tgt_rsp_proc *rp, const struct rsp_stop *st)
{
    tgt_rsp_drop_caches(rp);
    if (rp->only_pid != 0 && st->has_thread && st->thread.pid != rp->only_pid)
        return false; /* another process's stop on the same link */
    rp->stop = *st;
    rp->running = false;
    rp->base.stop_gen++;
    if (st->kind == RSP_STOP_EXITED || st->kind == RSP_STOP_KILLED) {
        rp->terminated = true;
        return true;
    }
    if (st->has_thread) {
        rp->base.default_tid = (sw_tid)st->thread.tid;
        if (st->thread.pid > 0)
            rp->base.pid = st->thread.pid;
    }
    free(rp->threads); /* threads may have come and gone */
    rp->threads = NULL;
    rp->nthreads = 0;
    sw_idmap_clear(&rp->threads_idx);
    return true;
}

int
tgt_rsp_check_stopped(struct tgt_rsp_proc *rp, sw_tid tid)
{
    if (!rsp_non_stop(rp->s) || rsp_thread_stopped(rp->s, tgt_rsp_thread_id(rp, tid)))
        return 0;
    return sw_fail(&rp->base.err, SW_EINVAL,
                   "thread %" PRIu64 " is running (non-stop mode): pause it before reading its "
                   "registers",
                   (uint64_t)tid);
}
