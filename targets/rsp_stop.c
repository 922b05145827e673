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
    rp->ngcache = 0;
    tgt_rsp_mem_drop(rp);
}

struct rsp_thread_id
tgt_rsp_thread_id(struct tgt_rsp_proc *rp, sw_tid tid)
{
    struct rsp_thread_id id = { .pid = rp->base.pid, .tid = (int64_t)tid };
    for (size_t i = 0; i < rp->nthreads; i++)
        if ((sw_tid)rp->threads[i].tid == tid)
            return rp->threads[i];
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
