/* rtos/rtos_proc.c -- RTOS tasks as threads (rspwalk/rtos.h): the ProcessState over the CPU's.
 *
 * Tasks are read again whenever the inner state has stopped again (its stop_gen moved); a
 * parked task's context is decoded on its first register read.  Everything but registers
 * and the thread list is the inner state's.  Also the stepper that ends a task's walk at its
 * entry function.
 */
#include "rspwalk/rtos.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/armv7m_regs.h"
#include "rtos/rtos_internal.h"
#include "rspwalk/walker.h"
#include "util/util.h"

struct rtos_proc {
    struct sw_proc base;
    struct sw_proc *inner;    /* owned */
    struct rtos_freertos *fr; /* owned */
    enum rtos_port port;
    struct rtos_task *tasks; /* owned: N, from the stop SNAP_GEN */
    size_t n;
    bool have_snap, sched_running;
    uint64_t snap_gen;
    sw_tid cpu_tid; /* the inner state's thread: the CPU */
};

static const struct sw_proc_ops rtos_proc_ops;

static struct rtos_proc *
to_rp(struct sw_proc *p)
{
    return (struct rtos_proc *)p;
}

static int
from_inner(struct rtos_proc *rp, int rc)
{
    if (rc < 0)
        sw_err_copy(&rp->base.err, &rp->inner->err);
    return rc;
}

static int decode(struct rtos_proc *rp, struct rtos_task *t);

/* The tasks as of the inner state's last stop. */
static int
snapshot(struct rtos_proc *rp)
{
    struct rtos_task *tasks;
    size_t n;
    bool running;

    if (rp->have_snap && rp->snap_gen == rp->inner->stop_gen)
        return 0;
    int rc = sw_freertos_tasks(rp->fr, rp->inner, &tasks, &n, &running, &rp->base.err);
    if (rc < 0)
        return rc;
    free(rp->tasks);
    rp->tasks = tasks;
    rp->n = n;
    /* A suspended task whose notify state the layout does not give: blocked when its context
     * resumes in a notification wait (eTaskGetState's answer, from the code instead). */
    for (size_t i = 0; i < n; i++)
        if (tasks[i].maybe_notify && decode(rp, &tasks[i]) == 0 &&
            sw_freertos_in_notify_wait(rp->fr, tasks[i].ctx.r[ARMV7M_DW_PC]))
            tasks[i].state = "blocked";
    rp->sched_running = running;
    rp->have_snap = true;
    rp->snap_gen = rp->inner->stop_gen;
    rp->cpu_tid = rp->inner->default_tid;
    rp->base.default_tid = running ? (sw_tid)tasks[0].tcb : rp->cpu_tid;
    rp->base.stop_gen = rp->inner->stop_gen;
    return 0;
}

static struct rtos_task *
find_task(struct rtos_proc *rp, sw_tid tid)
{
    for (size_t i = 0; i < rp->n; i++)
        if ((sw_tid)rp->tasks[i].tcb == tid)
            return &rp->tasks[i];
    return NULL;
}

static int
decode(struct rtos_proc *rp, struct rtos_task *t)
{
    uint8_t mem[RTOS_CTX_MAX];
    const struct arch_desc *a = rp->base.arch;
    struct sw_proc *in = rp->inner;

    if (t->ctx_rc <= 0)
        return t->ctx_rc;
    int rc = in->ops->read_mem(in, t->top, mem, RTOS_CTX_HEAD);
    size_t len = rc == 0 ? sw_rtos_ctx_size(rp->port, a, mem) : 0;
    if (rc == 0 && len > RTOS_CTX_HEAD)
        rc =
            in->ops->read_mem(in, t->top + RTOS_CTX_HEAD, mem + RTOS_CTX_HEAD, len - RTOS_CTX_HEAD);
    if (rc < 0) {
        snprintf(t->ctx_why, sizeof t->ctx_why, "%s", sw_proc_errmsg(in));
        t->ctx_rc = rc;
        if (sw_is_link_error(rc))
            t->ctx_rc = 1; /* not known: read again next time */
        return rc;
    }
    t->ctx_rc =
        sw_rtos_ctx_decode(rp->port, a, t->top, mem, len, &t->ctx, t->ctx_why, sizeof t->ctx_why);
    return t->ctx_rc;
}

static int
rtos_read_reg(struct sw_proc *p, sw_tid tid, unsigned regno, sw_word *val)
{
    struct rtos_proc *rp = to_rp(p);
    int rc = snapshot(rp);
    if (rc < 0)
        return rc;
    if (tid == SW_TID_DEFAULT)
        tid = p->default_tid;
    struct rtos_task *t = find_task(rp, tid);
    if (t == NULL || t->running)
        return from_inner(rp,
                          rp->inner->ops->read_reg(rp->inner, t ? rp->cpu_tid : tid, regno, val));
    if ((rc = decode(rp, t)) < 0)
        return sw_fail(&p->err, rc, "task %s (tcb 0x%" PRIx64 "): %s", t->name, t->tcb, t->ctx_why);
    if (regno <= ARMV7M_DW_PC)
        *val = t->ctx.r[regno];
    else if (regno == ARMV7M_DW_XPSR)
        *val = t->ctx.xpsr;
    else if (regno == ARMV7M_DW_PSP)
        *val = t->ctx.r[ARMV7M_DW_SP]; /* a task runs on the process stack */
    else
        return sw_fail(&p->err, SW_ENOREG,
                       "task %s (tcb 0x%" PRIx64 "): register %u is not in its saved context",
                       t->name, t->tcb, regno);
    return 0;
}

static int
rtos_read_mem(struct sw_proc *p, sw_addr addr, void *buf, size_t len)
{
    struct rtos_proc *rp = to_rp(p);
    return from_inner(rp, rp->inner->ops->read_mem(rp->inner, addr, buf, len));
}

static int
rtos_read_mem_batch(struct sw_proc *p, struct sw_mem_req *reqs, size_t n)
{
    struct rtos_proc *rp = to_rp(p);
    return from_inner(rp, sw_proc_read_mem_batch(rp->inner, reqs, n));
}

static int
rtos_read_mem_batch_while(struct sw_proc *p, struct sw_mem_req *reqs, size_t n,
                          bool (*while_fn)(void *), void *arg)
{
    struct rtos_proc *rp = to_rp(p);
    return from_inner(rp, sw_proc_read_mem_batch_while(rp->inner, reqs, n, while_fn, arg));
}

static int
rtos_stop_reads(struct sw_proc *p, const struct sw_mem_req *ranges, size_t n)
{
    struct rtos_proc *rp = to_rp(p);
    return from_inner(rp, sw_proc_stop_reads(rp->inner, ranges, n));
}

static int
rtos_threads(struct sw_proc *p, sw_tid *tids, size_t max, size_t *n)
{
    struct rtos_proc *rp = to_rp(p);
    int rc = snapshot(rp);
    if (rc < 0)
        return rc;
    size_t k = 0;
    /* Before the scheduler runs, the CPU runs no task: it is a thread of its own, first. */
    if (!rp->sched_running) {
        if (k < max)
            tids[k] = rp->cpu_tid;
        k++;
    }
    for (size_t i = 0; i < rp->n; i++, k++)
        if (k < max)
            tids[k] = (sw_tid)rp->tasks[i].tcb;
    *n = k;
    return 0;
}

static int
rtos_thread_label(struct sw_proc *p, sw_tid tid, char *buf, size_t len)
{
    struct rtos_proc *rp = to_rp(p);
    if (snapshot(rp) == 0 && find_task(rp, tid) != NULL) {
        snprintf(buf, len, "tcb:0x%" PRIx64, tid);
        return 0;
    }
    return from_inner(rp, sw_proc_thread_label(rp->inner, tid, buf, len));
}

static int
rtos_thread_info(struct sw_proc *p, sw_tid tid, struct sw_thread_info *out)
{
    struct rtos_proc *rp = to_rp(p);
    int rc = snapshot(rp);
    if (rc < 0)
        return rc;
    struct rtos_task *t = find_task(rp, tid);
    if (t == NULL)
        return sw_fail(&p->err, SW_EUNSUP, "thread %" PRIu64 " is the CPU, not a task", tid);
    snprintf(out->name, sizeof out->name, "%s", t->name);
    out->state = t->state;
    out->priority = t->priority;
    out->base_priority = t->base_priority;
    return 0;
}

static int
rtos_modules(struct sw_proc *p, struct sw_modinfo **mods, size_t *n)
{
    struct rtos_proc *rp = to_rp(p);
    if (rp->inner->ops->modules == NULL)
        return SW_EUNSUP;
    return from_inner(rp, rp->inner->ops->modules(rp->inner, mods, n));
}

static int
rtos_auxv(struct sw_proc *p, uint8_t **buf, size_t *len)
{
    struct rtos_proc *rp = to_rp(p);
    if (rp->inner->ops->auxv == NULL)
        return SW_EUNSUP;
    return from_inner(rp, rp->inner->ops->auxv(rp->inner, buf, len));
}

static int
rtos_exec_path(struct sw_proc *p, char **path)
{
    struct rtos_proc *rp = to_rp(p);
    if (rp->inner->ops->exec_path != NULL)
        return from_inner(rp, rp->inner->ops->exec_path(rp->inner, path));
    if (p->exe_path == NULL)
        return SW_EUNSUP;
    *path = sw_strdup(p->exe_path);
    return *path ? 0 : SW_ENOMEM;
}

static int
rtos_read_file(struct sw_proc *p, const char *path, uint64_t offset, void *buf, size_t len,
               size_t *got)
{
    struct rtos_proc *rp = to_rp(p);
    if (rp->inner->ops->read_file == NULL)
        return SW_EUNSUP;
    return from_inner(rp, rp->inner->ops->read_file(rp->inner, path, offset, buf, len, got));
}

static struct sw_proc *
rtos_inner(struct sw_proc *p)
{
    return to_rp(p)->inner;
}

static void
rtos_destroy(struct sw_proc *p)
{
    struct rtos_proc *rp = to_rp(p);
    sw_proc_free(rp->inner);
    sw_freertos_free(rp->fr);
    free(rp->tasks);
}

static const struct sw_proc_ops rtos_proc_ops = {
    .read_mem = rtos_read_mem,
    .read_reg = rtos_read_reg,
    .threads = rtos_threads,
    .thread_label = rtos_thread_label,
    .modules = rtos_modules,
    .auxv = rtos_auxv,
    .exec_path = rtos_exec_path,
    .destroy = rtos_destroy,
    .read_file = rtos_read_file,
    .read_mem_batch = rtos_read_mem_batch,
    .read_mem_batch_while = rtos_read_mem_batch_while,
    .stop_reads = rtos_stop_reads,
    .thread_info = rtos_thread_info,
    .inner = rtos_inner,
};

/* ---- ProcDebug: the inner state's, a task named as the CPU -------------------------------- */

static sw_tid
cpu_of(struct rtos_proc *rp, sw_tid tid)
{
    return find_task(rp, tid) != NULL ? SW_TID_DEFAULT : tid;
}

static int
after(struct rtos_proc *rp, int rc)
{
    rp->base.stop_gen = rp->inner->stop_gen;
    return from_inner(rp, rc);
}

static int
dbg_pause(struct sw_proc *p, sw_tid tid)
{
    struct rtos_proc *rp = to_rp(p);
    return after(rp, rp->inner->debug->pause(rp->inner, cpu_of(rp, tid)));
}

static int
dbg_resume(struct sw_proc *p, sw_tid tid, int sig)
{
    struct rtos_proc *rp = to_rp(p);
    return after(rp, rp->inner->debug->resume(rp->inner, cpu_of(rp, tid), sig));
}

static int
dbg_detach(struct sw_proc *p, bool leave_stopped)
{
    struct rtos_proc *rp = to_rp(p);
    return after(rp, rp->inner->debug->detach(rp->inner, leave_stopped));
}

static bool
dbg_is_terminated(struct sw_proc *p)
{
    struct rtos_proc *rp = to_rp(p);
    return rp->inner->debug->is_terminated(rp->inner);
}

static int
dbg_notification_fd(struct sw_proc *p)
{
    struct rtos_proc *rp = to_rp(p);
    return rp->inner->debug->notification_fd(rp->inner);
}

static int
dbg_handle_debug_event(struct sw_proc *p, bool block)
{
    struct rtos_proc *rp = to_rp(p);
    return after(rp, rp->inner->debug->handle_debug_event(rp->inner, block));
}

static const struct sw_procdebug_ops rtos_debug_ops = {
    .pause = dbg_pause,
    .resume = dbg_resume,
    .detach = dbg_detach,
    .is_terminated = dbg_is_terminated,
    .notification_fd = dbg_notification_fd,
    .handle_debug_event = dbg_handle_debug_event,
};

int
sw_proc_rtos_new(struct sw_proc *inner, enum sw_rtos_kind kind, const char *elf_path,
                 struct sw_proc **out, struct sw_errbuf *err)
{
    struct rtos_freertos *fr = NULL;
    struct rtos_proc *rp;
    int rc;

    if (inner == NULL || out == NULL || elf_path == NULL)
        return sw_fail(err, SW_EINVAL, "RTOS tasks: no process state or no ELF file");
    if (kind != SW_RTOS_AUTO && kind != SW_RTOS_FREERTOS)
        return sw_fail(err, SW_EINVAL, "RTOS tasks: unknown RTOS kind %d", (int)kind);
    /* The image first: with no RTOS in it, SW_RTOS_AUTO goes on quietly whatever the arch. */
    if ((rc = sw_freertos_open(elf_path, &fr, err)) < 0)
        return rc;
    if (inner->arch == NULL || strcmp(inner->arch->name, "armv7m") != 0) {
        sw_freertos_free(fr);
        return sw_fail(err, SW_EUNSUP,
                       "RTOS tasks: contexts are decoded on Cortex-M (armv7m) only, not on %s",
                       inner->arch ? inner->arch->name : "an unknown architecture");
    }
    if ((rp = sw_calloc(1, sizeof *rp)) == NULL) {
        sw_freertos_free(fr);
        return sw_fail(err, SW_ENOMEM, "RTOS tasks: out of memory");
    }
    sw_proc_init(&rp->base, &rtos_proc_ops, inner->debug ? &rtos_debug_ops : NULL, inner->arch);
    rp->base.pid = inner->pid;
    rp->inner = inner;
    rp->fr = fr;
    rp->port = sw_freertos_port(fr);
    if (inner->exe_path != NULL && (rp->base.exe_path = sw_strdup(inner->exe_path)) == NULL)
        rc = sw_fail(err, SW_ENOMEM, "RTOS tasks: out of memory");
    if (rc == 0 && (rc = snapshot(rp)) < 0)
        sw_err_copy(err, &rp->base.err);
    if (rc < 0) {
        rp->inner = NULL; /* still the caller's */
        sw_proc_free(&rp->base);
        return rc;
    }
    *out = &rp->base;
    return 0;
}

/* ---- the bottom of a task ------------------------------------------------------------------ */

struct rtos_bottom {
    struct sw_stepper base;
    sw_addr exit_addr;
    bool busy; /* asking the other steppers for the caller: not this one's turn */
};

/* IN is a task's outermost frame when the caller the other steppers find for it returns to
 * the task return address: that address starts a function, so no call put it there. */
static enum sw_gcf
bottom_caller_frame(struct sw_stepper *s, const struct sw_frame *in, struct sw_frame *out)
{
    struct rtos_bottom *b = (struct rtos_bottom *)s;
    struct sw_frame f;
    (void)out;

    if (b->busy || b->exit_addr == 0)
        return SW_GCF_NOT_ME;
    b->busy = true;
    int rc = sw_walk_single(s->walker, in, &f, NULL);
    b->busy = false;
    return rc == 0 && f.ra == b->exit_addr ? SW_GCF_STACKBOTTOM : SW_GCF_NOT_ME;
}

static const struct sw_stepper_ops rtos_bottom_ops = {
    .name = "rtos-bottom",
    .priority = SW_PRIO_STACKBOTTOM + 1,
    .caller_frame = bottom_caller_frame,
};

struct sw_stepper *
sw_rtos_stepper_new(struct sw_proc *p)
{
    if (p == NULL || p->ops != &rtos_proc_ops)
        return NULL;
    struct rtos_bottom *b = sw_calloc(1, sizeof *b);
    if (b == NULL)
        return NULL;
    b->base.ops = &rtos_bottom_ops;
    b->exit_addr = sw_freertos_exit_addr(to_rp(p)->fr);
    return &b->base;
}
