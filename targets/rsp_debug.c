/* targets/rsp_debug.c -- ProcDebug over an RSP session: resume, pause, events, detach.
 *
 * The process object is targets/rsp_proc.c's (rsp_proc_internal.h).  Every
 * stop or exit taken in drops the per-stop caches and moves stop_gen.
 */
#include "rspwalk/target.h"

#include <stdlib.h>
#include <string.h>

#include "rspwalk/rsp.h"
#include "targets/rsp_proc_internal.h"
#include "util/util.h"

static int
proc_fail_from_session(struct tgt_rsp_proc *rp, int code)
{
    return sw_fail(&rp->base.err, code, "%s", rsp_session_errmsg(rp->s));
}

/* Take in stop reply ST: who stopped, what was expedited; caches dropped. */
void
tgt_rsp_take_stop(struct tgt_rsp_proc *rp, const struct rsp_stop *st)
{
    tgt_rsp_drop_caches(rp);
    if (rp->only_pid != 0 && st->has_thread && st->thread.pid != rp->only_pid)
        return; /* another process's stop on the same link */
    rp->stop = *st;
    rp->running = false;
    rp->base.stop_gen++;
    if (st->kind == RSP_STOP_EXITED || st->kind == RSP_STOP_KILLED) {
        rp->terminated = true;
        return;
    }
    if (st->has_thread) {
        rp->base.default_tid = (sw_tid)st->thread.tid;
        if (st->thread.pid > 0)
            rp->base.pid = st->thread.pid;
    }
    free(rp->threads); /* threads may have come and gone */
    rp->threads = NULL;
    rp->nthreads = 0;
}

static int
dbg_resume(struct sw_proc *p, sw_tid tid, int sig)
{
    struct tgt_rsp_proc *rp = to_rp(p);
    struct rsp_thread_id id = tgt_rsp_thread_id(rp, tid == SW_TID_DEFAULT ? p->default_tid : tid);
    if (rp->terminated)
        return sw_fail(&p->err, SW_EEXITED, "resuming: the target has exited");
    tgt_rsp_drop_caches(rp);
    int rc = rsp_resume(rp->s, id, tid != SW_TID_DEFAULT, sig);
    if (rc < 0)
        return proc_fail_from_session(rp, rc);
    rp->running = true;
    return 0;
}

static bool
is_passed(struct tgt_rsp_proc *rp, int sig)
{
    for (size_t i = 0; i < rp->npass; i++)
        if (rp->pass[i] == sig)
            return true;
    return false;
}

static int
dbg_handle_event(struct sw_proc *p, bool block)
{
    struct tgt_rsp_proc *rp = to_rp(p);
    struct rsp_stop st;

    for (;;) {
        int rc = rsp_wait_stop(rp->s, block ? -1 : 0, &st);
        if (rc < 0) {
            if (rc == SW_ETIMEDOUT && !block)
                return rc;
            return proc_fail_from_session(rp, rc);
        }
        /* A passed signal goes straight back to the thread it stopped
         * (stubs without QPassSignals report it, notes/peers.md 3). */
        if (st.kind == RSP_STOP_SIGNAL && st.signal != 0 && is_passed(rp, st.signal)) {
            struct rsp_thread_id id =
                st.has_thread ? st.thread : tgt_rsp_thread_id(rp, p->default_tid);
            rc = rsp_resume(rp->s, id, false, st.signal);
            if (rc < 0)
                return proc_fail_from_session(rp, rc);
            continue;
        }
        tgt_rsp_take_stop(rp, &st);
        if (rp->terminated)
            return sw_fail(&p->err, SW_EEXITED, "the target %s %d before stopping",
                           st.kind == RSP_STOP_EXITED ? "exited with status"
                                                      : "was killed by signal",
                           st.kind == RSP_STOP_EXITED ? st.code : st.signal);
        return 0;
    }
}

static int
dbg_pause(struct sw_proc *p, sw_tid tid)
{
    struct tgt_rsp_proc *rp = to_rp(p);
    (void)tid; /* all-stop stubs stop every thread */
    if (!rp->running)
        return 0;
    int rc = rsp_interrupt(rp->s);
    if (rc < 0)
        return proc_fail_from_session(rp, rc);
    return dbg_handle_event(p, true);
}

static int
dbg_detach(struct sw_proc *p, bool leave_stopped)
{
    struct tgt_rsp_proc *rp = to_rp(p);
    if (leave_stopped || rp->terminated)
        return 0; /* closing the link leaves a gdbserver target stopped */
    int rc = rp->only_pid != 0 ? rsp_detach_pid(rp->s, rp->only_pid) : rsp_detach(rp->s);
    return rc < 0 ? proc_fail_from_session(rp, rc) : 0;
}

static bool
dbg_is_terminated(struct sw_proc *p)
{
    return to_rp(p)->terminated;
}

static int
dbg_notification_fd(struct sw_proc *p)
{
    return rsp_session_fd(to_rp(p)->s);
}

const struct sw_procdebug_ops tgt_rsp_debug_ops = {
    .pause = dbg_pause,
    .resume = dbg_resume,
    .detach = dbg_detach,
    .is_terminated = dbg_is_terminated,
    .notification_fd = dbg_notification_fd,
    .handle_debug_event = dbg_handle_event,
};

int
sw_proc_rsp_set_pass(struct sw_proc *p, const int *sigs, size_t n)
{
    struct tgt_rsp_proc *rp = to_rp(p);
    if (n > TGT_MAX_PASS)
        return sw_fail(&p->err, SW_EINVAL, "passing %zu signals: at most %d", n, TGT_MAX_PASS);
    memcpy(rp->pass, sigs, n * sizeof *sigs);
    rp->npass = n;
    /* Tell stubs that can filter (gdbserver) so they never report them. */
    if (n > 0 && rsp_has_feature(rp->s, RSP_FEAT_QPASS_SIGNALS)) {
        int rc = rsp_pass_signals(rp->s, sigs, n);
        if (rc < 0 && rc != SW_EUNSUP)
            return proc_fail_from_session(rp, rc);
    }
    return 0;
}
