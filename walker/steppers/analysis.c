/* walker/steppers/analysis.c -- AnalysisStepper: callers of frameless code without CFI.
 *
 * Per function (ELF symbol with a size, code from the local file), a
 * dataflow over the control flow graph from the entry computes, for every
 * reachable instruction, the stack height (CFA - SP: the seed's Δ), whether
 * FP is CFA-relative, and where the return address and the caller's FP
 * are.  Joins with different facts make them unknown; a PC the analysis
 * does not reach or whose CFA is unknown is NOT_ME.  Results are cached per
 * function.  Priority 0x10058: after the CFI and frame-pointer steppers.
 */
#include "walker/steppers/analysis.h"

#include <inttypes.h>
#include <string.h>

#include "walker/disasm.h"
#include "walker/walker_internal.h"

/* Functions larger than this are not analysed: the per-byte state array
 * would cost ~24 bytes per code byte.  glibc's largest are ~40 KiB. */
#define AN_MAX_FUNC (256u * 1024u)
/* Analysed functions kept; the oldest is dropped (a walk touches few). */
#define AN_CACHE_FUNCS 32

enum {
    ST_SEEN = 1,    /* reached by the analysis */
    ST_INSN = 2,    /* an instruction starts here */
    ST_STRONG = 4,  /* reached by a jump or a fall-through that is not a call's */
    ST_SP = 8,      /* height known */
    ST_FPCFA = 16,  /* FP = CFA + fp_off */
    ST_R0LR = 32,   /* PowerPC r0 holds the return address */
    ST_PUSHED = 64, /* fp_save_off is where the caller's FP was saved */
};

/* The state before one instruction; all offsets from the CFA. */
struct an_state {
    int32_t height, fp_off, ra_off, fp_save_off;
    uint8_t flags;
    uint8_t ra;        /* enum sw_an_ra */
    uint8_t caller_fp; /* enum sw_an_fp */
    uint8_t len;       /* of the instruction, when ST_INSN */
};

struct an_func {
    sw_addr start, size;
    struct an_state *st; /* owned: size entries, by offset */
    uint64_t used;       /* last use, for replacement */
};

struct an_stepper {
    struct sw_stepper base;
    struct sw_disasm *dis; /* owned: opened on first use */
    const struct arch_desc *dis_arch;
    struct an_func cache[AN_CACHE_FUNCS];
    uint64_t clock;
};

static const struct sw_stepper_ops analysis_ops;

/* ---- dataflow -------------------------------------------------------- */

static bool
state_equal(const struct an_state *a, const struct an_state *b)
{
    const uint8_t facts = ST_SP | ST_FPCFA | ST_R0LR | ST_PUSHED;
    if ((a->flags & facts) != (b->flags & facts) || a->ra != b->ra || a->caller_fp != b->caller_fp)
        return false;
    if ((a->flags & ST_SP) && a->height != b->height)
        return false;
    if ((a->flags & ST_FPCFA) && a->fp_off != b->fp_off)
        return false;
    if (a->ra == SW_AN_RA_SLOT && a->ra_off != b->ra_off)
        return false;
    if ((a->flags & ST_PUSHED) && a->fp_save_off != b->fp_save_off)
        return false;
    return true;
}

/* Meet IN into *AT: facts that differ become unknown. */
static void
state_meet(struct an_state *at, const struct an_state *in)
{
    if ((at->flags & ST_SP) && (!(in->flags & ST_SP) || in->height != at->height))
        at->flags &= (uint8_t)~ST_SP;
    if ((at->flags & ST_FPCFA) && (!(in->flags & ST_FPCFA) || in->fp_off != at->fp_off))
        at->flags &= (uint8_t)~ST_FPCFA;
    if ((at->flags & ST_R0LR) && !(in->flags & ST_R0LR))
        at->flags &= (uint8_t)~ST_R0LR;
    if ((at->flags & ST_PUSHED) && (!(in->flags & ST_PUSHED) || in->fp_save_off != at->fp_save_off))
        at->flags &= (uint8_t)~ST_PUSHED;
    if (at->ra != in->ra || (at->ra == SW_AN_RA_SLOT && at->ra_off != in->ra_off))
        at->ra = SW_AN_RA_UNKNOWN;
    if (at->caller_fp != in->caller_fp ||
        (at->caller_fp == SW_AN_FP_SAVED && at->fp_save_off != in->fp_save_off))
        at->caller_fp = SW_AN_FP_UNKNOWN;
}

/* Flow S into offset OFF; STRONG unless it is the fall-through after a
 * call (which may never return: what follows a call to abort is often
 * another block, whose facts win).  Returns true if the state changed. */
static bool
flow_into(struct an_state *st, sw_addr off, const struct an_state *s, bool strong)
{
    struct an_state *at = &st[off];
    uint8_t keep = at->flags & (ST_INSN);
    uint8_t len = at->len;
    if (!(at->flags & ST_SEEN) || (strong && !(at->flags & ST_STRONG))) {
        *at = *s;
        at->flags = (uint8_t)((s->flags & ~(ST_INSN | ST_STRONG)) | ST_SEEN | keep |
                              (strong ? ST_STRONG : 0));
        at->len = len;
        return true;
    }
    if (!strong && (at->flags & ST_STRONG))
        return false;
    struct an_state before = *at;
    state_meet(at, s);
    return !state_equal(&before, at);
}

/* Apply instruction I at ADDR to S (the state before it). */
static void
transfer(const struct arch_desc *a, const struct sw_insn *i, sw_addr addr, struct an_state *s)
{
    int64_t h0 = s->height;
    bool sp0 = s->flags & ST_SP;
    int64_t word = a->word_size;

    switch (i->sp) {
    case SW_SP_KEEP:
        break;
    case SW_SP_ADD:
        s->height = (int32_t)(h0 - i->sp_delta);
        break;
    case SW_SP_FROM_FP:
        if (s->flags & ST_FPCFA) {
            s->height = (int32_t) - (s->fp_off + i->sp_delta);
            s->flags |= ST_SP;
        } else {
            s->flags &= (uint8_t)~ST_SP;
        }
        break;
    case SW_SP_BACKCHAIN:
        s->height = 0; /* [SP] is the caller's SP: the CFA */
        s->flags |= ST_SP;
        break;
    case SW_SP_ALIGN:
    case SW_SP_OTHER:
        s->flags &= (uint8_t)~ST_SP;
        break;
    }
    /* i386 position-independent code: `call 1f; 1: pop %ebx`. */
    if (i->flow == SW_FLOW_CALL && a->call_ra_on_stack && i->has_target &&
        i->target == addr + i->len)
        s->height = (int32_t)(h0 + word);
    bool sp1 = s->flags & ST_SP;
    int64_t h1 = s->height;

    switch (i->fp) {
    case SW_FP_KEEP:
        break;
    case SW_FP_SET:
        if (sp0) {
            s->fp_off = (int32_t)(-h0 + i->fp_off);
            s->flags |= ST_FPCFA;
        } else {
            s->flags &= (uint8_t)~ST_FPCFA;
        }
        if (s->caller_fp == SW_AN_FP_CALLER)
            s->caller_fp = (s->flags & ST_PUSHED) ? SW_AN_FP_SAVED : SW_AN_FP_UNKNOWN;
        break;
    case SW_FP_LOAD:
    case SW_FP_OTHER:
        s->flags &= (uint8_t)~ST_FPCFA;
        s->caller_fp = SW_AN_FP_UNKNOWN;
        break;
    }
    /* Stores and loads: slots as offsets from the CFA need the SP after. */
    for (uint8_t k = 0; k < i->nstores; k++) {
        int32_t slot = (int32_t)(-h1 + i->stores[k].off);
        if (!sp1)
            continue;
        switch (i->stores[k].reg) {
        case SW_IREG_FP:
            if (s->caller_fp == SW_AN_FP_CALLER && !(s->flags & ST_PUSHED)) {
                s->fp_save_off = slot;
                s->flags |= ST_PUSHED;
            }
            break;
        case SW_IREG_LR:
            if (s->ra == SW_AN_RA_LIVE) {
                s->ra = SW_AN_RA_SLOT;
                s->ra_off = slot;
            }
            break;
        case SW_IREG_R0:
            if ((s->flags & ST_R0LR) && s->ra != SW_AN_RA_SLOT) {
                s->ra = SW_AN_RA_SLOT;
                s->ra_off = slot;
            }
            break;
        default:
            break;
        }
    }
    for (uint8_t k = 0; k < i->nloads; k++) {
        int32_t slot = (int32_t)(-h1 + i->loads[k].off);
        bool ok = sp1;
        switch (i->loads[k].reg) {
        case SW_IREG_FP:
            if (ok && (s->flags & ST_PUSHED) && slot == s->fp_save_off) {
                s->caller_fp = SW_AN_FP_CALLER;
                s->flags &= (uint8_t)~ST_PUSHED;
            }
            break;
        case SW_IREG_LR:
            if (ok && s->ra == SW_AN_RA_SLOT && slot == s->ra_off)
                s->ra = SW_AN_RA_LIVE;
            else if (s->ra == SW_AN_RA_LIVE)
                s->ra = SW_AN_RA_UNKNOWN;
            break;
        case SW_IREG_R0:
            if (ok && s->ra == SW_AN_RA_SLOT && slot == s->ra_off)
                s->flags |= ST_R0LR;
            else
                s->flags &= (uint8_t)~ST_R0LR;
            break;
        default:
            break;
        }
    }
    if (i->lr_to_r0) {
        if (s->ra == SW_AN_RA_LIVE)
            s->flags |= ST_R0LR; /* LR still holds it too */
        else
            s->flags &= (uint8_t)~ST_R0LR;
    }
    if (i->r0_to_lr) {
        if (s->flags & ST_R0LR)
            s->ra = SW_AN_RA_LIVE;
        else if (s->ra == SW_AN_RA_LIVE || s->ra == SW_AN_RA_IN_R0)
            s->ra = SW_AN_RA_UNKNOWN;
    }
    if (i->writes[SW_IREG_LR] && (s->ra == SW_AN_RA_LIVE || s->ra == SW_AN_RA_IN_R0))
        s->ra = (s->flags & ST_R0LR) ? SW_AN_RA_IN_R0 : SW_AN_RA_UNKNOWN;
    if (i->writes[SW_IREG_R0]) {
        s->flags &= (uint8_t)~ST_R0LR;
        if (s->ra == SW_AN_RA_IN_R0)
            s->ra = SW_AN_RA_UNKNOWN;
    }
}

/* The state at a function's entry: CFA = SP (+ the pushed return address
 * on x86). */
static void
entry_state(const struct arch_desc *a, struct an_state *s)
{
    memset(s, 0, sizeof *s);
    s->flags = ST_SP;
    s->caller_fp = SW_AN_FP_CALLER;
    if (a->call_ra_on_stack) {
        s->height = a->word_size;
        s->ra = SW_AN_RA_SLOT;
        s->ra_off = -(int32_t)a->word_size;
    } else {
        s->ra = SW_AN_RA_LIVE;
    }
}

/* Run the dataflow over CODE (SIZE bytes at START) into ST (zeroed). */
static int
analyse(struct sw_disasm *dis, const struct arch_desc *a, const uint8_t *code, sw_addr start,
        sw_addr size, struct an_state *st)
{
    sw_addr *work = sw_malloc(sizeof *work * (size_t)(size + 1));
    size_t nwork = 0;
    bool *queued = sw_calloc((size_t)size, sizeof *queued);
    if (work == NULL || queued == NULL) {
        sw_free(work);
        sw_free(queued);
        return SW_ENOMEM;
    }
    struct an_state s;
    entry_state(a, &s);
    flow_into(st, 0, &s, true);
    work[nwork++] = 0;
    queued[0] = true;

    while (nwork > 0) {
        sw_addr off = work[--nwork];
        queued[off] = false;
        struct sw_insn i;
        if (sw_disasm_one(dis, code + off, (size_t)(size - off), start + off, &i) < 0)
            continue; /* not code: the path ends */
        st[off].flags |= ST_INSN;
        st[off].len = i.len;
        s = st[off];
        transfer(a, &i, start + off, &s);

        sw_addr succ[2];
        bool strong[2];
        size_t nsucc = 0;
        sw_addr next = off + i.len;
        if (i.flow == SW_FLOW_NEXT || i.flow == SW_FLOW_CALL || i.flow == SW_FLOW_CJUMP) {
            succ[nsucc] = next;
            strong[nsucc++] = i.flow != SW_FLOW_CALL;
        }
        /* A jump out of the function is a tail call: that path ends. */
        if ((i.flow == SW_FLOW_JUMP || i.flow == SW_FLOW_CJUMP) && i.has_target &&
            i.target >= start && i.target < start + size) {
            succ[nsucc] = i.target - start;
            strong[nsucc++] = true;
        }
        for (size_t k = 0; k < nsucc; k++) {
            if (succ[k] >= size)
                continue;
            if (flow_into(st, succ[k], &s, strong[k]) && !queued[succ[k]]) {
                work[nwork++] = succ[k];
                queued[succ[k]] = true;
            }
        }
    }
    sw_free(work);
    sw_free(queued);
    return 0;
}

/* ---- cache and queries ------------------------------------------------ */

static void
an_cache_clear(struct an_stepper *as)
{
    for (size_t i = 0; i < AN_CACHE_FUNCS; i++) {
        sw_free(as->cache[i].st);
        memset(&as->cache[i], 0, sizeof as->cache[i]);
    }
}

/* The analysed function covering PC, from AS's cache when AS is not NULL
 * (else *OWNED is set and the caller frees it with sw_free). */
static int
an_func_for(struct sw_walker *w, struct an_stepper *as, sw_addr pc, struct an_func *out,
            struct an_state **owned)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    struct sw_symlookup *sl = sw_walker_symlookup(w);
    struct sw_symbol sym;

    *owned = NULL;
    if (sl == NULL || sl->ops->lookup(sl, pc, &sym) < 0 || sym.size == 0 ||
        sym.size > AN_MAX_FUNC || pc < sym.start || pc - sym.start >= sym.size)
        return SW_ENOSYM;
    if (as) {
        for (size_t i = 0; i < AN_CACHE_FUNCS; i++) {
            if (as->cache[i].st && as->cache[i].start == sym.start &&
                as->cache[i].size == sym.size) {
                as->cache[i].used = ++as->clock;
                *out = as->cache[i];
                return 0;
            }
        }
    }

    struct sw_disasm *dis = as ? as->dis : NULL;
    if (dis == NULL || (as && as->dis_arch != a)) {
        if (as) {
            sw_disasm_free(as->dis);
            as->dis = NULL;
        }
        dis = sw_disasm_new(a);
        if (dis == NULL)
            return SW_ENOMEM;
        if (as) {
            as->dis = dis;
            as->dis_arch = a;
        }
    }
    uint8_t *code = sw_malloc((size_t)sym.size);
    struct an_state *st = sw_calloc((size_t)sym.size, sizeof *st);
    int rc = code && st ? 0 : SW_ENOMEM;
    if (rc == 0)
        rc = sw_walker_read_code(w, sym.start, code, (size_t)sym.size);
    if (rc == 0)
        rc = analyse(dis, a, code, sym.start, sym.size, st);
    sw_free(code);
    if (as == NULL)
        sw_disasm_free(dis);
    if (rc < 0) {
        sw_free(st);
        return rc;
    }
    *out = (struct an_func){ .start = sym.start, .size = sym.size, .st = st };
    if (as == NULL) {
        *owned = st;
        return 0;
    }
    size_t victim = 0;
    for (size_t i = 1; i < AN_CACHE_FUNCS; i++)
        if (as->cache[i].used < as->cache[victim].used)
            victim = i;
    sw_free(as->cache[victim].st);
    out->used = ++as->clock;
    as->cache[victim] = *out;
    return 0;
}

static void
an_pc_from(const struct an_state *s, struct sw_an_pc *out)
{
    memset(out, 0, sizeof *out);
    out->sp_known = s->flags & ST_SP;
    out->height = s->height;
    out->fp_cfa = s->flags & ST_FPCFA;
    out->fp_off = s->fp_off;
    out->ra = (enum sw_an_ra)s->ra;
    out->ra_off = s->ra_off;
    out->caller_fp = (enum sw_an_fp)s->caller_fp;
    out->fp_save_off = s->fp_save_off;
    out->fp_pushed = s->flags & ST_PUSHED;
}

static int
an_query(struct sw_walker *w, struct an_stepper *as, sw_addr pc, bool exact, struct sw_an_pc *out)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    struct an_func f;
    struct an_state *owned;
    /* A return address: the call is the instruction that ends at PC. */
    sw_addr look = exact ? pc : pc - 1;
    int rc = an_func_for(w, as, look, &f, &owned);
    if (rc < 0)
        return rc;
    sw_addr off = look - f.start;
    rc = SW_EINVAL;
    if (exact) {
        if ((f.st[off].flags & (ST_SEEN | ST_INSN)) == (ST_SEEN | ST_INSN)) {
            an_pc_from(&f.st[off], out);
            rc = 0;
        }
    } else {
        /* Instructions are at most 15 bytes (x86). */
        for (sw_addr back = 0; back < 15 && back <= off; back++) {
            const struct an_state *c = &f.st[off - back];
            if ((c->flags & (ST_SEEN | ST_INSN)) != (ST_SEEN | ST_INSN) ||
                off - back + c->len != off + 1)
                continue;
            struct sw_disasm *dis = as && as->dis ? as->dis : sw_disasm_new(a);
            uint8_t code[16];
            struct sw_insn i;
            size_t n = c->len;
            if (dis && sw_walker_read_code(w, f.start + off - back, code, n) == 0 &&
                sw_disasm_one(dis, code, n, f.start + off - back, &i) == 0 &&
                i.flow == SW_FLOW_CALL) {
                struct an_state s = *c;
                transfer(a, &i, f.start + off - back, &s);
                an_pc_from(&s, out);
                rc = 0;
            }
            if (dis && !(as && as->dis == dis))
                sw_disasm_free(dis);
            break;
        }
    }
    sw_free(owned);
    return rc;
}

static struct an_stepper *
an_stepper_of(struct sw_walker *w)
{
    struct sw_stepper *all[32];
    size_t n = 0;
    sw_stepper_group_steppers(sw_walker_group(w), all, 32, &n);
    for (size_t i = 0; i < n && i < 32; i++)
        if (all[i]->ops == &analysis_ops)
            return (struct an_stepper *)all[i];
    return NULL;
}

int
sw_analysis_at(struct sw_walker *w, sw_addr pc, bool exact, struct sw_an_pc *out)
{
    return an_query(w, an_stepper_of(w), pc, exact, out);
}

/* ---- the stepper ----------------------------------------------------- */

static enum sw_gcf
read_word(struct sw_walker *w, sw_addr addr, sw_word *val)
{
    int rc = sw_walker_read_word(w, addr, val);
    if (rc == 0)
        return SW_GCF_SUCCESS;
    if (sw_is_link_error(rc)) {
        sw_walker_fail_from_proc(w, rc);
        return SW_GCF_ERROR;
    }
    return SW_GCF_NOT_ME;
}

static enum sw_gcf
analysis_caller_frame(struct sw_stepper *s, const struct sw_frame *in, struct sw_frame *out)
{
    struct an_stepper *as = (struct an_stepper *)s;
    struct sw_walker *w = s->walker;
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    bool exact = in->top || in->non_call;
    struct sw_an_pc p;
    enum sw_gcf r;

    int rc = an_query(w, as, in->ra, exact, &p);
    if (rc == SW_ENOMEM || sw_is_link_error(rc)) {
        sw_walker_fail(w, rc, "analysing the function at %#" PRIx64 ": %s", (uint64_t)in->ra,
                       sw_strerror(rc));
        return SW_GCF_ERROR;
    }
    if (rc < 0)
        return SW_GCF_NOT_ME;

    sw_addr cfa;
    if (p.sp_known)
        cfa = in->sp + (sw_addr)p.height;
    else if (p.fp_cfa && in->fp != 0)
        cfa = in->fp - (sw_addr)p.fp_off;
    else
        return SW_GCF_NOT_ME;
    if (cfa < in->sp)
        return SW_GCF_NOT_ME;

    sw_word ra, fp = in->fp;
    struct sw_location ra_loc, fp_loc;
    switch (p.ra) {
    case SW_AN_RA_SLOT:
        ra_loc = (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = cfa + (sw_addr)p.ra_off };
        if ((r = read_word(w, ra_loc.addr, &ra)) != SW_GCF_SUCCESS)
            return r;
        break;
    case SW_AN_RA_LIVE:
    case SW_AN_RA_IN_R0: {
        unsigned reg = p.ra == SW_AN_RA_LIVE ? (unsigned)a->dw_ra : 0u;
        if (!sw_frame_reg(in, reg, &ra))
            return SW_GCF_NOT_ME;
        ra_loc = (struct sw_location){ .kind = SW_LOC_REGISTER, .reg = reg };
        break;
    }
    default:
        return SW_GCF_NOT_ME;
    }
    if (ra == 0 || (ra == in->ra && cfa == in->sp))
        return SW_GCF_NOT_ME;

    if (p.caller_fp != SW_AN_FP_CALLER && p.fp_pushed) {
        fp_loc =
            (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = cfa + (sw_addr)p.fp_save_off };
        if ((r = read_word(w, fp_loc.addr, &fp)) != SW_GCF_SUCCESS)
            return r;
    } else {
        fp_loc = (struct sw_location){ .kind = SW_LOC_REGISTER, .reg = (unsigned)a->dw_fp };
    }

    struct sw_frame f = *in; /* registers not saved are unchanged (gdb's rule) */
    f.ra = ra;
    f.sp = cfa;
    f.fp = fp;
    f.ra_loc = ra_loc;
    f.sp_loc = (struct sw_location){ .kind = SW_LOC_UNKNOWN };
    f.fp_loc = fp_loc;
    f.kind = SW_FRAME_NORMAL;
    f.non_call = false;
    f.bottom = false;
    f.trust = SW_TRUST_ANALYSIS;
    f.stepper = s;
    if (a->dw_ra != a->dw_pc)
        sw_frame_clear_reg(&f, (unsigned)a->dw_ra); /* the caller's LR is not known */
    sw_frame_set_reg(&f, (unsigned)a->dw_pc, ra);
    sw_frame_set_reg(&f, (unsigned)a->dw_sp, cfa);
    sw_frame_set_reg(&f, (unsigned)a->dw_fp, fp);
    *out = f;
    return SW_GCF_SUCCESS;
}

static void
analysis_library_changed(struct sw_stepper *s, const struct sw_lib *lib, enum sw_lib_change change)
{
    (void)lib;
    if (change == SW_LIB_UNLOAD)
        an_cache_clear((struct an_stepper *)s);
}

static void
analysis_destroy(struct sw_stepper *s)
{
    struct an_stepper *as = (struct an_stepper *)s;
    an_cache_clear(as);
    sw_disasm_free(as->dis);
    sw_free(as);
}

static const struct sw_stepper_ops analysis_ops = {
    .name = "analysis",
    .priority = SW_PRIO_ANALYSIS,
    .caller_frame = analysis_caller_frame,
    .library_changed = analysis_library_changed,
    .destroy = analysis_destroy,
};

struct sw_stepper *
sw_stepper_analysis_new(void)
{
    struct an_stepper *as = sw_calloc(1, sizeof *as);
    if (as == NULL)
        return NULL;
    as->base.ops = &analysis_ops;
    return &as->base;
}
