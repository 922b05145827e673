/* targets/rsp_debug.c -- ProcDebug over an RSP session: resume, pause, events, detach.
 *
 * The process object is targets/rsp_proc.c's (rsp_proc_internal.h); the
 * stops it takes in go through targets/rsp_stop.c, which drops the per-stop
 * caches and moves stop_gen.  A resume steps a thread stopped at a
 * breakpoint instruction of the program over it first.  Calls nothing in
 * rsp_proc.c.
 */
#include "rspwalk/target.h"

#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "rspwalk/arch.h"
#include "rspwalk/rsp.h"
#include "targets/local_tracer.h"
#include "targets/rsp_proc_internal.h"
#include "util/util.h"

/* How long pause waits for the stops it asked for (non-stop). */
#define TGT_PAUSE_TIMEOUT_MS 5000
/* How long an interrupt may go without a stop before the target's process
 * is signalled, where its stub is its tracer on this host (a stop is
 * usually there in well under a millisecond). */
#define TGT_LOCAL_INTERRUPT_MS 200
/* SIGTRAP in gdb's numbering of stop replies (include/gdb/signals.def:
 * GDB_SIGNAL_TRAP), whatever the target's own number. */
#define TGT_GDB_SIGTRAP 5
/* The longest breakpoint instruction of the arch tables, and the PC. */
#define TGT_MAX_INSN 8
#define TGT_MAX_PC   8

static int
proc_fail_from_session(struct tgt_rsp_proc *rp, int code)
{
    return sw_fail(&rp->base.err, code, "%s", rsp_session_errmsg(rp->s));
}

/* ---- stepping over a breakpoint instruction of the program ----------------------- */

/* The register map's row of the PC, or NULL when the stub does not describe it. */
static const struct tgt_regmap *
pc_row(struct tgt_rsp_proc *rp)
{
    const struct arch_desc *a = rp->base.arch;
    for (size_t i = 0; i < a->nregs && i < TGT_MAX_ROWS; i++)
        if ((a->regs[i].dwarf == a->dw_pc || a->regs[i].role == ARCH_ROLE_PC) && rp->map[i].mapped)
            return &rp->map[i];
    return NULL;
}

/* The PC of thread ID stopped by ST: from the stop reply where it came
 * with it (gdbserver sends it), else from the thread's 'g' of this stop
 * (kept by the session: read at most once), else with 'p'. */
static int
pc_read(struct tgt_rsp_proc *rp, const struct rsp_stop *st, struct rsp_thread_id id,
        const struct tgt_regmap *m, sw_addr *pc)
{
    const struct arch_desc *a = rp->base.arch;
    for (size_t i = 0; i < st->nexpedited; i++)
        if (st->expedited[i].regnum == m->regnum && st->expedited[i].len >= m->size) {
            *pc = arch_load(a, st->expedited[i].bytes, m->size);
            return 0;
        }
    const uint8_t *g;
    size_t glen;
    int rc = rsp_regs_read(rp->s, id, &g, &glen);
    if (rc < 0)
        return proc_fail_from_session(rp, rc);
    if (m->offset + m->size <= glen) {
        *pc = arch_load(a, g + m->offset, m->size);
        return 0;
    }
    uint8_t buf[64];
    size_t n;
    rc = rsp_reg_read(rp->s, id, m->regnum, buf, sizeof buf, &n);
    if (rc < 0 || n < m->size)
        return sw_fail(&rp->base.err, rc < 0 ? rc : SW_ENOREG, "reading the PC: %s",
                       rc < 0 ? rsp_session_errmsg(rp->s) : "short 'p' reply");
    *pc = arch_load(a, buf, m->size);
    return 0;
}

/* Whether the thread ID of stop ST is to be stepped over the breakpoint
 * instruction it stopped at before it resumes, as gdb does for a
 * breakpoint it did not insert (gdb/infrun.c, resume_1: "permanent
 * breakpoint"; gdbarch_skip_permanent_breakpoint): resumed as it is, it
 * would run the instruction again and stop at once, forever.  Only a
 * SIGTRAP stop; only with the PC at the instruction: where a trap leaves
 * the PC past it (x86: pc_after_trap), only when the stub says it moved
 * the PC back (swbreak, which gdbserver sends), else the bytes at the PC
 * are the next instruction's.  rspwalk inserts no breakpoint, so every one
 * found is the program's.  A stop of any other signal costs nothing. */
static bool
skip_wanted(struct tgt_rsp_proc *rp, const struct rsp_stop *st)
{
    const struct arch_desc *a = rp->base.arch;
    return st->kind == RSP_STOP_SIGNAL && st->signal == TGT_GDB_SIGTRAP && a->break_insn_len > 0 &&
           a->break_insn_len <= TGT_MAX_INSN && (a->pc_after_trap == 0 || st->swbreak);
}

/* Step thread ID, stopped by ST, over the breakpoint instruction at its
 * PC, if that is where it stopped (skip_wanted): the PC read (free when
 * the stop reply carried it), the instruction's bytes read (free when this
 * stop's memory windows hold them: FROM_CACHE), and only when they are the
 * arch's breakpoint instruction, the PC written past it (rsp_reg_write: 'P',
 * or 'g' and 'G').  Memory that cannot be read at the PC holds no
 * breakpoint: nothing is done.  Returns 0 or a code with the message on RP. */
static int
skip_breakpoint(struct tgt_rsp_proc *rp, const struct rsp_stop *st, struct rsp_thread_id id,
                bool from_cache)
{
    const struct arch_desc *a = rp->base.arch;
    const struct tgt_regmap *m = pc_row(rp);
    uint8_t insn[TGT_MAX_INSN], val[TGT_MAX_PC];
    sw_addr pc = 0;
    int rc;

    if (m == NULL || m->size > sizeof val)
        return 0; /* no PC to move: the stop comes again, as without this step */
    if ((rc = pc_read(rp, st, id, m, &pc)) < 0)
        return sw_err_prefix(&rp->base.err,
                             "resuming thread %" PRId64 " past a breakpoint: ", id.tid);
    if (from_cache && tgt_rsp_mem_cached(rp, pc, a->break_insn_len)) {
        rc = tgt_rsp_read_mem(&rp->base, pc, insn, a->break_insn_len);
    } else {
        /* 'm' reads through the selected thread's process (one of several
         * on the link): this thread's, sent only when the selection changes. */
        rc = rsp_select_thread(rp->s, id);
        if (rc == 0)
            rc = rsp_mem_read(rp->s, pc, insn, a->break_insn_len);
        if (rc < 0 && rc != SW_EMEM && rc != SW_EUNSUP)
            return sw_fail(&rp->base.err, rc,
                           "resuming: reading the instruction at 0x%" PRIx64 ": %s", (uint64_t)pc,
                           rsp_session_errmsg(rp->s));
    }
    if (rc < 0 || memcmp(insn, a->break_insn, a->break_insn_len) != 0)
        return 0;
    arch_store(a, val, m->size, pc + a->break_insn_len);
    rc = rsp_reg_write(rp->s, id, m->regnum, m->offset, val, m->size);
    if (rc < 0)
        return sw_fail(&rp->base.err, rc,
                       "resuming past the breakpoint instruction at 0x%" PRIx64 ": %s",
                       (uint64_t)pc, rsp_session_errmsg(rp->s));
    return 0;
}

/* Non-stop: thread TID stopped with signal SIG (0: none, which forgets
 * an earlier one); kept until the thread is resumed. */
static void
note_thread_signal(struct tgt_rsp_proc *rp, sw_tid tid, int sig)
{
    size_t i = 0;
    while (i < rp->nnssig && rp->nssig[i].tid != tid)
        i++;
    if (sig == 0) {
        if (i < rp->nnssig)
            rp->nssig[i] = rp->nssig[--rp->nnssig];
        return;
    }
    if (i == rp->nnssig) {
        if (rp->nnssig == rp->capnssig) {
            size_t cap = rp->capnssig ? 2 * rp->capnssig : 8;
            struct tgt_thread_signal *n = sw_realloc(rp->nssig, cap * sizeof *n);
            if (n == NULL)
                return; /* then the signal is not delivered at the resume: no worse */
            rp->nssig = n;
            rp->capnssig = cap;
        }
        rp->nnssig++;
    }
    rp->nssig[i] = (struct tgt_thread_signal){ .tid = tid, .sig = sig };
}

static int
dbg_resume(struct sw_proc *p, sw_tid tid, int sig)
{
    struct tgt_rsp_proc *rp = to_rp(p);
    struct rsp_thread_id id = tgt_rsp_thread_id(rp, tid == SW_TID_DEFAULT ? p->default_tid : tid);
    if (rp->terminated)
        return sw_fail(&p->err, SW_EEXITED, "resuming: the target has exited");
    /* The thread of the last stop, if it runs now (all of them, or it
     * alone) and has not run since: past its breakpoint instruction first. */
    const struct rsp_stop *st = &rp->stop;
    struct rsp_thread_id at = st->has_thread ? st->thread : tgt_rsp_thread_id(rp, p->default_tid);
    bool runs = tid == SW_TID_DEFAULT || tgt_rsp_thread_id(rp, tid).tid == at.tid;
    if (runs && rp->bp_skipped_gen != p->stop_gen && skip_wanted(rp, st) &&
        rsp_thread_stopped(rp->s, at)) {
        int rc = skip_breakpoint(rp, st, at, true);
        if (rc < 0)
            return rc;
        rp->bp_skipped_gen = p->stop_gen;
        rp->stop.nexpedited = 0; /* the PC it carried is no longer the thread's */
    }
    tgt_warm_record(rp);
    tgt_rsp_drop_caches(rp);
    /* All-stop and non-stop alike: vCont;c resumes all, vCont;c:TID that
     * thread alone (the others stay stopped on gdbserver; QEMU user resumes
     * every thread, docs/api.md). */
    int rc = rsp_resume(rp->s, id, tid != SW_TID_DEFAULT, sig);
    if (rc < 0)
        return proc_fail_from_session(rp, rc);
    if (tid == SW_TID_DEFAULT)
        rp->nnssig = 0;
    else
        note_thread_signal(rp, tid, 0);
    rp->running = true;
    tgt_qemu_resumed(rp);
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

/* Take in stop ST, or send a passed signal straight back to the thread it
 * stopped (stubs without QPassSignals report it): *TAKEN
 * says which.  In non-stop mode only that thread resumes. */
static int
take_event(struct tgt_rsp_proc *rp, const struct rsp_stop *st, bool *taken)
{
    *taken = false;
    if (st->kind == RSP_STOP_SIGNAL && st->signal != 0 && is_passed(rp, st->signal)) {
        struct rsp_thread_id id =
            st->has_thread ? st->thread : tgt_rsp_thread_id(rp, rp->base.default_tid);
        /* A SIGTRAP passed on (--pass TRAP) from a breakpoint instruction:
         * delivered past it, as the kernel would (nothing is cached now). */
        int rc = skip_wanted(rp, st) ? skip_breakpoint(rp, st, id, false) : 0;
        if (rc < 0)
            return rc;
        rc = rsp_resume(rp->s, id, rsp_non_stop(rp->s), st->signal);
        return rc < 0 ? proc_fail_from_session(rp, rc) : 0;
    }
    *taken = tgt_rsp_take_stop(rp, st);
    if (*taken)
        tgt_qemu_took_stop(rp, rp->base.default_tid);
    if (*taken && rsp_non_stop(rp->s) && st->has_thread)
        note_thread_signal(rp, (sw_tid)st->thread.tid,
                           st->kind == RSP_STOP_SIGNAL ? st->signal : 0);
    /* What the last stop read goes out again with this stop's first read. */
    if (*taken)
        rp->warm.due = tgt_warm_wanted(rp);
    return 0;
}

static int
exited(struct tgt_rsp_proc *rp)
{
    const struct rsp_stop *st = &rp->stop;
    return sw_fail(&rp->base.err, SW_EEXITED, "the target %s %d before stopping",
                   st->kind == RSP_STOP_EXITED ? "exited with status" : "was killed by signal",
                   st->kind == RSP_STOP_EXITED ? st->code : st->signal);
}

static int
dbg_handle_event(struct sw_proc *p, bool block)
{
    struct tgt_rsp_proc *rp = to_rp(p);
    struct rsp_stop st;
    bool taken = false;
    int rc;

    while (!taken) {
        if ((rc = rsp_wait_stop(rp->s, block ? -1 : 0, &st)) < 0) {
            if (rc == SW_ETIMEDOUT && !block)
                return rc;
            return proc_fail_from_session(rp, rc);
        }
        if ((rc = take_event(rp, &st, &taken)) < 0)
            return rc;
    }
    /* Non-stop: the stub may have sent several at once (the vStopped
     * drain); take them all in, so that the notification descriptor stays
     * the one thing to poll.  default_tid stays the first one's thread. */
    sw_tid first = p->default_tid;
    while (!rp->terminated && rsp_stops_pending(rp->s) > 0) {
        if ((rc = rsp_wait_stop(rp->s, 0, &st)) < 0)
            return rc == SW_ETIMEDOUT ? 0 : proc_fail_from_session(rp, rc);
        if ((rc = take_event(rp, &st, &taken)) < 0)
            return rc;
    }
    if (rp->terminated)
        return exited(rp);
    p->default_tid = first;
    return 0;
}

/* Non-stop: a thread asked to stop that exits instead is reported by
 * nothing but, when it was the last one running, an "N" stop: one still
 * running after "N" or this long (doubled at each look) is asked after. */
#define TGT_GONE_CHECK_US 20000

static bool
is_gone(const struct tgt_rsp_proc *rp, sw_tid tid)
{
    for (size_t i = 0; i < rp->ngone; i++)
        if (rp->gone[i] == tid)
            return true;
    return false;
}

static int
note_gone(struct tgt_rsp_proc *rp, sw_tid tid)
{
    if (rp->ngone == rp->capgone) {
        size_t cap = rp->capgone ? 2 * rp->capgone : 8;
        sw_tid *g = sw_realloc(rp->gone, cap * sizeof *g);
        if (g == NULL)
            return sw_fail(&rp->base.err, SW_ENOMEM, "pausing: out of memory");
        rp->gone = g;
        rp->capgone = cap;
    }
    rp->gone[rp->ngone++] = tid;
    return 0;
}

/* Non-stop: wait until every thread in IDS (N of them) is stopped or gone
 * (rp->gone, emptied first), taking in whatever else stops meanwhile. */
static int
wait_stopped(struct tgt_rsp_proc *rp, const struct rsp_thread_id *ids, size_t n)
{
    uint64_t start = sw_now_us(), deadline = start + 1000 * (uint64_t)TGT_PAUSE_TIMEOUT_MS;
    uint64_t look = TGT_GONE_CHECK_US, look_at = start + look;
    bool no_resumed = false;
    int rc;
    rp->ngone = 0;
    for (;;) {
        size_t left = 0;
        for (size_t i = 0; i < n; i++)
            left += !rsp_thread_stopped(rp->s, ids[i]) && !is_gone(rp, (sw_tid)ids[i].tid);
        if (left == 0 || rp->terminated)
            return 0;
        uint64_t now = sw_now_us();
        if (no_resumed || now >= look_at) {
            for (size_t i = 0; i < n; i++) {
                sw_tid tid = (sw_tid)ids[i].tid;
                if (rsp_thread_stopped(rp->s, ids[i]) || is_gone(rp, tid))
                    continue;
                if ((rc = rsp_thread_alive(rp->s, ids[i])) < 0)
                    return proc_fail_from_session(rp, rc);
                if (rc == 0 && (rc = note_gone(rp, tid)) < 0)
                    return rc;
            }
            no_resumed = false;
            look *= 2;
            look_at = sw_now_us() + look;
            continue;
        }
        if (now >= deadline)
            return sw_fail(&rp->base.err, SW_ETIMEDOUT,
                           "pausing: %zu thread%s not stopped after %d ms", left,
                           left == 1 ? "" : "s", TGT_PAUSE_TIMEOUT_MS);
        struct rsp_stop st;
        bool taken;
        uint64_t until = look_at < deadline ? look_at : deadline;
        rc = rsp_wait_stop(rp->s, (int)((until - now + 999) / 1000), &st);
        if (rc == SW_ETIMEDOUT)
            continue; /* the checks above name what is missing */
        if (rc < 0)
            return proc_fail_from_session(rp, rc);
        if (st.kind == RSP_STOP_NO_RESUMED) {
            no_resumed = true; /* no thread runs: one not stopped has exited */
            continue;
        }
        if ((rc = take_event(rp, &st, &taken)) < 0)
            return rc;
    }
}

static int
pause_non_stop(struct tgt_rsp_proc *rp, sw_tid tid)
{
    struct rsp_thread_id one, *ids = &one;
    size_t n = 1;
    int rc;

    if (tid != SW_TID_DEFAULT) {
        one = tgt_rsp_thread_id(rp, tid);
        if (!rsp_thread_stopped(rp->s, one) && (rc = rsp_stop_thread(rp->s, one)) < 0)
            return proc_fail_from_session(rp, rc);
    } else {
        /* Every thread of ours: those listed now (one that starts meanwhile
         * is stopped too, but not waited for). */
        struct sw_proc *p = &rp->base;
        size_t cap = 0;
        if ((rc = sw_proc_threads(p, NULL, 0, &cap)) < 0)
            return rc;
        sw_tid *tids = sw_calloc(cap ? cap : 1, sizeof *tids);
        ids = sw_calloc(cap ? cap : 1, sizeof *ids);
        if (tids == NULL || ids == NULL) {
            sw_free(tids);
            sw_free(ids);
            return sw_fail(&p->err, SW_ENOMEM, "pausing: out of memory");
        }
        if ((rc = sw_proc_threads(p, tids, cap, &n)) == 0)
            for (size_t i = 0; i < n && i < cap; i++)
                ids[i] = tgt_rsp_thread_id(rp, tids[i]);
        n = n < cap ? n : cap;
        sw_free(tids);
        struct rsp_thread_id all = { .pid = rp->only_pid ? rp->only_pid : p->pid, .tid = -1 };
        if (rc == 0 && (rc = rsp_stop_thread(rp->s, all)) < 0)
            rc = proc_fail_from_session(rp, rc);
        if (rc < 0) {
            sw_free(ids);
            return rc;
        }
    }
    rc = wait_stopped(rp, ids, n);
    if (ids != &one)
        sw_free(ids);
    if (rc < 0)
        return rc;
    if (rp->terminated)
        return exited(rp);
    if (tid != SW_TID_DEFAULT && is_gone(rp, tid))
        return sw_fail(&rp->base.err, SW_ENOENT, "pausing thread %" PRIu64 ": it has exited",
                       (uint64_t)tid);
    if (tid != SW_TID_DEFAULT)
        rp->base.default_tid = tid;
    rp->running = false;
    return 0;
}

/* When the interrupt brings no stop within TGT_LOCAL_INTERRUPT_MS and the
 * stub is the tracer of the target's process on this host (gdbserver
 * attached to a process that leads no process group, which its interrupt
 * misses), signal the process as the interrupt would have: the stub then
 * reports that stop. */
static int
interrupt_locally(struct tgt_rsp_proc *rp)
{
    int fd = rsp_session_event_fd(rp->s);
    struct pollfd pfd = { .fd = fd, .events = POLLIN };
    if (fd < 0 || poll(&pfd, 1, TGT_LOCAL_INTERRUPT_MS) != 0)
        return 0;
    char msg[200];
    if (!rp->tracer_looked) {
        rp->local_tracer = tgt_local_tracer(rsp_session_fd(rp->s), rp->base.pid, rp->tracer_msg,
                                            sizeof rp->tracer_msg);
        rp->tracer_looked = true;
        if (rp->local_tracer <= 0)
            sw_debug(SW_DBG_PKT, "-! no stop %d ms after the interrupt; no signal: %s",
                     TGT_LOCAL_INTERRUPT_MS, rp->tracer_msg);
    }
    if (rp->local_tracer <= 0)
        return 0;
    int rc = tgt_local_interrupt(rp->base.pid, msg, sizeof msg);
    if (rc < 0)
        return sw_fail(&rp->base.err, rc, "pausing: %s", msg);
    if (rc > 0) {
        sw_debug(SW_DBG_PKT, "-! SIGINT to process %" PRId64 " (its tracer's interrupt missed it)",
                 rp->base.pid);
        rp->interrupt_misses = true;
    }
    return 0;
}

static int
dbg_pause(struct sw_proc *p, sw_tid tid)
{
    struct tgt_rsp_proc *rp = to_rp(p);
    if (rp->terminated)
        return sw_fail(&p->err, SW_EEXITED, "pausing: the target has exited");
    if (rsp_non_stop(rp->s))
        return pause_non_stop(rp, tid);
    /* All-stop: the interrupt stops every thread, whatever TID is. */
    if (tid != SW_TID_DEFAULT && rp->strict_threads)
        return sw_fail(&p->err, SW_EUNSUP,
                       "pausing thread %" PRIu64 " alone: the link is in all-stop mode, where "
                       "every thread stops (non-stop: rsp_session_config.non_stop on a stub "
                       "offering QNonStop)",
                       (uint64_t)tid);
    if (!rp->running)
        return 0;
    /* QEMU user mode reads no interrupt while the guest runs; a signal to
     * one of its guest threads stops it, when it runs on this host. */
    if (tgt_qemu_user(rp))
        return tgt_qemu_stop(rp, SW_TID_DEFAULT);
    /* A stop already reported (a signal the program got, not passed) needs
     * no interrupt: one sent now would reach a stopped process, and
     * gdbserver would then signal it, stopping its next run at once.  Looked
     * for only when the event descriptor says something came (one poll; a
     * look into the session costs a sample of one thread 7% of its rate),
     * or always on a link without a descriptor to poll. */
    int rc, efd = rsp_session_fd(rp->s) >= 0 ? rsp_session_event_fd(rp->s) : -1;
    struct pollfd epfd = { .fd = efd, .events = POLLIN };
    if ((efd < 0 || poll(&epfd, 1, 0) != 0) && (rc = dbg_handle_event(p, false)) != SW_ETIMEDOUT)
        return rc;
    if (rp->interrupt_misses) {
        /* Learnt: the stub's interrupt never reaches this process.  A stop
         * already come needs no signal (it would stop the next run). */
        char msg[200];
        int fd = rsp_session_event_fd(rp->s);
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        if (fd >= 0 && poll(&pfd, 1, 0) == 0) {
            if ((rc = tgt_local_interrupt(p->pid, msg, sizeof msg)) < 0)
                return sw_fail(&p->err, rc, "pausing: %s", msg);
            rsp_session_note_interrupt(rp->s);
        }
    } else {
        if ((rc = rsp_interrupt(rp->s)) < 0)
            return proc_fail_from_session(rp, rc);
        if ((rc = interrupt_locally(rp)) < 0)
            return rc;
    }
    rc = dbg_handle_event(p, true);
    if (rc == SW_ETIMEDOUT) /* measured: QEMU 7.2 user mode */
        return sw_fail(&p->err, rc,
                       "pausing: the stub sent no stop after the interrupt (%s); the target "
                       "still runs (gdbserver's interrupt misses a process it attached to that "
                       "leads no process group, QEMU user mode's any running guest; a signal "
                       "to the process is sent only where the stub is its tracer on this host%s%s)",
                       rsp_session_errmsg(rp->s), rp->tracer_looked ? ", and here " : "",
                       rp->tracer_looked ? rp->tracer_msg : "");
    return rc;
}

static int
dbg_detach(struct sw_proc *p, bool leave_stopped)
{
    struct tgt_rsp_proc *rp = to_rp(p);
    if (rp->terminated)
        return 0;
    if (leave_stopped) {
        /* Closing the link leaves each thread as it is (gdbserver, also in
         * non-stop mode): stop the ones still running first. */
        if (rsp_non_stop(rp->s))
            return pause_non_stop(rp, SW_TID_DEFAULT);
        return 0;
    }
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
    /* Not the socket alone: a stop may already wait in the session's buffer. */
    struct tgt_rsp_proc *rp = to_rp(p);
    int fd = rsp_session_event_fd(rp->s);
    if (fd < 0)
        sw_fail(&p->err, SW_EIO, "%s", rsp_session_errmsg(rp->s));
    return fd;
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

int
sw_proc_rsp_pause_threads(struct sw_proc *p, const sw_tid *tids, size_t n)
{
    struct tgt_rsp_proc *rp = to_rp(p);
    if (rp->terminated)
        return sw_fail(&p->err, SW_EEXITED, "pausing: the target has exited");
    if (!rsp_non_stop(rp->s))
        return sw_fail(&p->err, SW_EUNSUP,
                       "pausing %zu threads: the link is in all-stop mode, where every thread "
                       "stops",
                       n);
    struct rsp_thread_id *all = sw_calloc(n ? n : 1, sizeof *all);
    struct rsp_thread_id *ask = sw_calloc(n ? n : 1, sizeof *ask);
    size_t nask = 0;
    int rc = 0;
    if (all == NULL || ask == NULL) {
        rc = sw_fail(&p->err, SW_ENOMEM, "pausing %zu threads: out of memory", n);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        all[i] = tgt_rsp_thread_id(rp, tids[i]);
        if (!rsp_thread_stopped(rp->s, all[i]))
            ask[nask++] = all[i];
    }
    if (nask > 0 && (rc = rsp_stop_threads(rp->s, ask, nask)) < 0) {
        rc = proc_fail_from_session(rp, rc);
        goto out;
    }
    if ((rc = wait_stopped(rp, all, n)) < 0)
        goto out;
    if (rp->terminated)
        rc = exited(rp);
    else
        rp->running = false;
out:
    sw_free(all);
    sw_free(ask);
    return rc;
}

int
sw_proc_rsp_resume_threads(struct sw_proc *p, const sw_tid *tids, const int *sigs, size_t n)
{
    struct tgt_rsp_proc *rp = to_rp(p);
    if (rp->terminated)
        return sw_fail(&p->err, SW_EEXITED, "resuming: the target has exited");
    if (!rsp_non_stop(rp->s))
        return sw_fail(&p->err, SW_EUNSUP,
                       "resuming %zu threads alone: the link is in all-stop mode", n);
    struct rsp_thread_id *ids = sw_calloc(n ? n : 1, sizeof *ids);
    if (ids == NULL)
        return sw_fail(&p->err, SW_ENOMEM, "resuming %zu threads: out of memory", n);
    /* The thread of the last stop, if among them and not run since: past
     * its breakpoint instruction first, as dbg_resume does. */
    const struct rsp_stop *st = &rp->stop;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        ids[i] = tgt_rsp_thread_id(rp, tids[i]);
        if (st->has_thread && ids[i].tid == st->thread.tid && rp->bp_skipped_gen != p->stop_gen &&
            skip_wanted(rp, st) && rsp_thread_stopped(rp->s, ids[i])) {
            if ((rc = skip_breakpoint(rp, st, ids[i], true)) < 0)
                goto out;
            rp->bp_skipped_gen = p->stop_gen;
            rp->stop.nexpedited = 0;
        }
    }
    tgt_warm_record(rp);
    tgt_rsp_drop_caches(rp);
    if ((rc = rsp_resume_threads(rp->s, ids, sigs, n)) < 0) {
        rc = proc_fail_from_session(rp, rc);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        note_thread_signal(rp, tids[i], 0);
    rp->running = true;
out:
    sw_free(ids);
    return rc;
}
