/* targets/rsp_warm.c -- the next stop's first write, planned from what the last stop read.
 *
 * A process walked at one stop is likely walked at the next one in the same
 * way: the same threads, their stacks near where they were.  At resume the
 * plan keeps each thread's id and the stack bytes its walk read; at the next
 * stop's first read the thread list, every planned thread's 'Hg'/'g', those
 * stacks (the stopped thread's from its expedited SP) and the ranges a
 * library state checks (stop_reads) go out in one write (rsp_stop_fetch).
 * Everything is read after the stop: a guess only chooses addresses, it is
 * never an answer.  Not the per-stop caches themselves (rsp_mem.c, rsp_proc.c).
 */
#include "targets/rsp_proc_internal.h"

#include <string.h>

#include "util/util.h"

/* Below a guessed stack, bytes read in a piece of their own: a thread that
 * is now a few calls deeper than at the last stop still finds its frames
 * cached (a busy loop's callee and a libc call of a few hundred bytes each),
 * and a refused piece loses nothing else. */
#define WARM_MARGIN 1024
/* ... but this much below the stack of a thread whose SP and PC did not
 * move between the last two stops (parked in a system call, as most threads
 * of a server are; a busy loop at one depth keeps its SP, not its PC): the
 * 1 KiB would be read, sent as hex and decoded at every stop for a thread
 * that seldom goes deeper (one that does costs one round trip, then has the
 * whole margin again).  It covers what the sampler compares below SP to
 * take a walk again (sample/sampler.c, SAMPLE_MEMO_BELOW). */
#define WARM_MARGIN_STILL 256
/* A stack kept for the next stop is at most this long: deeper walks read the
 * rest as they go (a few windows of gdbserver's 9 KiB). */
#define WARM_MAX_STACK (64u * 1024)
/* The stopped thread's window starts at its SP rounded down to this, as a
 * read at SP would (rsp_mem.c's TGT_MIN_BLOCK). */
#define WARM_ALIGN 64
/* A stack kept for the next stop ends this far above the highest byte its
 * walk took, not at the end of the windows that held it: a window is as long
 * as a packet allows (9 KiB on gdbserver) and a thread's stack bottom rarely
 * moves, so the rest would be read, sent as hex and decoded at every stop
 * for nothing (8 of 11 KiB a parked thread).  A walk that goes further
 * reads the rest as it goes. */
#define WARM_TAIL 256
/* With a front end's reads planned too (warm.all_regs), the stopped thread's
 * window starts this far below its SP: the door reads as much below it. */
#define WARM_FRONT_BELOW 256
/* ... and its code from this far before its PC to as far past it. */
#define WARM_PC_AROUND 16

bool
tgt_warm_wanted(struct tgt_rsp_proc *rp)
{
    return !rp->no_cache && rp->only_pid == 0 && !rp->terminated && rsp_session_pipelined(rp->s) &&
           !rsp_non_stop(rp->s) && (rp->warm.nthreads > 0 || rp->warm.nreads > 0);
}

/* The stack bytes this stop's cache holds from SP upward: the window that
 * holds SP and the windows that follow it without a gap, as a walk reads
 * them (rsp_mem.c: each window starts where the last one ended).  False
 * when no window holds SP. */
static bool
stack_run(const struct tgt_rsp_proc *rp, sw_addr sp, sw_addr *lo, sw_addr *hi)
{
    const struct tgt_mem_range *w = NULL;
    for (size_t i = 0; i < rp->nmem && w == NULL; i++)
        if (rp->mem[i].data != NULL && sp >= rp->mem[i].addr &&
            sp - rp->mem[i].addr < rp->mem[i].len)
            w = &rp->mem[i];
    if (w == NULL)
        return false;
    *lo = w->addr;
    *hi = w->addr + w->len;
    for (bool grew = true; grew && *hi - *lo < WARM_MAX_STACK;) {
        grew = false;
        for (size_t i = 0; i < rp->nmem; i++) {
            const struct tgt_mem_range *m = &rp->mem[i];
            if (m->data != NULL && m->addr <= *hi && m->addr + m->len > *hi) {
                *hi = m->addr + m->len;
                grew = true;
            }
        }
    }
    sw_addr used = *lo;
    for (size_t i = 0; i < rp->nmem; i++) {
        const struct tgt_mem_range *m = &rp->mem[i];
        if (m->data != NULL && m->addr >= *lo && m->addr < *hi && m->used_hi > used)
            used = m->used_hi;
    }
    if (used > sp) {
        sw_addr end = (used + WARM_TAIL + WARM_ALIGN - 1) & ~(sw_addr)(WARM_ALIGN - 1);
        if (end < *hi)
            *hi = end;
    }
    if (*hi - *lo > WARM_MAX_STACK)
        *hi = *lo + WARM_MAX_STACK;
    return true;
}

/* TID's register of ROLE (its SP, its PC) from what this stop holds (the
 * stop reply's expedited registers,
 * a 'g' read), decoded as rsp_proc.c decodes it; false when that would take
 * a packet. */
static bool
role_held(struct tgt_rsp_proc *rp, sw_tid tid, int role, sw_addr *sp)
{
    const struct arch_desc *a = rp->base.arch;
    const struct tgt_regmap *m = NULL;
    for (size_t i = 0; i < a->nregs && i < TGT_MAX_ROWS && m == NULL; i++)
        if ((int)a->regs[i].role == role && rp->map[i].mapped)
            m = &rp->map[i];
    if (m == NULL)
        return false;
    if (rp->stop.has_thread && (sw_tid)rp->stop.thread.tid == tid)
        for (size_t k = 0; k < rp->stop.nexpedited; k++) {
            const struct rsp_expedited *e = &rp->stop.expedited[k];
            if (e->regnum == m->regnum && e->len >= m->size) {
                *sp = arch_load(a, e->bytes, m->size);
                return true;
            }
        }
    const uint8_t *g = NULL;
    size_t glen = 0;
    size_t row = tgt_rsp_gcache_row(rp, tid);
    if (row < rp->ngcache) {
        g = rp->gcache[row].data;
        glen = rp->gcache[row].len;
    }
    struct rsp_thread_id id = tgt_rsp_thread_id(rp, tid);
    if (g == NULL && rsp_regs_cached(rp->s, id) && rsp_regs_read(rp->s, id, &g, &glen) != 0)
        g = NULL; /* cached: no packet goes out */
    if (g == NULL || m->offset + m->size > glen)
        return false;
    *sp = arch_load(a, g + m->offset, m->size);
    return true;
}

static bool
sp_held(struct tgt_rsp_proc *rp, sw_tid tid, sw_addr *sp)
{
    return role_held(rp, tid, ARCH_ROLE_SP, sp);
}

/* The plan's entry of TID, or NULL. */
static const struct tgt_warm_thread *
planned(const struct tgt_rsp_proc *rp, sw_tid tid)
{
    for (size_t i = 0; i < rp->warm.nthreads; i++)
        if (rp->warm.threads[i].tid == tid)
            return &rp->warm.threads[i];
    return NULL;
}

void
tgt_warm_record(struct tgt_rsp_proc *rp)
{
    if (rp->no_cache || rp->only_pid != 0 || rp->terminated || rp->threads == NULL)
        return; /* nothing listed this stop: the last plan stays */
    struct tgt_warm_thread *t = sw_calloc(rp->nthreads ? rp->nthreads : 1, sizeof *t);
    if (t == NULL)
        return; /* a plan is an optimisation: without one, the next stop reads as it goes */
    for (size_t i = 0; i < rp->nthreads; i++) {
        sw_tid tid = (sw_tid)rp->threads[i].tid;
        sw_addr sp;
        t[i].tid = tid;
        t[i].id = rp->threads[i];
        const struct tgt_warm_thread *old = planned(rp, tid);
        if (sp_held(rp, tid, &sp)) {
            sw_addr pc;
            if (role_held(rp, tid, ARCH_ROLE_PC, &pc)) {
                t[i].sp = sp;
                t[i].pc = pc;
                t[i].have_sp_pc = true;
                t[i].still = old != NULL && old->have_sp_pc && old->sp == sp && old->pc == pc;
            }
            if (stack_run(rp, sp, &t[i].lo, &t[i].hi))
                continue;
        }
        /* Not walked this stop: where its last walk was, if anywhere. */
        if (old != NULL) {
            t[i].lo = old->lo;
            t[i].hi = old->hi;
        }
    }
    sw_free(rp->warm.threads);
    rp->warm.threads = t;
    rp->warm.nthreads = rp->nthreads;
}

/* Append [LO, HI) to RANGES[*K..CAP) in pieces of at most CHUNK bytes. */
static void
add_pieces(struct rsp_mem_range *ranges, size_t *k, size_t cap, sw_addr lo, sw_addr hi,
           size_t chunk)
{
    while (lo < hi && *k < cap) {
        size_t len = hi - lo > chunk ? chunk : (size_t)(hi - lo);
        ranges[(*k)++] = (struct rsp_mem_range){ .addr = lo, .len = len };
        lo += len;
    }
}

/* The stack pieces of thread T: where its last walk read, with a margin
 * below; for the stopped thread, whose SP came with the stop, from there. */
static void
plan_stack(struct tgt_rsp_proc *rp, const struct tgt_warm_thread *t, struct rsp_mem_range *ranges,
           size_t *k, size_t cap, size_t chunk)
{
    sw_addr sp, lo = t->lo, hi = t->hi;
    bool stopped =
        rp->stop.has_thread && (sw_tid)rp->stop.thread.tid == t->tid && sp_held(rp, t->tid, &sp);
    if (stopped) {
        sw_addr below = rp->warm.all_regs && sp > WARM_FRONT_BELOW ? WARM_FRONT_BELOW : 0;
        sw_addr start = (sp - below) & ~(sw_addr)(WARM_ALIGN - 1);
        if (start < lo && lo - start <= WARM_MAX_STACK)
            lo = start; /* deeper than last time: the bytes in between too */
        else if (start < lo || start >= hi)
            lo = start, hi = start + chunk; /* elsewhere: the window a read at SP takes */
        else
            lo = start; /* shallower: nothing below SP is a frame */
        add_pieces(ranges, k, cap, lo, hi, chunk);
        return;
    }
    if (lo == hi)
        return;
    sw_addr margin = t->still ? WARM_MARGIN_STILL : WARM_MARGIN;
    if (lo > margin)
        add_pieces(ranges, k, cap, lo - margin, lo, chunk);
    add_pieces(ranges, k, cap, lo, hi, chunk);
}

int
tgt_warm_fetch(struct tgt_rsp_proc *rp)
{
    struct rsp_thread_id *ids = NULL;
    struct rsp_mem_range *ranges = NULL;
    uint8_t *bytes = NULL;
    size_t nids = 0, k = 0, total = 0;
    int rc = 0;

    rp->warm.due = false;
    size_t chunk = rsp_mem_chunk(rp->s);
    /* Each planned stack: its margin and at most WARM_MAX_STACK of pieces. */
    size_t per = 2 + (WARM_MAX_STACK + chunk - 1) / (chunk ? chunk : 1);
    size_t cap = rp->warm.nthreads * per + rp->warm.nreads + 2;
    ids = sw_calloc(rp->warm.nthreads ? rp->warm.nthreads : 1, sizeof *ids);
    ranges = sw_calloc(cap ? cap : 1, sizeof *ranges);
    if (ids == NULL || ranges == NULL || chunk == 0) {
        rc = chunk == 0 ? 0 : sw_fail(&rp->base.err, SW_ENOMEM, "fetching the stop: out of memory");
        goto out;
    }
    for (size_t i = 0; i < rp->warm.nthreads; i++) {
        const struct tgt_warm_thread *t = &rp->warm.threads[i];
        sw_addr sp;
        /* The stopped thread's registers came with the stop: a 'g' only if
         * its walk needs more than those, as prefetch_threads decides. */
        if (rp->warm.all_regs || !(rp->stop.has_thread && (sw_tid)rp->stop.thread.tid == t->tid &&
                                   sp_held(rp, t->tid, &sp)))
            ids[nids++] = t->id;
        plan_stack(rp, t, ranges, &k, cap, chunk);
    }
    /* A front end reads the code at the stopped thread's PC (gdb: the
     * breakpoint instruction before it): the lines around it too. */
    sw_addr pc;
    if (rp->warm.all_regs && k < cap && rp->stop.has_thread &&
        role_held(rp, (sw_tid)rp->stop.thread.tid, ARCH_ROLE_PC, &pc) && pc > WARM_PC_AROUND)
        add_pieces(ranges, &k, cap, (pc - WARM_PC_AROUND) & ~(sw_addr)(WARM_ALIGN - 1),
                   (pc + WARM_PC_AROUND + WARM_ALIGN - 1) & ~(sw_addr)(WARM_ALIGN - 1), chunk);
    for (size_t i = 0; i < rp->warm.nreads && k < cap; i++)
        if (rp->warm.reads[i].len > 0 && rp->warm.reads[i].len <= chunk)
            ranges[k++] = (struct rsp_mem_range){ .addr = rp->warm.reads[i].addr,
                                                  .len = rp->warm.reads[i].len };
    for (size_t i = 0; i < k; i++)
        total += ranges[i].len;
    bytes = sw_malloc(total ? total : 1);
    if (bytes == NULL) {
        rc = sw_fail(&rp->base.err, SW_ENOMEM, "fetching the stop: out of memory");
        goto out;
    }
    for (size_t i = 0, off = 0; i < k; off += ranges[i].len, i++)
        ranges[i].buf = bytes + off;
    rc = rsp_stop_fetch(rp->s, ids, nids, ranges, k);
    if (rc == SW_EUNSUP) {
        rc = 0; /* this link does not pipeline: each read goes as it comes */
        goto out;
    }
    if (rc < 0) {
        rc = sw_fail(&rp->base.err, rc, "%s", rsp_session_errmsg(rp->s));
        goto out;
    }
    for (size_t i = 0; i < k; i++)
        if (ranges[i].rc == 0 &&
            tgt_rsp_mem_keep(rp, ranges[i].addr, ranges[i].len, ranges[i].buf) < 0) {
            rc = sw_fail(&rp->base.err, SW_ENOMEM, "fetching the stop: out of memory");
            break;
        }
out:
    sw_free(ids);
    sw_free(ranges);
    sw_free(bytes);
    return rc;
}

int
tgt_warm_stop_reads(struct sw_proc *p, const struct sw_mem_req *ranges, size_t n)
{
    struct tgt_rsp_proc *rp = to_rp(p);
    struct sw_mem_req *copy = NULL;
    if (n > 0) {
        copy = sw_calloc(n, sizeof *copy);
        if (copy == NULL)
            return sw_fail(&p->err, SW_ENOMEM,
                           "keeping %zu ranges to read at each stop: out of memory", n);
        for (size_t i = 0; i < n; i++)
            copy[i] = (struct sw_mem_req){ .addr = ranges[i].addr, .len = ranges[i].len };
    }
    sw_free(rp->warm.reads);
    rp->warm.reads = copy;
    rp->warm.nreads = n;
    return 0;
}

void
tgt_warm_fini(struct tgt_rsp_proc *rp)
{
    sw_free(rp->warm.threads);
    sw_free(rp->warm.reads);
    memset(&rp->warm, 0, sizeof rp->warm);
}
