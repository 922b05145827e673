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
#include "walker/steppers/frame_func.h"
#include "walker/walker_internal.h"

/* Functions larger than this are not analysed: the per-byte state array
 * would cost ~24 bytes per code byte.  glibc's largest are ~40 KiB. */
#define AN_MAX_FUNC (256u * 1024u)
/* Analysed functions kept; the oldest is dropped (a walk touches few). */
#define AN_CACHE_FUNCS 32

enum {
    ST_SEEN = 1 << 0,    /* reached by the analysis */
    ST_INSN = 1 << 1,    /* an instruction starts here */
    ST_STRONG = 1 << 2,  /* reached by a jump or a fall-through that is not a call's */
    ST_SP = 1 << 3,      /* SP = base - height */
    ST_ALT = 1 << 4,     /* ...where the base is L, not the CFA (see below) */
    ST_FPCFA = 1 << 5,   /* FP = CFA + fp_off */
    ST_FPALT = 1 << 6,   /* FP = L + fp_alt_off */
    ST_R0LR = 1 << 7,    /* PowerPC r0 holds the return address */
    ST_PUSHED = 1 << 8,  /* the caller's FP is saved at CFA + fp_save_off */
    ST_PUSHALT = 1 << 9, /* the caller's FP is saved at L + fp_save_off */
    ST_DRAP = 1 << 10,   /* general register drap_gpr = CFA + drap_off */
    ST_CFASLOT = 1 << 11 /* the CFA is saved at L + cfa_slot */
};

/* The state before one instruction.  Offsets are from the CFA, or from L:
 * the SP right after `and $-N,%sp` realigned the stack, an address with no
 * known distance to the CFA (gcc's DRAP: the CFA is kept in a register,
 * then saved in the realigned frame). */
struct an_state {
    int32_t height, fp_off, fp_alt_off, ra_off, fp_save_off, drap_off, cfa_slot;
    uint16_t flags;
    uint16_t drap_gpr;
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
has(const struct an_state *s, unsigned f)
{
    return (s->flags & f) != 0;
}

static void
set(struct an_state *s, unsigned f, bool on)
{
    if (on)
        s->flags = (uint16_t)(s->flags | f);
    else
        s->flags = (uint16_t)(s->flags & ~f);
}

/* The facts of the state, with what is not known zeroed, for comparison. */
static void
canon(const struct an_state *s, struct an_state *c)
{
    memset(c, 0, sizeof *c);
    c->flags = s->flags & (uint16_t) ~(ST_SEEN | ST_INSN | ST_STRONG);
    c->ra = s->ra;
    c->caller_fp = s->caller_fp;
    if (has(s, ST_SP))
        c->height = s->height;
    if (has(s, ST_FPCFA))
        c->fp_off = s->fp_off;
    if (has(s, ST_FPALT))
        c->fp_alt_off = s->fp_alt_off;
    if (s->ra == SW_AN_RA_SLOT)
        c->ra_off = s->ra_off;
    if (has(s, ST_PUSHED | ST_PUSHALT))
        c->fp_save_off = s->fp_save_off;
    if (has(s, ST_DRAP)) {
        c->drap_off = s->drap_off;
        c->drap_gpr = s->drap_gpr;
    }
    if (has(s, ST_CFASLOT))
        c->cfa_slot = s->cfa_slot;
}

static bool
state_equal(const struct an_state *a, const struct an_state *b)
{
    struct an_state x, y;
    canon(a, &x);
    canon(b, &y);
    return memcmp(&x, &y, sizeof x) == 0;
}

/* Meet IN into *AT: facts that differ become unknown. */
static void
state_meet(struct an_state *at, const struct an_state *in)
{
    struct an_state x, y;
    canon(at, &x);
    canon(in, &y);
    if (!has(&y, ST_SP) || x.height != y.height || has(&x, ST_ALT) != has(&y, ST_ALT))
        set(at, ST_SP | ST_ALT, false);
    if (!has(&y, ST_FPCFA) || x.fp_off != y.fp_off)
        set(at, ST_FPCFA, false);
    if (!has(&y, ST_FPALT) || x.fp_alt_off != y.fp_alt_off)
        set(at, ST_FPALT, false);
    if (!has(&y, ST_R0LR))
        set(at, ST_R0LR, false);
    if ((x.flags & (ST_PUSHED | ST_PUSHALT)) != (y.flags & (ST_PUSHED | ST_PUSHALT)) ||
        x.fp_save_off != y.fp_save_off)
        set(at, ST_PUSHED | ST_PUSHALT, false);
    if (!has(&y, ST_DRAP) || x.drap_off != y.drap_off || x.drap_gpr != y.drap_gpr)
        set(at, ST_DRAP, false);
    if (!has(&y, ST_CFASLOT) || x.cfa_slot != y.cfa_slot)
        set(at, ST_CFASLOT, false);
    if (x.ra != y.ra || x.ra_off != y.ra_off)
        at->ra = SW_AN_RA_UNKNOWN;
    if (x.caller_fp != y.caller_fp)
        at->caller_fp = SW_AN_FP_UNKNOWN;
}

/* Flow S into offset OFF; STRONG unless it is the fall-through after a
 * call (which may never return: what follows a call to abort is often
 * another block, whose facts win).  Returns true if the state changed. */
static bool
flow_into(struct an_state *st, sw_addr off, const struct an_state *s, bool strong)
{
    struct an_state *at = &st[off];
    uint16_t keep = at->flags & ST_INSN;
    uint8_t len = at->len;
    if (!has(at, ST_SEEN) || (strong && !has(at, ST_STRONG))) {
        *at = *s;
        at->flags = (uint16_t)((s->flags & ~(ST_INSN | ST_STRONG)) | ST_SEEN | keep |
                               (strong ? ST_STRONG : 0));
        at->len = len;
        return true;
    }
    if (!strong && has(at, ST_STRONG))
        return false;
    struct an_state before = *at;
    state_meet(at, s);
    return !state_equal(&before, at);
}

/* A slot SP-after + OFF (or FP + OFF) as an offset from the CFA (*ALT
 * false) or from L (*ALT true); false if not known. */
static bool
slot_of(const struct an_state *s, const struct sw_insn_mem *m, int32_t *slot, bool *alt)
{
    if (m->fp_base) {
        if (has(s, ST_FPCFA)) {
            *slot = (int32_t)(s->fp_off + m->off);
            *alt = false;
            return true;
        }
        if (has(s, ST_FPALT)) {
            *slot = (int32_t)(s->fp_alt_off + m->off);
            *alt = true;
            return true;
        }
        return false;
    }
    if (!has(s, ST_SP))
        return false;
    *slot = (int32_t)(-s->height + m->off);
    *alt = has(s, ST_ALT);
    return true;
}

static void
apply_store(struct an_state *s, const struct sw_insn_mem *m)
{
    int32_t slot;
    bool alt;
    if (!slot_of(s, m, &slot, &alt))
        return;
    switch (m->reg) {
    case SW_IREG_FP:
        if (s->caller_fp == SW_AN_FP_CALLER && !has(s, ST_PUSHED | ST_PUSHALT)) {
            s->fp_save_off = slot;
            set(s, alt ? ST_PUSHALT : ST_PUSHED, true);
        }
        break;
    case SW_IREG_LR:
        if (!alt && s->ra == SW_AN_RA_LIVE) {
            s->ra = SW_AN_RA_SLOT;
            s->ra_off = slot;
        }
        break;
    case SW_IREG_R0:
        if (!alt && has(s, ST_R0LR) && s->ra != SW_AN_RA_SLOT) {
            s->ra = SW_AN_RA_SLOT;
            s->ra_off = slot;
        }
        break;
    case SW_IREG_GPR:
        if (alt && has(s, ST_DRAP) && s->drap_gpr == m->gpr && s->drap_off == 0) {
            s->cfa_slot = slot;
            set(s, ST_CFASLOT, true);
        }
        break;
    default:
        break;
    }
}

static void
apply_load(struct an_state *s, const struct sw_insn_mem *m)
{
    int32_t slot = 0;
    bool alt = false;
    bool ok = slot_of(s, m, &slot, &alt);
    switch (m->reg) {
    case SW_IREG_FP:
        if (ok && ((has(s, ST_PUSHED) && !alt) || (has(s, ST_PUSHALT) && alt)) &&
            slot == s->fp_save_off) {
            s->caller_fp = SW_AN_FP_CALLER;
            set(s, ST_PUSHED | ST_PUSHALT, false);
        }
        break;
    case SW_IREG_LR:
        if (ok && !alt && s->ra == SW_AN_RA_SLOT && slot == s->ra_off)
            s->ra = SW_AN_RA_LIVE;
        else if (s->ra == SW_AN_RA_LIVE)
            s->ra = SW_AN_RA_UNKNOWN;
        break;
    case SW_IREG_R0:
        set(s, ST_R0LR, ok && !alt && s->ra == SW_AN_RA_SLOT && slot == s->ra_off);
        break;
    case SW_IREG_GPR:
        if (ok && alt && has(s, ST_CFASLOT) && slot == s->cfa_slot) {
            s->drap_gpr = (uint16_t)m->gpr;
            s->drap_off = 0;
            set(s, ST_DRAP, true);
        }
        break;
    default:
        break;
    }
}

/* Apply instruction I at ADDR to S (the state before it). */
static void
transfer(const struct arch_desc *a, const struct sw_insn *i, sw_addr addr, struct an_state *s)
{
    const struct an_state s0 = *s;
    const bool sp0 = has(&s0, ST_SP), alt0 = has(&s0, ST_ALT);
    const int64_t word = a->word_size;

    switch (i->sp) {
    case SW_SP_KEEP:
        break;
    case SW_SP_ADD:
        s->height = (int32_t)(s0.height - i->sp_delta);
        break;
    case SW_SP_FROM_FP:
        set(s, ST_SP, has(&s0, ST_FPCFA | ST_FPALT));
        set(s, ST_ALT, !has(&s0, ST_FPCFA) && has(&s0, ST_FPALT));
        s->height = (int32_t) - ((has(&s0, ST_FPCFA) ? s0.fp_off : s0.fp_alt_off) + i->sp_delta);
        break;
    case SW_SP_FROM_REG:
        set(s, ST_SP, has(&s0, ST_DRAP) && s0.drap_gpr == i->sp_reg);
        set(s, ST_ALT, false);
        s->height = (int32_t) - (s0.drap_off + i->sp_delta);
        break;
    case SW_SP_BACKCHAIN:
        s->height = 0; /* [SP] is the caller's SP: the CFA */
        set(s, ST_SP, true);
        set(s, ST_ALT, false);
        break;
    case SW_SP_ALIGN:
        /* A new base L: facts relative to an older one are lost. */
        set(s, ST_FPALT | ST_PUSHALT | ST_CFASLOT, false);
        set(s, ST_SP | ST_ALT, sp0 && !alt0);
        s->height = 0;
        break;
    case SW_SP_OTHER:
        set(s, ST_SP | ST_ALT, false);
        break;
    }
    /* i386 position-independent code: `call 1f; 1: pop %ebx`. */
    if (i->flow == SW_FLOW_CALL && a->call_ra_on_stack && i->has_target &&
        i->target == addr + i->len)
        s->height = (int32_t)(s0.height + word);

    switch (i->fp) {
    case SW_FP_KEEP:
        break;
    case SW_FP_SET:
        set(s, ST_FPCFA, sp0 && !alt0);
        set(s, ST_FPALT, sp0 && alt0);
        s->fp_off = s->fp_alt_off = (int32_t)(-s0.height + i->fp_off);
        if (s->caller_fp == SW_AN_FP_CALLER)
            s->caller_fp = has(s, ST_PUSHED | ST_PUSHALT) ? SW_AN_FP_SAVED : SW_AN_FP_UNKNOWN;
        break;
    case SW_FP_LOAD:
    case SW_FP_OTHER:
        set(s, ST_FPCFA | ST_FPALT, false);
        s->caller_fp = SW_AN_FP_UNKNOWN;
        break;
    }
    for (uint8_t k = 0; k < i->ngpr_writes; k++)
        if (has(s, ST_DRAP) && s->drap_gpr == i->gpr_writes[k])
            set(s, ST_DRAP, false);
    if (i->gpr_from_sp && sp0 && !alt0) {
        s->drap_gpr = (uint16_t)i->gpr_set;
        s->drap_off = (int32_t)(-s0.height + i->gpr_set_off);
        set(s, ST_DRAP, true);
    }
    /* Loads and stores: FP-based slots use FP as it was before. */
    for (uint8_t k = 0; k < i->nstores; k++) {
        struct an_state v = *s;
        if (i->stores[k].fp_base)
            v = s0;
        struct an_state t = v;
        apply_store(&t, &i->stores[k]);
        s->ra = t.ra;
        s->ra_off = t.ra_off;
        s->fp_save_off = t.fp_save_off;
        s->cfa_slot = t.cfa_slot;
        s->flags = (uint16_t)(s->flags | (t.flags & (ST_PUSHED | ST_PUSHALT | ST_CFASLOT)));
    }
    for (uint8_t k = 0; k < i->nloads; k++) {
        struct an_state t = *s;
        if (i->loads[k].fp_base) {
            t.flags =
                (uint16_t)((t.flags & ~(ST_FPCFA | ST_FPALT)) | (s0.flags & (ST_FPCFA | ST_FPALT)));
            t.fp_off = s0.fp_off;
            t.fp_alt_off = s0.fp_alt_off;
        }
        apply_load(&t, &i->loads[k]);
        t.flags =
            (uint16_t)((t.flags & ~(ST_FPCFA | ST_FPALT)) | (s->flags & (ST_FPCFA | ST_FPALT)));
        t.fp_off = s->fp_off;
        t.fp_alt_off = s->fp_alt_off;
        *s = t;
    }
    if (i->lr_to_r0)
        set(s, ST_R0LR, s->ra == SW_AN_RA_LIVE); /* LR still holds it too */
    if (i->r0_to_lr) {
        if (has(s, ST_R0LR))
            s->ra = SW_AN_RA_LIVE;
        else if (s->ra == SW_AN_RA_LIVE || s->ra == SW_AN_RA_IN_R0)
            s->ra = SW_AN_RA_UNKNOWN;
    }
    if (i->writes[SW_IREG_LR] && (s->ra == SW_AN_RA_LIVE || s->ra == SW_AN_RA_IN_R0))
        s->ra = has(s, ST_R0LR) ? SW_AN_RA_IN_R0 : SW_AN_RA_UNKNOWN;
    if (i->writes[SW_IREG_R0]) {
        set(s, ST_R0LR, false);
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
        set(&st[off], ST_INSN, true);
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
    out->sp_known = has(s, ST_SP);
    out->sp_alt = has(s, ST_ALT);
    out->height = s->height;
    out->fp_cfa = has(s, ST_FPCFA);
    out->fp_off = s->fp_off;
    out->fp_alt = has(s, ST_FPALT);
    out->fp_alt_off = s->fp_alt_off;
    out->cfa_saved = has(s, ST_CFASLOT);
    out->cfa_slot = s->cfa_slot;
    out->ra = (enum sw_an_ra)s->ra;
    out->ra_off = s->ra_off;
    out->caller_fp = (enum sw_an_fp)s->caller_fp;
    out->fp_save_off = s->fp_save_off;
    out->fp_pushed = has(s, ST_PUSHED | ST_PUSHALT);
    out->fp_save_alt = has(s, ST_PUSHALT);
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

    sw_addr cfa = 0, l = 0;
    bool have_l = false;
    if (p.sp_known && p.sp_alt) {
        l = in->sp + (sw_addr)p.height;
        have_l = true;
    } else if (p.fp_alt && in->fp != 0) {
        l = in->fp - (sw_addr)p.fp_alt_off;
        have_l = true;
    }
    if (p.sp_known && !p.sp_alt) {
        cfa = in->sp + (sw_addr)p.height;
    } else if (p.fp_cfa && in->fp != 0) {
        cfa = in->fp - (sw_addr)p.fp_off;
    } else if (have_l && p.cfa_saved) {
        sw_word v;
        if ((r = sw_ff_read_word(w, l + (sw_addr)p.cfa_slot, &v)) != SW_GCF_SUCCESS)
            return r;
        cfa = v;
    } else {
        return SW_GCF_NOT_ME;
    }
    if (cfa < in->sp)
        return SW_GCF_NOT_ME;

    sw_word ra, fp = in->fp;
    struct sw_location ra_loc, fp_loc;
    switch (p.ra) {
    case SW_AN_RA_SLOT:
        ra_loc = (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = cfa + (sw_addr)p.ra_off };
        if ((r = sw_ff_read_word(w, ra_loc.addr, &ra)) != SW_GCF_SUCCESS)
            return r;
        break;
    case SW_AN_RA_LIVE:
    case SW_AN_RA_IN_R0: {
        unsigned reg = p.ra == SW_AN_RA_LIVE ? (unsigned)a->dw_ra : 0u;
        if (!sw_frame_reg(in, reg, &ra)) {
            /* Frame 0's registers are the thread's: ask the process for
             * one the initial frame did not carry. */
            struct sw_proc *proc = sw_walker_proc(w);
            rc = in->top ? proc->ops->read_reg(proc, in->thread, reg, &ra) : SW_ENOENT;
            if (rc < 0 && sw_is_link_error(rc)) {
                sw_walker_fail_from_proc(w, rc);
                return SW_GCF_ERROR;
            }
            if (rc < 0)
                return SW_GCF_NOT_ME;
        }
        ra_loc = (struct sw_location){ .kind = SW_LOC_REGISTER, .reg = reg };
        break;
    }
    default:
        return SW_GCF_NOT_ME;
    }
    if (ra == 0 || (ra == in->ra && cfa == in->sp))
        return SW_GCF_NOT_ME;

    if (p.caller_fp != SW_AN_FP_CALLER && p.fp_pushed && (have_l || !p.fp_save_alt)) {
        sw_addr base = p.fp_save_alt ? l : cfa;
        fp_loc =
            (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = base + (sw_addr)p.fp_save_off };
        if ((r = sw_ff_read_word(w, fp_loc.addr, &fp)) != SW_GCF_SUCCESS)
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
