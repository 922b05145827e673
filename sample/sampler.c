/* sample/sampler.c -- sw_sample_run: stop, walk every thread, resume, at a rate.
 *
 * The stops come from ProcDebug's pause (the interrupt), for a QEMU user-mode
 * stub on this host from a signal to one guest thread (targets/qemu_user.c), or
 * on a non-stop link from pausing the threads in two groups; the
 * walks are the walker's, warm from one stop to the next; frame names are cached
 * by address until the library list changes.  Nothing here speaks RSP.
 */
#define _DEFAULT_SOURCE /* clock_nanosleep's TIMER_ABSTIME with -std=c11 */

#include "rspwalk/sampler.h"

#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "rspwalk/errors.h"
#include "rspwalk/libstate.h"
#include "rspwalk/proc.h"
#include "rspwalk/render.h"
#include "rspwalk/rsp.h"
#include "rspwalk/symlookup.h"
#include "rspwalk/target.h"
#include "rspwalk/walker.h"
#include "targets/qemu_user.h"
#include "util/util.h"

/* Stops that do not come, in a row, before the run gives up: one is a slow
 * stub, three a stub that does not stop. */
#define SAMPLE_MAX_FAILED_STOPS 3
/* How often a signal-stopped target's thread list is asked for again: QEMU
 * user mode reports no thread events, and the list costs a round trip a
 * thread. */
#define SAMPLE_THREAD_LIST_US 500000
/* How often a non-stop run's thread list is asked for again, with the
 * threads it knows paused first: gdbserver answers qXfer:threads in
 * non-stop mode with every thread paused (server.cc,
 * handle_qxfer_threads_proper), the very stop this mode spares the threads
 * that run, and gdbserver 13.1 aborts when the process exits during that
 * pause ("unsuspend LWP ..., suspended=-1"); a paused thread cannot exit.
 * A thread that exits between two lists is found gone by its pause. */
#define SAMPLE_NS_LIST_US 100000
/* Stub resyncs in a row (QEMU user: sw_proc_rsp_resync) before a run ends. */
#define SAMPLE_RESYNC_TRIES 4
/* A memo's stack bytes: at most this many (a deeper stack is walked again at
 * every stop), and this many past the outermost frame's SP (the bytes
 * between its CFA and the caller-saved slots a step may read). */
#define SAMPLE_MEMO_MAX   (64u * 1024)
#define SAMPLE_MEMO_ABOVE 64
/* ... and this many below the top frame's SP (x86-64's red zone, where a
 * leaf function may keep a saved register without moving its SP). */
#define SAMPLE_MEMO_BELOW 128
/* Frame names kept by address: a power of two, larger than the distinct
 * frames of a profile that fits on a screen. */
#define SAMPLE_NAME_SLOTS  4096
#define SAMPLE_PROGRESS_MS 200
/* At the maximum rate the target runs between two samples for a time the
 * stub's latency sets, nearly the same every time: a program whose loop
 * takes about as long is then seen at the same few places of it
 * (aliasing; the shares fixture's one-thread profile without it: 64/28/8
 * for 70/20/10).  Each run is lengthened by a random part of a mean
 * sample's duration divided by this, so the places are spread over the
 * loop; the rate drops by about a 2*SAMPLE_MAX_JITTER-th.  (A fourth
 * gave 66.5/25.1/8.4 in one run of six, the direction of no pause; a
 * whole sample did no better than a half: one run of four 3 points off.) */
#define SAMPLE_MAX_JITTER 2
/* gdb's numbers of the signals a stop is asked with (its interrupt) or a
 * debugger's own (a breakpoint): never handed to the program. */
#define SAMPLE_GDB_SIGINT  2
#define SAMPLE_GDB_SIGTRAP 5
/* The calling thread's timer slack during a run: a sleep overshoots by it
 * (Linux's default is 50 us, as long as a pause between two samples at the
 * maximum rate); restored after the run. */
#define SAMPLE_TIMER_SLACK_NS 1000

struct name_slot {
    bool used;
    sw_addr ra;
    unsigned kind;
    bool exact; /* the lookup is at RA itself (top or non-call frame) */
    const char *vname;
    char *function; /* owned */
    char *module;   /* owned; NULL: unknown */
};

/* A thread's last walk and what it started from: its registers and the
 * stack bytes its frames lie in.  A walk is a function of those, of code and
 * of the library list (both kept from one stop to the next by the walker,
 * the list checked at each stop), so at a stop where they are all the same
 * the walk is the same: a parked thread's is taken again, not redone. */
struct walk_memo {
    struct sw_stack stack; /* the last walk; the sample's threads point here */
    bool valid;            /* STACK walked to the bottom from REGS and BYTES */
    /* Every register a walk may read (the initial frame's, and those a
     * frame passes through unsaved, read when a step needs them): by DWARF
     * number, with whether the thread had it. */
    sw_word regs[SW_FRAME_MAX_REGS];
    bool have[SW_FRAME_MAX_REGS];
    sw_addr lo; /* BYTES: [LO, LO + LEN) of target memory */
    size_t len;
    uint8_t *bytes; /* owned: CAP bytes */
    size_t cap;
};

struct known_thread {
    sw_tid tid;
    char label[64];
    size_t task;            /* in the tree; SIZE_MAX until first walked */
    struct walk_memo *memo; /* owned: stable across the array's growth */
    bool parked;            /* THREADS: its last walk was taken again (second group) */
    bool have_last;         /* THREADS: LAST_PC and LAST_SP, its last walk's frame 0 */
    sw_addr last_pc, last_sp;
};

struct run {
    struct sw_walker *w;
    struct sw_proc *p;
    struct rsp_session *s;
    const struct sw_sample_config *cfg;
    struct sw_sample_stats *st;
    struct sw_errbuf *err;

    struct known_thread *threads; /* owned: NTHREADS */
    size_t nthreads, capthreads;
    uint64_t list_us; /* when the thread list was read (signal stops) */
    bool list_stale;

    sw_tid *tids; /* owned: scratch for sw_threads, CAPTIDS */
    size_t captids;
    struct sw_sample_thread *out; /* owned: one per thread of a sample */
    size_t capout;
    size_t *group;         /* owned: THREADS, indices into TIDS of one group, CAPOUT */
    sw_tid *fetch;         /* owned: THREADS, the threads of a group fetched at once, CAPOUT */
    int *sigs;             /* owned: THREADS, the signal each of FETCH is resumed with, CAPOUT */
    bool *gone;            /* owned: THREADS, the threads of OUT that exited before they stopped */
    sw_tid *found_stopped; /* owned: THREADS, the threads stopped when the run began */
    size_t nfound_stopped;
    uint8_t *scratch; /* owned: SAMPLE_MEMO_MAX, a memo's bytes at this stop */

    uint64_t rng;   /* xorshift64 state: the ticks' jitter */
    int resume_sig; /* the program's own signal the last stop came with, for the resume */

    struct name_slot *names; /* owned: SAMPLE_NAME_SLOTS */
    size_t nnames;
    /* The library list the names were taken under: its module count and a
     * hash of names and biases. */
    size_t libs_n;
    uint64_t libs_hash;
    struct sw_tree_frame *path; /* owned: CAPPATH */
    size_t cappath;
};

const char *
sw_sample_stop_name(enum sw_sample_stop stop)
{
    switch (stop) {
    case SW_SAMPLE_STOP_INTERRUPT:
        return "interrupt";
    case SW_SAMPLE_STOP_SIGNAL:
        return "signal";
    case SW_SAMPLE_STOP_THREADS:
        return "threads";
    case SW_SAMPLE_STOP_AUTO:
        break;
    }
    return "auto";
}

static uint64_t
session_rt(const struct run *r)
{
    return r->s ? rsp_session_stats(r->s)->round_trips : 0;
}

/* ---- frame names ------------------------------------------------------------ */

static void
names_clear(struct run *r)
{
    for (size_t i = 0; r->names && i < SAMPLE_NAME_SLOTS; i++) {
        sw_free(r->names[i].function);
        sw_free(r->names[i].module);
        memset(&r->names[i], 0, sizeof r->names[i]);
    }
    r->nnames = 0;
}

/* Drop the names when the library list is not the one they were taken
 * under (a dlopen or dlclose moves code and frees module names); true when
 * it is not. */
static bool
names_check_libs(struct run *r)
{
    struct sw_libstate *ls = sw_walker_libstate(r->w);
    size_t n = sw_libstate_count(ls);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        const struct sw_lib *lib = sw_libstate_lib(ls, i);
        for (const char *c = lib->name; c && *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ull;
        h = (h ^ lib->bias) * 1099511628211ull;
    }
    bool changed = n != r->libs_n || h != r->libs_hash;
    if (changed)
        names_clear(r);
    r->libs_n = n;
    r->libs_hash = h;
    return changed;
}

static uint64_t
name_hash(sw_addr ra, unsigned kind, const char *vname)
{
    uint64_t h = ra * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t)kind * 0xc2b2ae3d27d4eb4full ^ (uint64_t)(uintptr_t)vname;
    return h ^ (h >> 29);
}

/* FR's name and module, as the stack document names them, from the cache
 * or looked up and kept.  Returns 0 or SW_ENOMEM. */
static int
frame_name(struct run *r, const struct sw_frame *fr, const char **fn, const char **mod)
{
    bool exact = fr->top || fr->non_call;
    size_t mask = SAMPLE_NAME_SLOTS - 1;
    size_t i = name_hash(fr->ra, fr->kind, fr->vname) & mask;
    for (;; i = (i + 1) & mask) {
        struct name_slot *sl = &r->names[i];
        if (!sl->used)
            break;
        if (sl->ra == fr->ra && sl->kind == (unsigned)fr->kind && sl->vname == fr->vname &&
            sl->exact == exact) {
            *fn = sl->function;
            *mod = sl->module;
            return 0;
        }
    }
    /* A full table starts over rather than grow: a profile with more
     * distinct frames than slots pays the look-ups again. */
    if (r->nnames >= SAMPLE_NAME_SLOTS / 2) {
        names_clear(r);
        i = name_hash(fr->ra, fr->kind, fr->vname) & mask;
    }
    struct sw_symbol sym;
    bool have = sw_frame_symbol(r->w, fr, &sym) == 0;
    const char *lib = NULL, *m = NULL;
    sw_addr off;
    char pcbuf[160];
    char *name = sw_render_frame_function(fr, have ? &sym : NULL);
    const char *use = name ? name : fr->vname ? fr->vname : have ? sym.name : NULL;
    if (have)
        m = sym.module;
    else if (sw_frame_lib_offset(r->w, fr, &lib, &off) == 0)
        m = lib;
    /* No symbol: MODULE+0xOFFSET, as the merged tree of a snapshot names
     * it (render/stack_json.c), else the pc. */
    if (use == NULL && m != NULL) {
        const char *base = strrchr(m, '/');
        snprintf(pcbuf, sizeof pcbuf, "%.120s+0x%" PRIx64, base ? base + 1 : m, off);
        use = pcbuf;
    } else if (use == NULL) {
        snprintf(pcbuf, sizeof pcbuf, "0x%" PRIx64, fr->ra);
        use = pcbuf;
    }
    struct name_slot *sl = &r->names[i];
    sl->function = sw_strdup(use);
    sl->module = m ? sw_strdup(m) : NULL;
    free(name);
    if (sl->function == NULL || (m && sl->module == NULL)) {
        sw_free(sl->function);
        sw_free(sl->module);
        sl->function = sl->module = NULL;
        return SW_ENOMEM;
    }
    sl->used = true;
    sl->ra = fr->ra;
    sl->kind = fr->kind;
    sl->vname = fr->vname;
    sl->exact = exact;
    r->nnames++;
    *fn = sl->function;
    *mod = sl->module;
    return 0;
}

/* ---- threads ---------------------------------------------------------------- */

static struct known_thread *
thread_find(struct run *r, sw_tid tid)
{
    for (size_t i = 0; i < r->nthreads; i++)
        if (r->threads[i].tid == tid)
            return &r->threads[i];
    return NULL;
}

static struct known_thread *
thread_add(struct run *r, sw_tid tid)
{
    struct known_thread *t = thread_find(r, tid);
    if (t != NULL)
        return t;
    if (r->nthreads == r->capthreads) {
        size_t cap = r->capthreads ? 2 * r->capthreads : 16;
        struct known_thread *n = sw_realloc(r->threads, cap * sizeof *n);
        if (n == NULL)
            return NULL;
        r->threads = n;
        r->capthreads = cap;
    }
    struct walk_memo *m = sw_calloc(1, sizeof *m);
    if (m == NULL)
        return NULL;
    sw_stack_init(&m->stack);
    t = &r->threads[r->nthreads++];
    t->tid = tid;
    t->task = SIZE_MAX;
    t->parked = false;
    t->have_last = false;
    t->memo = m;
    sw_proc_thread_label(r->p, tid, t->label, sizeof t->label);
    return t;
}

/* Room for N threads in a sample: each per-thread array grown to N. */
static int
reserve_out(struct run *r, size_t n)
{
    if (n <= r->capout)
        return 0;
#define RESERVE(field)                                                                             \
    do {                                                                                           \
        void *grown = sw_realloc(r->field, n * sizeof *r->field);                                  \
        if (grown == NULL)                                                                         \
            return SW_ENOMEM;                                                                      \
        r->field = grown;                                                                          \
    } while (0)
    RESERVE(group);
    RESERVE(fetch);
    RESERVE(sigs);
    RESERVE(gone);
    RESERVE(out);
#undef RESERVE
    r->capout = n;
    return 0;
}

/* The threads of this stop into R->tids, *N of them; garbage ids (QEMU
 * lists half-born and exiting threads as p1.ffffffff) left out. */
static int
list_threads(struct run *r, size_t *n)
{
    size_t got = 0;
    for (;;) {
        int rc = sw_threads(r->w, r->tids, r->captids, &got);
        if (rc < 0)
            return sw_fail(r->err, rc, "listing threads: %s", sw_walker_errmsg(r->w));
        if (got <= r->captids)
            break;
        sw_tid *t = sw_realloc(r->tids, got * sizeof *t);
        if (t == NULL)
            return sw_fail(r->err, SW_ENOMEM, "listing %zu threads: out of memory", got);
        r->tids = t;
        r->captids = got;
    }
    size_t k = 0;
    for (size_t i = 0; i < got; i++)
        if (sw_qemu_user_tid_valid(r->tids[i]))
            r->tids[k++] = r->tids[i];
    *n = k;
    return 0;
}

/* ---- walks taken again ------------------------------------------------------ */

static void
memo_free(struct walk_memo *m)
{
    if (m == NULL)
        return;
    sw_stack_fini(&m->stack);
    sw_free(m->bytes);
    sw_free(m);
}

/* The stack bytes a walk of ST depends on: from below its top frame's SP to
 * above its outermost frame's SP and every frame pointer in between.  False
 * when they are more than SAMPLE_MEMO_MAX. */
static bool
memo_span(const struct sw_stack *st, sw_addr *lo, size_t *len)
{
    if (st->n == 0)
        return false;
    sw_addr sp = st->frames[0].sp;
    sw_addr l = sp > SAMPLE_MEMO_BELOW ? sp - SAMPLE_MEMO_BELOW : 0, h = sp;
    for (size_t i = 0; i < st->n; i++) {
        const struct sw_frame *f = &st->frames[i];
        if (f->sp >= l && f->sp - l < SAMPLE_MEMO_MAX && f->sp > h)
            h = f->sp;
        if (f->fp >= l && f->fp - l < SAMPLE_MEMO_MAX && f->fp > h)
            h = f->fp;
    }
    h += SAMPLE_MEMO_ABOVE;
    if (h - l > SAMPLE_MEMO_MAX)
        return false;
    *lo = l;
    *len = (size_t)(h - l);
    return true;
}

/* TID's registers as a walk reads them, into REGS and HAVE (by DWARF number).
 * Returns 0, or a link error. */
static int
thread_regs(struct run *r, sw_tid tid, sw_word *regs, bool *have)
{
    const struct arch_desc *a = r->p->arch;
    memset(have, 0, SW_FRAME_MAX_REGS * sizeof *have);
    for (size_t i = 0; i < a->nregs; i++) {
        int dw = a->regs[i].dwarf;
        if (dw < 0 || dw >= SW_FRAME_MAX_REGS)
            continue;
        int rc = r->p->ops->read_reg(r->p, tid, (unsigned)dw, &regs[dw]);
        if (rc < 0 && sw_is_link_error(rc))
            return rc;
        have[dw] = rc == 0;
    }
    return 0;
}

/* Whether thread KT's last walk holds at this stop: it reached the bottom,
 * and the thread has the same registers over the same stack bytes.  Any
 * failure says no: the thread is walked. */
static bool
memo_holds(struct run *r, struct known_thread *kt)
{
    struct walk_memo *m = kt->memo;
    sw_word regs[SW_FRAME_MAX_REGS];
    bool have[SW_FRAME_MAX_REGS];
    if (!m->valid || thread_regs(r, kt->tid, regs, have) < 0)
        return false;
    for (unsigned i = 0; i < SW_FRAME_MAX_REGS; i++)
        if (have[i] != m->have[i] || (have[i] && regs[i] != m->regs[i]))
            return false;
    return r->p->ops->read_mem(r->p, m->lo, r->scratch, m->len) == 0 &&
           memcmp(r->scratch, m->bytes, m->len) == 0;
}

/* Keep KT's walk (in its memo's stack) with the registers and the stack
 * bytes it was taken from; a walk that cannot be kept is walked again next
 * time. */
static void
memo_keep(struct run *r, struct known_thread *kt)
{
    struct walk_memo *m = kt->memo;
    sw_addr lo;
    size_t len;
    m->valid = false;
    if (m->stack.end != SW_END_BOTTOM || !memo_span(&m->stack, &lo, &len))
        return;
    if (len > m->cap) {
        uint8_t *b = sw_realloc(m->bytes, len);
        if (b == NULL)
            return;
        m->bytes = b;
        m->cap = len;
    }
    if (thread_regs(r, kt->tid, m->regs, m->have) < 0 ||
        r->p->ops->read_mem(r->p, lo, m->bytes, len) < 0)
        return;
    m->lo = lo;
    m->len = len;
    m->valid = true;
}

static void
memo_forget_all(struct run *r)
{
    for (size_t i = 0; i < r->nthreads; i++)
        r->threads[i].memo->valid = false;
}

/* ---- one sample ----------------------------------------------------------- */

static int
tree_add(struct run *r, struct known_thread *kt, const struct sw_stack *st)
{
    struct sw_tree *t = r->cfg->tree;
    int rc;
    if (kt->task == SIZE_MAX &&
        (rc = sw_tree_add_task(t, r->cfg->target, r->p->pid, kt->label, &kt->task)) < 0)
        return rc;
    if (st->n > r->cappath) {
        struct sw_tree_frame *np = sw_realloc(r->path, st->n * sizeof *np);
        if (np == NULL)
            return SW_ENOMEM;
        r->path = np;
        r->cappath = st->n;
    }
    for (size_t i = 0; i < st->n; i++) {
        const struct sw_frame *fr = &st->frames[st->n - 1 - i];
        if ((rc = frame_name(r, fr, &r->path[i].function, &r->path[i].module)) < 0)
            return rc;
        r->path[i].pc = fr->ra;
    }
    return sw_tree_add_path(t, kt->task, r->path, st->n, 1);
}

/* The sample just walked (N threads in R->out, taken at T_US, from round
 * trip RT0 on; MSG: its first failure, or "") to the callback, counted. */
static void
hand_out(struct run *r, size_t n, uint64_t t_us, uint64_t rt0, const char *msg)
{
    if (r->cfg->on_sample != NULL) {
        struct sw_sample smp = { .index = r->st->samples,
                                 .time_us = t_us,
                                 .round_trips = session_rt(r) - rt0,
                                 .nthreads = n,
                                 .threads = r->out,
                                 .error = msg[0] ? msg : NULL };
        r->cfg->on_sample(r->cfg->arg, &smp);
    }
    r->st->samples++;
}

/* Walk the N threads of R->tids, of which only STOPPED_ONLY (when not
 * SW_TID_DEFAULT) is stopped; hand the sample out. */
static int
walk_sample(struct run *r, size_t n, bool all_stopped, uint64_t t_us, uint64_t rt0)
{
    int rc = reserve_out(r, n ? n : 1), status = 0;
    char msg[256] = "";
    if (rc < 0)
        return sw_fail(r->err, rc, "sampling %zu threads: out of memory", n);
    if (names_check_libs(r))
        memo_forget_all(r);
    bool ahead = false;
    for (size_t i = 0; i < n; i++) {
        sw_tid tid = r->tids[i];
        struct known_thread *kt = thread_add(r, tid);
        if (kt == NULL)
            return sw_fail(r->err, SW_ENOMEM, "sampling thread %" PRIu64 ": out of memory", tid);
        struct sw_sample_thread *o = &r->out[i];
        o->tid = tid;
        o->label = kt->label;
        o->stack = NULL;
        if (!all_stopped && tid != r->p->default_tid) {
            o->state = SW_SAMPLE_RUNNING;
            r->st->threads_running++;
            continue;
        }
        /* As the stack document walks: the threads after the stopped one
         * fetched together (nothing to send on a warm gdbserver stop). */
        if (all_stopped && !ahead && tid != r->p->default_tid && n - i >= 2) {
            ahead = true;
            if ((rc = sw_walker_prefetch(r->w, r->tids + i, n - i)) < 0 && status == 0) {
                snprintf(msg, sizeof msg, "fetching %zu threads ahead: %s", n - i,
                         sw_walker_errmsg(r->w));
            }
        }
        /* A thread other than the one that reported the stop (whose stack
         * window this stop's fetch starts at its SP, none of the bytes below)
         * whose registers and stack bytes are those of its last walk: that
         * walk again.  Else walked, and kept for the next stop. */
        struct sw_stack *st = &kt->memo->stack;
        bool memo = all_stopped && tid != r->p->default_tid;
        r->st->walks++;
        if (memo && memo_holds(r, kt)) {
            r->st->walks_reused++;
            rc = 0;
        } else {
            rc = sw_walk_stack(r->w, tid, st);
            if (rc == 0 && memo)
                memo_keep(r, kt);
            else
                kt->memo->valid = false;
        }
        if (rc < 0 || st->end == SW_END_LINK) {
            o->state = SW_SAMPLE_FAILED;
            r->st->walks_failed++;
            if (msg[0] == '\0')
                snprintf(msg, sizeof msg, "thread %s: %s", kt->label, sw_walker_errmsg(r->w));
            if (status == 0)
                status = rc < 0 ? rc : SW_ECONN;
            continue;
        }
        o->state = SW_SAMPLE_WALKED;
        o->stack = st;
        r->st->walks_bottom += st->end == SW_END_BOTTOM;
        if (r->cfg->tree != NULL && (rc = tree_add(r, kt, st)) < 0)
            return sw_fail(r->err, rc, "adding thread %s to the profile: out of memory", kt->label);
    }
    hand_out(r, n, t_us, rt0, msg);
    /* A link that failed under a walk ends the run, as does memory that ran
     * out; a walk that failed alone (a thread gone meanwhile) does not.  A
     * stub's error under QEMU user is its stub out of step (the caller
     * brings it back). */
    if (status == SW_ECONN || status == SW_ETIMEDOUT || status == SW_EPROTO ||
        status == SW_EEXITED || status == SW_ENOMEM ||
        (status == SW_ESTUB && r->st->stop == SW_SAMPLE_STOP_SIGNAL))
        return sw_fail(r->err, status, "%s", msg);
    return 0;
}

/* ---- a thread at a time (non-stop) ------------------------------------------- */

/* Why a sample's thread failed, the first one kept in MSG. */
static void
thread_failed(struct run *r, struct sw_sample_thread *o, char *msg, size_t size, const char *what,
              const char *why)
{
    o->state = SW_SAMPLE_FAILED;
    o->stack = NULL;
    r->st->walks_failed++;
    if (msg[0] == '\0')
        snprintf(msg, size, "thread %s: %s: %s", o->label, what, why);
}

/* A failure of the link or the target's end, which ends the run; else 0
 * (the thread alone failed: gone meanwhile). */
static int
run_ending(struct run *r, int rc, const char *what, const char *label)
{
    if (r->p->debug->is_terminated(r->p))
        return sw_fail(r->err, SW_EEXITED, "%s thread %s: %s", what, label, sw_proc_errmsg(r->p));
    if (sw_is_link_error(rc) || rc == SW_ENOMEM)
        return sw_fail(r->err, rc, "%s thread %s: %s", what, label, sw_proc_errmsg(r->p));
    return 0;
}

/* Read the stack bytes kept for the walks of the K threads of GROUP
 * (indices into R->tids; SIZE_MAX: none) in one batch, into the stop's
 * cache, where memo_holds finds them.  Returns 0 or a failure code. */
static int
fetch_memos(struct run *r, const size_t *group, size_t k)
{
    struct sw_mem_req *reqs = sw_calloc(k ? k : 1, sizeof *reqs);
    size_t n = 0, total = 0;
    if (reqs == NULL)
        return SW_ENOMEM;
    for (size_t g = 0; g < k; g++) {
        struct walk_memo *m = group[g] == SIZE_MAX ? NULL : thread_find(r, r->tids[group[g]])->memo;
        if (m != NULL && m->valid) {
            reqs[n++] = (struct sw_mem_req){ .addr = m->lo, .len = m->len };
            total += m->len;
        }
    }
    uint8_t *buf = n ? sw_malloc(total) : NULL;
    int rc = 0;
    if (n && buf == NULL)
        rc = SW_ENOMEM;
    for (size_t i = 0, off = 0; rc == 0 && i < n; off += reqs[i].len, i++)
        reqs[i].buf = buf + off;
    if (rc == 0 && n > 0 && r->p->ops->read_mem_batch != NULL)
        rc = r->p->ops->read_mem_batch(r->p, reqs, n);
    sw_free(buf);
    sw_free(reqs);
    return rc;
}

/* The label of the first thread of GROUP (K indices into R->out; SIZE_MAX:
 * none) for a message about the whole group. */
static const char *
group_label(const struct run *r, const size_t *group, size_t k)
{
    for (size_t g = 0; g < k; g++)
        if (group[g] != SIZE_MAX)
            return r->out[group[g]].label;
    return "(none left)";
}

/* One sample of the N threads of R->tids on a non-stop link: the threads
 * not parked, then the parked ones, each group paused one by one, walked,
 * and resumed (with the program's own signal a thread stopped at by
 * itself).  *BUSY_US: how long the first group was stopped. */
static int
sample_by_thread(struct run *r, size_t n, uint64_t t_us, uint64_t rt0, uint64_t *busy_us)
{
    const struct sw_procdebug_ops *dbg = r->p->debug;
    char msg[256] = "";
    int rc = reserve_out(r, n ? n : 1);
    if (rc < 0)
        return sw_fail(r->err, rc, "sampling %zu threads: out of memory", n);
    if (names_check_libs(r))
        memo_forget_all(r);
    for (size_t i = 0; i < n; i++) {
        struct known_thread *kt = thread_add(r, r->tids[i]);
        if (kt == NULL)
            return sw_fail(r->err, SW_ENOMEM, "sampling thread %" PRIu64 ": out of memory",
                           r->tids[i]);
        r->out[i] = (struct sw_sample_thread){ .tid = r->tids[i], .state = SW_SAMPLE_FAILED };
        r->gone[i] = false;
    }
    for (size_t i = 0; i < n; i++)
        r->out[i].label = thread_find(r, r->tids[i])->label;
    /* The groups, fixed before either is walked: GROUP holds the threads
     * that ran, then from NBUSY on the parked ones. */
    size_t nbusy = 0;
    for (size_t i = 0; i < n; i++)
        if (!thread_find(r, r->tids[i])->parked)
            r->group[nbusy++] = i;
    for (size_t i = 0, k = nbusy; i < n; i++)
        if (thread_find(r, r->tids[i])->parked)
            r->group[k++] = i;
    *busy_us = 0;
    for (int parked = 0; parked < 2; parked++) {
        size_t *group = r->group + (parked ? nbusy : 0), k = parked ? n - nbusy : nbusy;
        if (k == 0)
            continue;
        uint64_t t1 = sw_now_us();
        /* Paused with one request; when that fails short of the link or
         * the target's end (a thread gone meanwhile), one by one, and
         * SIZE_MAX marks a thread that could not be. */
        for (size_t g = 0; g < k; g++)
            r->fetch[g] = r->tids[group[g]];
        if ((rc = sw_proc_rsp_pause_threads(r->p, r->fetch, k)) < 0 &&
            (rc = run_ending(r, rc, "stopping", r->out[group[0]].label)) < 0)
            return rc;
        /* A thread that exited since the list is not in this sample, as if
         * listed after it: found gone by the pause, or by the one that
         * follows alone. */
        for (size_t g = 0; g < k; g++)
            if (sw_proc_rsp_thread_gone(r->p, r->tids[group[g]])) {
                r->gone[group[g]] = true;
                group[g] = SIZE_MAX;
            }
        for (size_t g = 0; g < k; g++) {
            if (group[g] == SIZE_MAX)
                continue;
            sw_tid tid = r->tids[group[g]];
            if (sw_proc_rsp_thread_stopped(r->p, tid))
                continue; /* stopped by itself (a signal): walked as it is */
            if ((rc = dbg->pause(r->p, tid)) == 0)
                continue;
            if (sw_proc_rsp_thread_gone(r->p, tid)) {
                r->gone[group[g]] = true;
                group[g] = SIZE_MAX;
                continue;
            }
            const char *label = r->out[group[g]].label;
            if ((rc = run_ending(r, rc, "stopping", label)) < 0)
                return rc;
            thread_failed(r, &r->out[group[g]], msg, sizeof msg, "stopping", sw_proc_errmsg(r->p));
            group[g] = SIZE_MAX;
        }
        /* The parked ones' kept stack bytes (what their walks are taken
         * again over) in one write: then their windows are not read. */
        if (parked && (rc = fetch_memos(r, group, k)) < 0 &&
            (rc = run_ending(r, rc, "fetching", group_label(r, group, k))) < 0)
            return rc;
        /* Their registers and stacks in one write, then in one more. */
        size_t nfetch = 0;
        for (size_t g = 0; g < k; g++)
            if (group[g] != SIZE_MAX)
                r->fetch[nfetch++] = r->tids[group[g]];
        if (nfetch > 0 && (rc = sw_walker_prefetch(r->w, r->fetch, nfetch)) < 0 &&
            (rc = run_ending(r, rc, "fetching", group_label(r, group, k))) < 0)
            return rc;
        for (size_t g = 0; g < k; g++) {
            if (group[g] == SIZE_MAX)
                continue;
            struct sw_sample_thread *o = &r->out[group[g]];
            struct known_thread *kt = thread_find(r, o->tid);
            struct sw_stack *st = &kt->memo->stack;
            r->st->walks++;
            /* A parked thread's last walk is taken again when it holds; a
             * thread that ran is walked, and parked from the next sample on
             * when the walk is its last one again. */
            if (parked && memo_holds(r, kt)) {
                r->st->walks_reused++;
                rc = 0;
            } else {
                rc = sw_walk_stack(r->w, o->tid, st);
                /* Parked from the next sample on when its PC and SP are
                 * those of its last walk (the second group checks the
                 * rest); only then are its registers and stack bytes
                 * kept, which costs reads while it is stopped. */
                bool still = rc == 0 && st->n > 0 && kt->have_last &&
                             st->frames[0].ra == kt->last_pc && st->frames[0].sp == kt->last_sp;
                kt->have_last = rc == 0 && st->n > 0;
                if (kt->have_last) {
                    kt->last_pc = st->frames[0].ra;
                    kt->last_sp = st->frames[0].sp;
                }
                kt->memo->valid = false;
                if (still)
                    memo_keep(r, kt);
                kt->parked = still && kt->memo->valid;
            }
            if (rc < 0 || st->end == SW_END_LINK) {
                kt->parked = false;
                if (rc < 0 && (rc = run_ending(r, rc, "walking", o->label)) < 0)
                    return rc;
                thread_failed(r, o, msg, sizeof msg, "walking", sw_walker_errmsg(r->w));
                continue;
            }
            o->state = SW_SAMPLE_WALKED;
            o->stack = st;
            r->st->walks_bottom += st->end == SW_END_BOTTOM;
            if (r->cfg->tree != NULL && (rc = tree_add(r, kt, st)) < 0)
                return sw_fail(r->err, rc, "adding thread %s to the profile: out of memory",
                               kt->label);
        }
        /* Resumed with one request (each with the program's own signal it
         * stopped at by itself), else one by one. */
        size_t nres = 0;
        for (size_t g = 0; g < k; g++) {
            if (group[g] == SIZE_MAX)
                continue;
            sw_tid tid = r->tids[group[g]];
            int sig = sw_proc_rsp_thread_signal(r->p, tid);
            if (sig == SAMPLE_GDB_SIGINT || sig == SAMPLE_GDB_SIGTRAP)
                sig = 0;
            r->st->signals_delivered += sig != 0;
            r->fetch[nres] = tid;
            r->sigs[nres++] = sig;
        }
        if ((rc = sw_proc_rsp_resume_threads(r->p, r->fetch, r->sigs, nres)) < 0) {
            if ((rc = run_ending(r, rc, "resuming", group_label(r, group, k))) < 0)
                return rc;
            for (size_t g = 0; g < nres; g++)
                if (sw_proc_rsp_thread_stopped(r->p, r->fetch[g]) &&
                    (rc = dbg->resume(r->p, r->fetch[g], r->sigs[g])) < 0 &&
                    (rc = run_ending(r, rc, "resuming", thread_find(r, r->fetch[g])->label)) < 0)
                    return rc;
        }
        if (!parked)
            *busy_us = sw_now_us() - t1;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!r->gone[i])
            r->out[m++] = r->out[i];
    hand_out(r, m, t_us, rt0, msg);
    return 0;
}

/* ---- stopping and resuming -------------------------------------------------- */

static int
resume(struct run *r)
{
    int sig = r->resume_sig;
    r->resume_sig = 0;
    int rc = r->p->debug->resume(r->p, SW_TID_DEFAULT, sig);
    if (rc < 0)
        return sw_fail(r->err, rc, "resuming: %s", sw_proc_errmsg(r->p));
    return 0;
}

/* The stop just taken came with a signal of the program's own (a timer, a
 * kill from elsewhere, a fault) unless it is the interrupt's SIGINT or a
 * SIGTRAP (gdb's defaults: neither passed): the next resume delivers it,
 * so that sampling does not take signals from the program. */
static void
keep_signal(struct run *r)
{
    int sig = sw_proc_rsp_stop_signal(r->p);
    if (sig != 0 && sig != SAMPLE_GDB_SIGINT && sig != SAMPLE_GDB_SIGTRAP) {
        r->resume_sig = sig;
        r->st->signals_delivered++;
    }
}

static void
sleep_until(uint64_t when_us)
{
    struct timespec ts = { .tv_sec = (time_t)(when_us / 1000000),
                           .tv_nsec = (long)(when_us % 1000000) * 1000 };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
        ;
}

/* Stop the target: 0 when it stopped, SW_ETIMEDOUT when the stop did not
 * come (the target runs on), else a failure with the message in R->err. */
static int
stop(struct run *r)
{
    int rc;
    if (r->st->stop == SW_SAMPLE_STOP_INTERRUPT) {
        rc = r->p->debug->pause(r->p, SW_TID_DEFAULT);
        if (rc < 0)
            sw_fail(r->err, rc, "stopping: %s", sw_proc_errmsg(r->p));
        return rc;
    }
    /* One guest thread stopped by a signal (the library picks one on a CPU
     * and keeps QEMU's stub in step). */
    uint64_t resyncs0 = sw_proc_rsp_resyncs(r->p);
    rc = sw_proc_rsp_signal_stop(r->p, SW_TID_DEFAULT);
    r->st->resyncs += sw_proc_rsp_resyncs(r->p) - resyncs0;
    if (rc < 0)
        sw_fail(r->err, rc, "stopping with a signal: %s", sw_proc_errmsg(r->p));
    return rc;
}

/* A random number in [0, N) (N > 0), uniform enough for jitter. */
static uint64_t
rand_below(struct run *r, uint64_t n)
{
    r->rng ^= r->rng << 13;
    r->rng ^= r->rng >> 7;
    r->rng ^= r->rng << 17;
    return r->rng % n;
}

/* The anti-aliasing pause, slept: a sampler waiting it out on the clock
 * takes a core the stub needs meanwhile to resume the program's threads
 * (docs/design.md, "Sampling: where a sample's time goes"). */
static void
jitter_pause(uint64_t us)
{
    sleep_until(sw_now_us() + us);
}

/* Until the next tick: a PERIOD apart on average (*NEXT: the next one's
 * start), each placed at random within its period so that a periodic
 * program is not seen at the same phase each time (aliasing); at the
 * maximum rate (PERIOD 0), a random pause of up to a mean sample's length
 * (SAMPLE_MAX_JITTER). */
static void
wait_tick(struct run *r, uint64_t period, uint64_t *next)
{
    if (period) {
        uint64_t now = sw_now_us(), at = *next + rand_below(r, period);
        if (at > now)
            sleep_until(at);
        else if (now - *next > period) { /* behind: skip, never burst to catch up */
            r->st->late_ticks += (now - *next) / period;
            *next = now;
        }
        *next += period;
    } else if (r->st->samples > 0) {
        uint64_t part = r->st->stopped_us / r->st->samples / SAMPLE_MAX_JITTER;
        if (part > 0)
            jitter_pause(rand_below(r, part));
    }
}

static bool
done(const struct run *r, uint64_t t0)
{
    const struct sw_sample_config *c = r->cfg;
    if (c->cancel != NULL && *c->cancel)
        return true;
    if (c->max_samples && r->st->samples >= c->max_samples)
        return true;
    return c->seconds > 0 && (double)(sw_now_us() - t0) >= c->seconds * 1e6;
}

/* The thread list for a sample: every stop on an all-stop stub (a warm
 * gdbserver stop has it already); on a signal-stopped QEMU, the list kept
 * and read again every SAMPLE_THREAD_LIST_US, when a thread was gone or the
 * stop came from a thread not in it. */
static int
sample_threads(struct run *r, size_t *n)
{
    int rc;
    if (r->st->stop == SW_SAMPLE_STOP_INTERRUPT)
        return list_threads(r, n);
    uint64_t now = sw_now_us();
    if (r->list_stale || now - r->list_us >= SAMPLE_THREAD_LIST_US ||
        thread_find(r, r->p->default_tid) == NULL) {
        if ((rc = list_threads(r, n)) < 0)
            return rc;
        /* The threads that left are no longer signalled. */
        size_t k = 0;
        for (size_t i = 0; i < r->nthreads; i++) {
            bool listed = false;
            for (size_t j = 0; j < *n && !listed; j++)
                listed = r->tids[j] == r->threads[i].tid;
            if (listed)
                r->threads[k++] = r->threads[i];
            else
                memo_free(r->threads[i].memo);
        }
        r->nthreads = k;
        for (size_t j = 0; j < *n; j++)
            if (thread_add(r, r->tids[j]) == NULL)
                return sw_fail(r->err, SW_ENOMEM, "listing threads: out of memory");
        r->list_us = now;
        r->list_stale = false;
        return 0;
    }
    if (r->captids < r->nthreads) {
        sw_tid *t = sw_realloc(r->tids, r->nthreads * sizeof *t);
        if (t == NULL)
            return sw_fail(r->err, SW_ENOMEM, "listing threads: out of memory");
        r->tids = t;
        r->captids = r->nthreads;
    }
    for (size_t i = 0; i < r->nthreads; i++)
        r->tids[i] = r->threads[i].tid;
    *n = r->nthreads;
    return 0;
}

static void
run_free(struct run *r)
{
    names_clear(r);
    sw_free(r->names);
    for (size_t i = 0; i < r->nthreads; i++)
        memo_free(r->threads[i].memo);
    sw_free(r->scratch);
    sw_free(r->out);
    sw_free(r->group);
    sw_free(r->fetch);
    sw_free(r->sigs);
    sw_free(r->gone);
    sw_free(r->found_stopped);
    sw_free(r->tids);
    sw_free(r->threads);
    sw_free(r->path);
}

static int
choose_stop(struct run *r)
{
    enum sw_sample_stop want = r->cfg->stop;
    const char *why = "";
    bool qemu = sw_proc_rsp_qemu_user(r->p, &why);
    bool non_stop = sw_proc_rsp_non_stop(r->p);
    if (want == SW_SAMPLE_STOP_AUTO)
        want = qemu       ? SW_SAMPLE_STOP_SIGNAL
               : non_stop ? SW_SAMPLE_STOP_THREADS
                          : SW_SAMPLE_STOP_INTERRUPT;
    if (want == SW_SAMPLE_STOP_THREADS && !non_stop)
        return sw_fail(r->err, SW_EUNSUP,
                       "stopping a thread at a time: the link is in all-stop mode (non-stop: "
                       "rsp_session_config.non_stop, rspwalk --non-stop)");
    if (want == SW_SAMPLE_STOP_SIGNAL && !qemu)
        return sw_fail(r->err, SW_EUNSUP,
                       "stopping with a signal: the stub is not a QEMU user-mode process on this "
                       "host (%s)",
                       why);
    r->st->stop = want;
    return 0;
}

/* The run on a non-stop link (SW_SAMPLE_STOP_THREADS): every thread
 * resumed, sampled a thread at a time, and at the end the threads that
 * were stopped at the start paused again, the others left running. */
static int
run_by_thread(struct run *r, uint64_t period)
{
    const struct sw_procdebug_ops *dbg = r->p->debug;
    size_t n;
    int rc = list_threads(r, &n);
    if (rc < 0)
        return rc;
    r->found_stopped = sw_calloc(n ? n : 1, sizeof *r->found_stopped);
    if (r->found_stopped == NULL)
        return sw_fail(r->err, SW_ENOMEM, "sampling: out of memory");
    for (size_t i = 0; i < n; i++)
        if (sw_proc_rsp_thread_stopped(r->p, r->tids[i]))
            r->found_stopped[r->nfound_stopped++] = r->tids[i];
    uint64_t progress_us =
        1000 * (uint64_t)(r->cfg->progress_ms ? r->cfg->progress_ms : SAMPLE_PROGRESS_MS);
    uint64_t rt_start = session_rt(r), t0 = sw_now_us(), next = t0, last_progress = t0;
    if (r->nfound_stopped > 0 && (rc = resume(r)) < 0)
        return rc;
    uint64_t listed = t0;
    while (!done(r, t0)) {
        wait_tick(r, period, &next);
        uint64_t rt0 = session_rt(r), ts = sw_now_us(), busy_us = 0;
        if (ts - listed >= SAMPLE_NS_LIST_US) {
            if (n > 0 && (rc = sw_proc_rsp_pause_threads(r->p, r->tids, n)) < 0 &&
                (rc = run_ending(r, rc, "stopping", "before listing")) < 0)
                break;
            if ((rc = list_threads(r, &n)) < 0)
                break;
            listed = ts;
            r->st->stopped_us += sw_now_us() - ts; /* the sample's own stop follows */
        }
        if ((rc = sample_by_thread(r, n, ts - t0, rt0, &busy_us)) < 0)
            break;
        /* The threads found gone are not asked for again. */
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (!r->gone[i])
                r->tids[k++] = r->tids[i];
        n = k;
        r->st->stopped_us += busy_us;
        if (r->cfg->progress != NULL && sw_now_us() - last_progress >= progress_us) {
            last_progress = sw_now_us();
            r->st->elapsed_us = last_progress - t0;
            r->st->round_trips += session_rt(r) - rt_start;
            rt_start = session_rt(r);
            r->cfg->progress(r->cfg->arg, r->st);
        }
    }
    /* Left as found: the threads stopped at the start stopped again (those
     * still there), every other one running. */
    if (!dbg->is_terminated(r->p) && rc != SW_ECONN && rc != SW_EPROTO) {
        struct sw_errbuf first = *r->err;
        for (size_t i = 0; i < r->nfound_stopped; i++) {
            sw_tid tid = r->found_stopped[i];
            int rc2 = sw_proc_rsp_thread_stopped(r->p, tid) ? 0 : dbg->pause(r->p, tid);
            if (rc2 < 0 && rc == 0 && (sw_is_link_error(rc2) || dbg->is_terminated(r->p)))
                rc = sw_fail(r->err, rc2, "stopping thread %" PRIu64 " again: %s", tid,
                             sw_proc_errmsg(r->p));
        }
        if (rc < 0 && first.msg[0] != '\0')
            *r->err = first;
    }
    r->st->elapsed_us = sw_now_us() - t0;
    r->st->round_trips += session_rt(r) - rt_start;
    return rc;
}

int
sw_sample_run(struct sw_walker *w, const struct sw_sample_config *cfg,
              struct sw_sample_stats *stats, struct sw_errbuf *err)
{
    static const struct sw_sample_config defaults;
    struct sw_sample_stats local;
    struct sw_errbuf errlocal = { 0 };
    struct run r = { .w = w,
                     .p = sw_walker_proc(w),
                     .cfg = cfg ? cfg : &defaults,
                     .st = stats ? stats : &local,
                     .err = err ? err : &errlocal };
    int rc = 0;

    memset(r.st, 0, sizeof *r.st);
    r.s = sw_proc_rsp_session(r.p);
    if (r.p->debug == NULL)
        return sw_fail(r.err, SW_EUNSUP, "sampling: the target cannot be stopped and resumed");
    if (r.p->debug->is_terminated(r.p))
        return sw_fail(r.err, SW_EEXITED, "sampling: the target has exited");
    if (!(r.cfg->hz >= 0) || !(r.cfg->seconds >= 0))
        return sw_fail(r.err, SW_EINVAL, "sampling: a negative rate or duration");
    if ((rc = choose_stop(&r)) < 0)
        return rc;
    r.names = sw_calloc(SAMPLE_NAME_SLOTS, sizeof *r.names);
    r.scratch = sw_malloc(SAMPLE_MEMO_MAX);
    if (r.names == NULL || r.scratch == NULL) {
        run_free(&r);
        return sw_fail(r.err, SW_ENOMEM, "sampling: out of memory");
    }

    if (r.st->stop == SW_SAMPLE_STOP_THREADS) {
        uint64_t period = r.cfg->hz > 0 ? (uint64_t)(1e6 / r.cfg->hz + 0.5) : 0;
        r.rng = sw_now_us() * 0x9e3779b97f4a7c15ull | 1;
        int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
        if (slack >= 0)
            prctl(PR_SET_TIMERSLACK, SAMPLE_TIMER_SLACK_NS, 0, 0, 0);
        rc = run_by_thread(&r, period);
        if (slack > 0)
            prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
        run_free(&r);
        return rc;
    }
    /* An all-stop link without a session (a test's fake) counts as stopped. */
    bool was_stopped = r.s == NULL || sw_proc_rsp_thread_stopped(r.p, SW_TID_DEFAULT);
    bool running = !was_stopped;
    uint64_t period = r.cfg->hz > 0 ? (uint64_t)(1e6 / r.cfg->hz + 0.5) : 0;
    uint64_t progress_us =
        1000 * (uint64_t)(r.cfg->progress_ms ? r.cfg->progress_ms : SAMPLE_PROGRESS_MS);
    uint64_t rt_start = session_rt(&r), t0 = sw_now_us(), next = t0, last_progress = t0;
    r.rng = t0 * 0x9e3779b97f4a7c15ull | 1;
    int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    if (slack >= 0)
        prctl(PR_SET_TIMERSLACK, SAMPLE_TIMER_SLACK_NS, 0, 0, 0);
    unsigned failed_in_row = 0, resyncs_in_row = 0;

    /* The signal stops need the guest threads to aim at: the list of the
     * stop the run starts from, or of the first one. */
    if (r.st->stop == SW_SAMPLE_STOP_SIGNAL && was_stopped) {
        size_t n;
        if ((rc = sample_threads(&r, &n)) < 0)
            goto out;
    }
    while (!done(&r, t0)) {
        if (!running) {
            if ((rc = resume(&r)) < 0)
                goto out;
            running = true;
        }
        wait_tick(&r, period, &next);
        uint64_t rt0 = session_rt(&r), ts = sw_now_us();
        rc = stop(&r);
        if (rc == SW_ETIMEDOUT && ++failed_in_row < SAMPLE_MAX_FAILED_STOPS) {
            r.st->stops_failed++;
            continue; /* the target runs on: try at the next tick */
        }
        if (rc < 0) {
            if (rc == SW_ETIMEDOUT) {
                char last[sizeof r.err->msg];
                snprintf(last, sizeof last, "%s", r.err->msg);
                sw_fail(r.err, rc, "%s (%u stops in a row did not come)", last,
                        SAMPLE_MAX_FAILED_STOPS);
                r.st->stops_failed++;
            }
            goto out;
        }
        failed_in_row = 0;
        running = false;
        keep_signal(&r);
        size_t n;
        if ((rc = sample_threads(&r, &n)) < 0 ||
            (rc = walk_sample(&r, n, r.st->stop == SW_SAMPLE_STOP_INTERRUPT, ts - t0, rt0)) < 0) {
            /* Under QEMU user, a reply that makes no sense is the stub out
             * of step (stop): brought back, the run goes on. */
            bool step = rc == SW_EPROTO || rc == SW_ESTUB || rc == SW_ETIMEDOUT;
            if (r.st->stop != SW_SAMPLE_STOP_SIGNAL || !step ||
                ++resyncs_in_row > SAMPLE_RESYNC_TRIES)
                goto out;
            char why[sizeof r.err->msg];
            snprintf(why, sizeof why, "%s", r.err->msg);
            uint64_t resyncs0 = sw_proc_rsp_resyncs(r.p);
            rc = sw_proc_rsp_resync(r.p, why);
            r.st->resyncs += sw_proc_rsp_resyncs(r.p) - resyncs0;
            if (rc < 0) {
                sw_fail(r.err, rc, "%s", sw_proc_errmsg(r.p));
                goto out;
            }
            r.err->msg[0] = '\0';
            running = true;
            continue;
        }
        resyncs_in_row = 0;
        r.st->stopped_us += sw_now_us() - ts;
        if (r.cfg->progress != NULL && sw_now_us() - last_progress >= progress_us) {
            last_progress = sw_now_us();
            r.st->elapsed_us = last_progress - t0;
            r.st->round_trips += session_rt(&r) - rt_start;
            rt_start = session_rt(&r);
            r.cfg->progress(r.cfg->arg, r.st);
        }
    }
out:
    /* Left as found: stopped if it was, else running.  A failed link is
     * left alone (nothing more can be said to it). */
    if (!r.p->debug->is_terminated(r.p) && rc != SW_ECONN && rc != SW_EPROTO) {
        int rc2 = 0;
        struct sw_errbuf first = *r.err;
        if (was_stopped && running) {
            rc2 = stop(&r);
            if (rc2 == SW_ETIMEDOUT)
                r.st->stops_failed++;
        } else if (!was_stopped && !running) {
            rc2 = resume(&r);
        }
        if (rc == 0 && rc2 < 0)
            rc = rc2;
        else if (rc < 0)
            *r.err = first; /* the failure that ended the run, not a later one */
    }
    r.st->elapsed_us = sw_now_us() - t0;
    r.st->round_trips += session_rt(&r) - rt_start;
    if (slack > 0)
        prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
    run_free(&r);
    return rc;
}
