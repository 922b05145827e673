/* walker/steppers/analysis_flow.c -- the stack-height dataflow over one function's code.
 *
 * From the entry, every reachable instruction gets the state before it:
 * the stack height (CFA - SP: the seed's Δ), whether FP is CFA-relative,
 * where the return address and the caller's FP are.  Joins with different
 * facts make them unknown.  Pure: code in, states out; the cache and the
 * queries are analysis.c's.
 */
#include "walker/steppers/analysis_internal.h"

#include <string.h>

#include "util/util.h"

static bool
has(const struct sw_an_state *s, unsigned f)
{
    return (s->flags & f) != 0;
}

static void
set(struct sw_an_state *s, unsigned f, bool on)
{
    if (on)
        s->flags = (uint16_t)(s->flags | f);
    else
        s->flags = (uint16_t)(s->flags & ~f);
}

/* ---- the CFA-relative registers (two slots) ---------------------------- */

static const uint16_t drap_flag[2] = { SW_AN_ST_DRAP, SW_AN_ST_DRAP2 };
static const uint16_t cmpsp_flag[2] = { SW_AN_ST_CMPSP, SW_AN_ST_CMPSP2 };

/* The slot of S that holds GPR, -1 if none. */
static int
reg_slot(const struct sw_an_state *s, unsigned gpr)
{
    for (int k = 0; k < 2; k++)
        if (has(s, drap_flag[k]) && s->drap_gpr[k] == gpr)
            return k;
    return -1;
}

/* Whether GPR holds CFA + *OFF in S. */
static bool
reg_known(const struct sw_an_state *s, unsigned gpr, int32_t *off)
{
    int k = reg_slot(s, gpr);
    if (k >= 0)
        *off = s->drap_off[k];
    return k >= 0;
}

static void
reg_forget(struct sw_an_state *s, unsigned gpr)
{
    int k = reg_slot(s, gpr);
    if (k >= 0)
        set(s, drap_flag[k] | cmpsp_flag[k], false);
}

/* GPR = CFA + OFF: its own slot, else a free one, else the older value's
 * (slot 1 moves down to 0), so the newest two are kept. */
static void
reg_set(struct sw_an_state *s, unsigned gpr, int32_t off)
{
    int k = reg_slot(s, gpr);
    if (k < 0 && !has(s, SW_AN_ST_DRAP)) {
        k = 0;
    } else if (k < 0 && !has(s, SW_AN_ST_DRAP2)) {
        k = 1;
    } else if (k < 0) {
        s->drap_gpr[0] = s->drap_gpr[1];
        s->drap_off[0] = s->drap_off[1];
        set(s, SW_AN_ST_CMPSP, has(s, SW_AN_ST_CMPSP2));
        set(s, SW_AN_ST_CMPSP2, false);
        k = 1;
    }
    s->drap_gpr[k] = (uint16_t)gpr;
    s->drap_off[k] = off;
    set(s, drap_flag[k], true);
}

/* The facts of the state, with what is not known zeroed, for comparison. */
static void
canon(const struct sw_an_state *s, struct sw_an_state *c)
{
    memset(c, 0, sizeof *c);
    c->flags = s->flags & (uint16_t) ~(SW_AN_ST_SEEN | SW_AN_ST_INSN | SW_AN_ST_STRONG);
    c->ra = s->ra;
    c->caller_fp = s->caller_fp;
    if (has(s, SW_AN_ST_SP))
        c->height = s->height;
    if (has(s, SW_AN_ST_FPCFA))
        c->fp_off = s->fp_off;
    if (has(s, SW_AN_ST_FPALT))
        c->fp_alt_off = s->fp_alt_off;
    if (s->ra == SW_AN_RA_SLOT)
        c->ra_off = s->ra_off;
    if (has(s, SW_AN_ST_PUSHED | SW_AN_ST_PUSHALT))
        c->fp_save_off = s->fp_save_off;
    for (int k = 0; k < 2; k++) {
        if (has(s, drap_flag[k])) {
            c->drap_off[k] = s->drap_off[k];
            c->drap_gpr[k] = s->drap_gpr[k];
        }
    }
    if (has(s, SW_AN_ST_CFASLOT))
        c->cfa_slot = s->cfa_slot;
    if (has(s, SW_AN_ST_KCONST)) {
        c->k_val = s->k_val;
        c->k_gpr = s->k_gpr;
    }
}

static bool
state_equal(const struct sw_an_state *a, const struct sw_an_state *b)
{
    struct sw_an_state x, y;
    canon(a, &x);
    canon(b, &y);
    return memcmp(&x, &y, sizeof x) == 0;
}

/* Meet IN into *AT: facts that differ become unknown. */
static void
state_meet(struct sw_an_state *at, const struct sw_an_state *in)
{
    struct sw_an_state x, y;
    canon(at, &x);
    canon(in, &y);
    if (!has(&y, SW_AN_ST_SP) || x.height != y.height ||
        has(&x, SW_AN_ST_ALT) != has(&y, SW_AN_ST_ALT))
        set(at, SW_AN_ST_SP | SW_AN_ST_ALT, false);
    if (!has(&y, SW_AN_ST_FPCFA) || x.fp_off != y.fp_off)
        set(at, SW_AN_ST_FPCFA, false);
    if (!has(&y, SW_AN_ST_FPALT) || x.fp_alt_off != y.fp_alt_off)
        set(at, SW_AN_ST_FPALT, false);
    if (!has(&y, SW_AN_ST_R0LR))
        set(at, SW_AN_ST_R0LR, false);
    if ((x.flags & (SW_AN_ST_PUSHED | SW_AN_ST_PUSHALT)) !=
            (y.flags & (SW_AN_ST_PUSHED | SW_AN_ST_PUSHALT)) ||
        x.fp_save_off != y.fp_save_off)
        set(at, SW_AN_ST_PUSHED | SW_AN_ST_PUSHALT, false);
    /* A register stays known where IN knows it at the same offset, in any slot;
     * the compare of SP with it only where IN compared the same register. */
    for (int k = 0; k < 2; k++) {
        int32_t off;
        if (!has(&x, drap_flag[k]))
            continue;
        int j = reg_slot(&y, x.drap_gpr[k]);
        if (!reg_known(&y, x.drap_gpr[k], &off) || off != x.drap_off[k])
            set(at, drap_flag[k] | cmpsp_flag[k], false);
        else if (!has(&y, cmpsp_flag[j]))
            set(at, cmpsp_flag[k], false);
    }
    if (!has(&y, SW_AN_ST_CFASLOT) || x.cfa_slot != y.cfa_slot)
        set(at, SW_AN_ST_CFASLOT, false);
    if (!has(&y, SW_AN_ST_KCONST) || x.k_val != y.k_val || x.k_gpr != y.k_gpr)
        set(at, SW_AN_ST_KCONST, false);
    if (x.ra != y.ra || x.ra_off != y.ra_off)
        at->ra = SW_AN_RA_UNKNOWN;
    if (x.caller_fp != y.caller_fp)
        at->caller_fp = SW_AN_FP_UNKNOWN;
}

/* Flow S into offset OFF; STRONG unless it is the fall-through after a
 * call (which may never return: what follows a call to abort is often
 * another block, whose facts win).  Returns true if the state changed. */
static bool
flow_into(struct sw_an_state *st, sw_addr off, const struct sw_an_state *s, bool strong)
{
    struct sw_an_state *at = &st[off];
    uint16_t keep = at->flags & SW_AN_ST_INSN;
    uint8_t len = at->len;
    if (!has(at, SW_AN_ST_SEEN) || (strong && !has(at, SW_AN_ST_STRONG))) {
        *at = *s;
        at->flags = (uint16_t)((s->flags & ~(SW_AN_ST_INSN | SW_AN_ST_STRONG)) | SW_AN_ST_SEEN |
                               keep | (strong ? SW_AN_ST_STRONG : 0));
        at->len = len;
        return true;
    }
    if (!strong && has(at, SW_AN_ST_STRONG))
        return false;
    struct sw_an_state before = *at;
    state_meet(at, s);
    return !state_equal(&before, at);
}

/* A slot SP-after + OFF (or FP + OFF, or BASE + OFF) as an offset from the CFA (*ALT
 * false) or from L (*ALT true); false if not known. */
static bool
slot_of(const struct sw_an_state *s, const struct sw_insn_mem *m, int32_t *slot, bool *alt)
{
    if (m->base != 0) { /* a register that holds a CFA-relative address */
        int32_t off;
        if (!reg_known(s, m->base, &off))
            return false;
        *slot = (int32_t)(off + m->off);
        *alt = false;
        return true;
    }
    if (m->fp_base) {
        if (has(s, SW_AN_ST_FPCFA)) {
            *slot = (int32_t)(s->fp_off + m->off);
            *alt = false;
            return true;
        }
        if (has(s, SW_AN_ST_FPALT)) {
            *slot = (int32_t)(s->fp_alt_off + m->off);
            *alt = true;
            return true;
        }
        return false;
    }
    if (!has(s, SW_AN_ST_SP))
        return false;
    *slot = (int32_t)(-s->height + m->off);
    *alt = has(s, SW_AN_ST_ALT);
    return true;
}

static void
apply_store(struct sw_an_state *s, const struct sw_insn_mem *m)
{
    int32_t slot;
    bool alt;
    if (!slot_of(s, m, &slot, &alt))
        return;
    switch (m->reg) {
    case SW_IREG_FP:
        if (s->caller_fp == SW_AN_FP_CALLER && !has(s, SW_AN_ST_PUSHED | SW_AN_ST_PUSHALT)) {
            s->fp_save_off = slot;
            set(s, alt ? SW_AN_ST_PUSHALT : SW_AN_ST_PUSHED, true);
        }
        break;
    case SW_IREG_LR:
        if (!alt && s->ra == SW_AN_RA_LIVE) {
            s->ra = SW_AN_RA_SLOT;
            s->ra_off = slot;
        }
        break;
    case SW_IREG_R0:
        if (!alt && has(s, SW_AN_ST_R0LR) && s->ra != SW_AN_RA_SLOT) {
            s->ra = SW_AN_RA_SLOT;
            s->ra_off = slot;
        }
        break;
    case SW_IREG_GPR: {
        int32_t off;
        if (alt && reg_known(s, m->gpr, &off) && off == 0) {
            s->cfa_slot = slot;
            set(s, SW_AN_ST_CFASLOT, true);
        }
        break;
    }
    default:
        break;
    }
}

static void
apply_load(struct sw_an_state *s, const struct sw_insn_mem *m)
{
    int32_t slot = 0;
    bool alt = false;
    bool ok = slot_of(s, m, &slot, &alt);
    switch (m->reg) {
    case SW_IREG_FP:
        if (ok && ((has(s, SW_AN_ST_PUSHED) && !alt) || (has(s, SW_AN_ST_PUSHALT) && alt)) &&
            slot == s->fp_save_off) {
            s->caller_fp = SW_AN_FP_CALLER;
            set(s, SW_AN_ST_PUSHED | SW_AN_ST_PUSHALT, false);
        }
        break;
    case SW_IREG_LR:
        if (ok && !alt && s->ra == SW_AN_RA_SLOT && slot == s->ra_off)
            s->ra = SW_AN_RA_LIVE;
        else if (s->ra == SW_AN_RA_LIVE)
            s->ra = SW_AN_RA_UNKNOWN;
        break;
    case SW_IREG_R0:
        set(s, SW_AN_ST_R0LR, ok && !alt && s->ra == SW_AN_RA_SLOT && slot == s->ra_off);
        break;
    case SW_IREG_GPR:
        if (ok && alt && has(s, SW_AN_ST_CFASLOT) && slot == s->cfa_slot)
            reg_set(s, m->gpr, 0);
        break;
    default:
        break;
    }
}

/* The constant general register of S after I (S0 before it): one register
 * at a time, the last one given a known value; writes and calls (which
 * clobber the caller-saved registers gcc builds frame sizes in) forget it.
 * Values are the register's as a signed 32-bit number (32-bit targets wrap;
 * a 64-bit value beyond that range is no frame size: not kept). */
static void
const_transfer(const struct arch_desc *a, const struct sw_insn *i, const struct sw_an_state *s0,
               struct sw_an_state *s)
{
    const bool k0 = has(s0, SW_AN_ST_KCONST);
    bool known = false;
    int64_t v = 0;

    switch (i->k_op) {
    case SW_K_NONE:
        break;
    case SW_K_SET:
        known = true;
        v = i->k_imm;
        break;
    case SW_K_ADD:
        known = k0 && s0->k_gpr == i->k_src;
        v = (int64_t)((uint64_t)(int64_t)s0->k_val + (uint64_t)i->k_imm);
        break;
    case SW_K_OR:
        known = k0 && s0->k_gpr == i->k_src;
        v = (int64_t)((uint64_t)(int64_t)s0->k_val | (uint64_t)i->k_imm);
        break;
    case SW_K_INSERT: {
        uint64_t mask = (uint64_t)0xffff << i->k_shift;
        known = k0 && s0->k_gpr == i->k_dst;
        v = (int64_t)(((uint64_t)(int64_t)s0->k_val & ~mask) |
                      ((uint64_t)i->k_imm << i->k_shift & mask));
        break;
    }
    }
    if (known && a->word_size == 4)
        v = (int32_t)(uint32_t)v;
    else if (known && i->k_w32)
        v = (int64_t)(uint32_t)v;
    if (known && v >= INT32_MIN && v <= INT32_MAX) {
        s->k_gpr = (uint16_t)i->k_dst;
        s->k_val = (int32_t)v;
        set(s, SW_AN_ST_KCONST, true);
        return;
    }
    bool lost = i->flow == SW_FLOW_CALL || (i->k_op != SW_K_NONE && s->k_gpr == i->k_dst);
    for (uint8_t k = 0; k < i->ngpr_writes; k++)
        lost |= s->k_gpr == i->gpr_writes[k];
    if (lost)
        set(s, SW_AN_ST_KCONST, false);
}

void
sw_an_transfer(const struct arch_desc *a, const struct sw_insn *i, sw_addr addr,
               struct sw_an_state *s)
{
    const struct sw_an_state s0 = *s;
    const bool sp0 = has(&s0, SW_AN_ST_SP), alt0 = has(&s0, SW_AN_ST_ALT);
    const int64_t word = a->word_size;

    switch (i->sp) {
    case SW_SP_KEEP:
        break;
    case SW_SP_ADD:
        s->height = (int32_t)(s0.height - i->sp_delta);
        break;
    case SW_SP_FROM_FP:
        set(s, SW_AN_ST_SP, has(&s0, SW_AN_ST_FPCFA | SW_AN_ST_FPALT));
        set(s, SW_AN_ST_ALT, !has(&s0, SW_AN_ST_FPCFA) && has(&s0, SW_AN_ST_FPALT));
        s->height =
            (int32_t) - ((has(&s0, SW_AN_ST_FPCFA) ? s0.fp_off : s0.fp_alt_off) + i->sp_delta);
        break;
    case SW_SP_FROM_REG: {
        int32_t off = 0;
        set(s, SW_AN_ST_SP, reg_known(&s0, i->sp_reg, &off));
        set(s, SW_AN_ST_ALT, false);
        s->height = (int32_t) - (off + i->sp_delta);
        break;
    }
    case SW_SP_ADD_REG:
        /* SP += a register: known when it holds a known constant */
        if (has(&s0, SW_AN_ST_KCONST) && s0.k_gpr == i->sp_reg)
            s->height = (int32_t)(s0.height - (i->sp_reg_neg ? -(int64_t)s0.k_val : s0.k_val));
        else
            set(s, SW_AN_ST_SP | SW_AN_ST_ALT, false);
        break;
    case SW_SP_BACKCHAIN:
        s->height = 0; /* [SP] is the caller's SP: the CFA */
        set(s, SW_AN_ST_SP, true);
        set(s, SW_AN_ST_ALT, false);
        break;
    case SW_SP_ALIGN:
        /* A new base L: facts relative to an older one are lost. */
        set(s, SW_AN_ST_FPALT | SW_AN_ST_PUSHALT | SW_AN_ST_CFASLOT, false);
        set(s, SW_AN_ST_SP | SW_AN_ST_ALT, sp0 && !alt0);
        s->height = 0;
        break;
    case SW_SP_OTHER:
        set(s, SW_AN_ST_SP | SW_AN_ST_ALT, false);
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
        set(s, SW_AN_ST_FPCFA, sp0 && !alt0);
        set(s, SW_AN_ST_FPALT, sp0 && alt0);
        s->fp_off = s->fp_alt_off = (int32_t)(-s0.height + i->fp_off);
        if (s->caller_fp == SW_AN_FP_CALLER)
            s->caller_fp =
                has(s, SW_AN_ST_PUSHED | SW_AN_ST_PUSHALT) ? SW_AN_FP_SAVED : SW_AN_FP_UNKNOWN;
        break;
    case SW_FP_LOAD:
    case SW_FP_OTHER:
        set(s, SW_AN_ST_FPCFA | SW_AN_ST_FPALT, false);
        s->caller_fp = SW_AN_FP_UNKNOWN;
        break;
    }
    for (uint8_t k = 0; k < i->ngpr_writes; k++)
        reg_forget(s, i->gpr_writes[k]);
    if (i->gpr_from_sp && sp0 && !alt0 &&
        (i->gpr_set_plus == 0 || (has(&s0, SW_AN_ST_KCONST) && s0.k_gpr == i->gpr_set_plus)))
        reg_set(s, i->gpr_set,
                (int32_t)(-s0.height + i->gpr_set_off + (i->gpr_set_plus ? s0.k_val : 0)));
    /* A register holding CFA + off moved by an immediate (addi r12,r12,-4096). */
    int32_t roff;
    if (i->k_op == SW_K_ADD && i->k_dst == i->k_src && reg_known(&s0, i->k_src, &roff))
        reg_set(s, i->k_dst, (int32_t)(roff + i->k_imm));
    const_transfer(a, i, &s0, s);
    /* The flags of a compare of SP with the register that holds the probe
     * loop's bound: the next conditional jump tells whether SP reached it. */
    set(s, SW_AN_ST_CMPSP | SW_AN_ST_CMPSP2, false);
    int cmp_k = i->cmp_sp && reg_slot(&s0, i->cmp_reg) >= 0 ? reg_slot(s, i->cmp_reg) : -1;
    if (cmp_k >= 0)
        set(s, cmpsp_flag[cmp_k], true);
    /* Loads and stores: FP-based slots use FP as it was before. */
    for (uint8_t k = 0; k < i->nstores; k++) {
        struct sw_an_state v = *s;
        if (i->stores[k].fp_base)
            v = s0;
        struct sw_an_state t = v;
        apply_store(&t, &i->stores[k]);
        s->ra = t.ra;
        s->ra_off = t.ra_off;
        s->fp_save_off = t.fp_save_off;
        s->cfa_slot = t.cfa_slot;
        s->flags = (uint16_t)(s->flags |
                              (t.flags & (SW_AN_ST_PUSHED | SW_AN_ST_PUSHALT | SW_AN_ST_CFASLOT)));
    }
    for (uint8_t k = 0; k < i->nloads; k++) {
        struct sw_an_state t = *s;
        if (i->loads[k].fp_base) {
            t.flags = (uint16_t)((t.flags & ~(SW_AN_ST_FPCFA | SW_AN_ST_FPALT)) |
                                 (s0.flags & (SW_AN_ST_FPCFA | SW_AN_ST_FPALT)));
            t.fp_off = s0.fp_off;
            t.fp_alt_off = s0.fp_alt_off;
        }
        apply_load(&t, &i->loads[k]);
        t.flags = (uint16_t)((t.flags & ~(SW_AN_ST_FPCFA | SW_AN_ST_FPALT)) |
                             (s->flags & (SW_AN_ST_FPCFA | SW_AN_ST_FPALT)));
        t.fp_off = s->fp_off;
        t.fp_alt_off = s->fp_alt_off;
        *s = t;
    }
    if (i->lr_to_r0)
        set(s, SW_AN_ST_R0LR, s->ra == SW_AN_RA_LIVE); /* LR still holds it too */
    if (i->r0_to_lr) {
        if (has(s, SW_AN_ST_R0LR))
            s->ra = SW_AN_RA_LIVE;
        else if (s->ra == SW_AN_RA_LIVE || s->ra == SW_AN_RA_IN_R0)
            s->ra = SW_AN_RA_UNKNOWN;
    }
    if (i->writes[SW_IREG_LR] && (s->ra == SW_AN_RA_LIVE || s->ra == SW_AN_RA_IN_R0))
        s->ra = has(s, SW_AN_ST_R0LR) ? SW_AN_RA_IN_R0 : SW_AN_RA_UNKNOWN;
    if (i->writes[SW_IREG_R0]) {
        set(s, SW_AN_ST_R0LR, false);
        if (s->ra == SW_AN_RA_IN_R0)
            s->ra = SW_AN_RA_UNKNOWN;
    }
    /* A call clobbers r0 (volatile in every PowerPC ABI): after it r0 holds no
     * return address.  The PIC idiom bcl 20,31,.+4 calls no code. */
    if (i->flow == SW_FLOW_CALL && !(i->has_target && i->target == addr + i->len)) {
        set(s, SW_AN_ST_R0LR, false);
        if (s->ra == SW_AN_RA_IN_R0)
            s->ra = SW_AN_RA_UNKNOWN;
    }
}

/* The state at a function's entry: CFA = SP (+ the pushed return address
 * on x86). */
static void
entry_state(const struct arch_desc *a, struct sw_an_state *s)
{
    memset(s, 0, sizeof *s);
    s->flags = SW_AN_ST_SP;
    s->caller_fp = SW_AN_FP_CALLER;
    if (a->call_ra_on_stack) {
        s->height = a->word_size;
        s->ra = SW_AN_RA_SLOT;
        s->ra_off = -(int32_t)a->word_size;
    } else {
        s->ra = SW_AN_RA_LIVE;
    }
}

/* What the reached code does, from the state before each instruction (a
 * save in a function's last instruction before a tail jump is not seen:
 * gcc's code restores, not saves, there). */
static void
summarise(const struct arch_desc *a, const struct sw_an_state *st, sw_addr size,
          struct sw_an_func *sum)
{
    const int32_t entry_height = a->call_ra_on_stack ? (int32_t)a->word_size : 0;
    for (sw_addr off = 0; off < size; off++) {
        const struct sw_an_state *s = &st[off];
        if ((s->flags & (SW_AN_ST_SEEN | SW_AN_ST_INSN)) != (SW_AN_ST_SEEN | SW_AN_ST_INSN))
            continue;
        bool pushed = has(s, SW_AN_ST_PUSHED | SW_AN_ST_PUSHALT);
        sum->saves_fp |= pushed;
        sum->sets_fp |=
            pushed && has(s, SW_AN_ST_FPCFA | SW_AN_ST_FPALT) && s->caller_fp == SW_AN_FP_SAVED;
        sum->saves_ra |= !a->call_ra_on_stack && s->ra == SW_AN_RA_SLOT;
        sum->allocates |= !has(s, SW_AN_ST_SP) || has(s, SW_AN_ST_ALT) || s->height != entry_height;
    }
}

/* Record the jump out of the function at OFF to TARGET with state S (the
 * latest state wins: the instruction is revisited until its state is final). */
static void
note_exit(struct sw_an_exits *ex, sw_addr *ex_off, sw_addr off, sw_addr target,
          const struct sw_an_state *s)
{
    size_t k = 0;
    while (k < ex->n && k < ex->max && !(ex_off[k] == off && ex->edges[k].target == target))
        k++;
    if (k == ex->n)
        ex->n++;
    if (k < ex->max) {
        ex_off[k] = off;
        ex->edges[k] = (struct sw_an_edge){ .target = target, .state = *s };
    }
}

/* Indirect jumps whose common state seeds unreached code, at most. */
#define AN_FLOW_MAX_IND 16

/* The state after the indirect jumps at offsets IND (N of them) in *OUT,
 * when every one was reached and all leave the same state with the SP and
 * the return address known: then true. */
static bool
ind_state(struct sw_disasm *dis, const struct arch_desc *a, const uint8_t *code, sw_addr start,
          sw_addr size, const struct sw_an_state *st, const sw_addr *ind, size_t n,
          struct sw_an_state *out)
{
    for (size_t k = 0; k < n; k++) {
        struct sw_insn i;
        struct sw_an_state t = st[ind[k]];
        if (sw_disasm_one(dis, code + ind[k], (size_t)(size - ind[k]), start + ind[k], &i) < 0)
            return false;
        sw_an_transfer(a, &i, start + ind[k], &t);
        if (!has(&t, SW_AN_ST_SP) || has(&t, SW_AN_ST_ALT) || t.ra == SW_AN_RA_UNKNOWN)
            return false;
        if (k > 0 && !state_equal(&t, out))
            return false;
        *out = t;
    }
    set(out, SW_AN_ST_CMPSP | SW_AN_ST_CMPSP2, false);
    return true;
}

int
sw_an_flow(struct sw_disasm *dis, const struct arch_desc *a, const uint8_t *code, sw_addr start,
           sw_addr size, const struct sw_an_seeds *seeds, struct sw_an_exits *exits,
           struct sw_an_state *st, struct sw_an_func *sum)
{
    memset(sum, 0, sizeof *sum);
    sum->start = start;
    sum->size = size;
    sw_addr *work = sw_malloc(sizeof *work * (size_t)(size + 1));
    size_t nwork = 0;
    bool *queued = sw_calloc((size_t)size, sizeof *queued);
    sw_addr *ex_off = exits && exits->max ? sw_calloc(exits->max, sizeof *ex_off) : NULL;
    if (work == NULL || queued == NULL || (exits && exits->max && ex_off == NULL)) {
        sw_free(work);
        sw_free(queued);
        sw_free(ex_off);
        return SW_ENOMEM;
    }
    if (exits)
        exits->n = 0;
    struct sw_an_state s;
    sw_addr ind[AN_FLOW_MAX_IND]; /* indirect jumps reached (jump tables, tail calls) */
    size_t nind = 0;
    bool ind_seeded = false, ind_ok = false, ind_done = false;
    struct sw_an_state ind_s; /* the state the indirect jumps leave, when ind_ok */
    sw_addr ind_cursor = 0;   /* x86: the next instruction of the sweep for cases */
    if (seeds == NULL || seeds->edges == NULL) {
        entry_state(a, &s);
        flow_into(st, 0, &s, true);
        work[nwork++] = 0;
        queued[0] = true;
    } else {
        for (size_t k = 0; k < seeds->n; k++) {
            sw_addr off = seeds->edges[k].target - start;
            if (seeds->edges[k].target < start || off >= size)
                continue;
            s = seeds->edges[k].state;
            set(&s, SW_AN_ST_CMPSP | SW_AN_ST_CMPSP2, false);
            flow_into(st, off, &s, true);
            if (!queued[off]) {
                work[nwork++] = off;
                queued[off] = true;
            }
        }
    }

again:
    while (nwork > 0) {
        sw_addr off = work[--nwork];
        queued[off] = false;
        struct sw_insn i;
        if (sw_disasm_one(dis, code + off, (size_t)(size - off), start + off, &i) < 0)
            continue; /* not code: the path ends */
        set(&st[off], SW_AN_ST_INSN, true);
        st[off].len = i.len;
        sum->signs_ra |= i.ra_signed;
        s = st[off];
        for (size_t k = 0; seeds && i.flow == SW_FLOW_CALL && i.has_target && k < seeds->nlr_savers;
             k++) {
            if (seeds->lr_savers[k] == i.target && i.nstores < 2) {
                i.stores[i.nstores++] = (struct sw_insn_mem){ .reg = SW_IREG_R0, .off = 16 };
                break;
            }
        }
        sw_an_transfer(a, &i, start + off, &s);
        /* After a compare of SP with a probe loop's bound, the edge where
         * they were equal has SP at the bound. */
        struct sw_an_state taken = s;
        for (int k = 0; k < 2; k++) {
            if (i.flow != SW_FLOW_CJUMP || i.cc == SW_CC_OTHER || !has(&st[off], cmpsp_flag[k]) ||
                !has(&st[off], drap_flag[k]))
                continue;
            struct sw_an_state *eq = i.cc == SW_CC_NE ? &s : &taken;
            eq->height = -st[off].drap_off[k];
            set(eq, SW_AN_ST_SP, true);
            set(eq, SW_AN_ST_ALT, false);
        }

        if (i.flow == SW_FLOW_JUMP && !i.has_target) {
            size_t k = 0;
            while (k < nind && ind[k] != off)
                k++;
            if (k == nind && nind < AN_FLOW_MAX_IND)
                ind[nind++] = off;
        }

        sw_addr succ[2];
        const struct sw_an_state *sst[2];
        bool strong[2];
        size_t nsucc = 0;
        sw_addr next = off + i.len;
        if (i.flow == SW_FLOW_NEXT || i.flow == SW_FLOW_CALL || i.flow == SW_FLOW_CJUMP) {
            succ[nsucc] = next;
            sst[nsucc] = &s;
            strong[nsucc++] = i.flow != SW_FLOW_CALL;
        }
        /* A jump out of the function is a tail call or a jump to its split-off
         * part: that path ends here. */
        if ((i.flow == SW_FLOW_JUMP || i.flow == SW_FLOW_CJUMP) && i.has_target) {
            if (i.target >= start && i.target < start + size) {
                succ[nsucc] = i.target - start;
                sst[nsucc] = &taken;
                strong[nsucc++] = true;
            } else if (exits) {
                note_exit(exits, ex_off, off, i.target, &taken);
            }
        }
        for (size_t k = 0; k < nsucc; k++) {
            if (succ[k] >= size)
                continue;
            if (flow_into(st, succ[k], sst[k], strong[k]) && !queued[succ[k]]) {
                work[nwork++] = succ[k];
                queued[succ[k]] = true;
            }
        }
    }
    /* Code the flow did not reach, in a function with indirect jumps that
     * all leave the same state: the cases of a jump table (AArch64 br,
     * PowerPC bctr, x86 jmp *%reg), which gcc enters at the height of the
     * dispatch (when SEEDS asks: stripped code).  x86 code is seeded where
     * the instructions of a sweep from the start begin, below SEEDS'
     * ind_end (code that other jumps enter is no case), one unreached
     * instruction at a time, lowest first, the flow run after each: a
     * case's later instructions get their states from its first (pushes
     * of arguments move SP), not from the dispatch. */
    if (seeds && seeds->seed_ind && nind > 0 && !ind_done) {
        if (!ind_seeded) {
            ind_seeded = true;
            ind_ok = ind_state(dis, a, code, start, size, st, ind, nind, &ind_s);
        }
        ind_done = !ind_ok;
        if (ind_ok && a->family == ARCH_FAMILY_X86) {
            sw_addr hi = seeds->ind_end && seeds->ind_end < size ? seeds->ind_end : size;
            while (ind_cursor < hi) {
                struct sw_insn i;
                sw_addr at = ind_cursor;
                if (sw_disasm_one(dis, code + at, (size_t)(size - at), start + at, &i) < 0 ||
                    i.len == 0) {
                    ind_cursor++;
                    continue;
                }
                ind_cursor += i.len;
                if (!has(&st[at], SW_AN_ST_SEEN)) {
                    flow_into(st, at, &ind_s, false);
                    work[nwork++] = at;
                    queued[at] = true;
                    goto again;
                }
            }
            ind_done = true;
        } else if (ind_ok) {
            ind_done = true;
            for (sw_addr off = 0; off + 4 <= size; off += 4) {
                if (has(&st[off], SW_AN_ST_SEEN))
                    continue;
                flow_into(st, off, &ind_s, false);
                work[nwork++] = off;
                queued[off] = true;
            }
            goto again;
        }
    }
    sw_free(work);
    sw_free(queued);
    sw_free(ex_off);
    summarise(a, st, size, sum);
    return 0;
}

void
sw_an_state_facts(const struct sw_an_state *s, struct sw_an_pc *out)
{
    memset(out, 0, sizeof *out);
    out->sp_known = has(s, SW_AN_ST_SP);
    out->sp_alt = has(s, SW_AN_ST_ALT);
    out->height = s->height;
    out->fp_cfa = has(s, SW_AN_ST_FPCFA);
    out->fp_off = s->fp_off;
    out->fp_alt = has(s, SW_AN_ST_FPALT);
    out->fp_alt_off = s->fp_alt_off;
    out->cfa_saved = has(s, SW_AN_ST_CFASLOT);
    out->cfa_slot = s->cfa_slot;
    out->ra = (enum sw_an_ra)s->ra;
    out->ra_off = s->ra_off;
    out->caller_fp = (enum sw_an_fp)s->caller_fp;
    out->fp_save_off = s->fp_save_off;
    out->fp_pushed = has(s, SW_AN_ST_PUSHED | SW_AN_ST_PUSHALT);
    out->fp_save_alt = has(s, SW_AN_ST_PUSHALT);
}
