/* walker/steppers/debug_step.c -- one frame unwound by a DWARF CFI row.
 *
 * Computes the CFA, then every register rule of the row (DWARF 5 section
 * 6.4.1) from the callee's registers and the target's memory.  No module
 * lookup and no caching: that is the stepper's (debug_cfi.c).
 */
#include "walker/steppers/debug_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "expr/expr.h"
#include "walker/walker_internal.h"

_Static_assert(SW_CFI_MAX_REGS == SW_FRAME_MAX_REGS,
               "a CFI row has a rule for each frame register");

struct unwind {
    const struct arch_desc *a;
    struct sw_proc *p;
    const struct sw_cfi_row *row;
    struct sw_frame cur; /* the callee, with SP, FP and PC filled in */
    sw_addr cfa;
    sw_addr pc; /* the lookup PC, for messages */
    struct sw_errbuf *err;
};

static int
expr_read(void *arg, sw_addr addr, void *buf, size_t len)
{
    struct unwind *u = arg;
    return u->p->ops->read_mem(u->p, addr, buf, len);
}

static bool
expr_reg(void *arg, unsigned dw, sw_word *val)
{
    struct unwind *u = arg;
    return sw_frame_reg(&u->cur, dw, val);
}

static sw_word
word_mask(const struct arch_desc *a)
{
    return a->word_size >= 8 ? ~(sw_word)0 : ((sw_word)1 << (8 * a->word_size)) - 1;
}

static const char *
reg_name(const struct arch_desc *a, unsigned dw, char *buf, size_t len)
{
    const char *n = arch_dwarf_name(a, (int)dw);
    if (n)
        return n;
    snprintf(buf, len, "DWARF register %u", dw);
    return buf;
}

/* Read the saved word at ADDR.  A failed read leaves the process's message
 * in U->err, prefixed with what was being recovered. */
static int
read_slot(struct unwind *u, unsigned col, sw_addr addr, sw_word *val)
{
    char nb[32];
    int rc = sw_proc_read_word(u->p, addr, val);
    if (rc < 0) {
        sw_err_copy(u->err, &u->p->err);
        if (u->err->code != rc)
            sw_fail(u->err, rc, "%s", sw_strerror(rc));
        sw_err_prefix(u->err, "CFI at 0x%" PRIx64 ": %s saved at 0x%" PRIx64 ": ", u->pc,
                      reg_name(u->a, col, nb, sizeof nb), addr);
    }
    return rc;
}

/* A rule's expression (PUSH_CFA: the CFA is known and pushed first) or the
 * CFA's own. */
static int
eval(struct unwind *u, const struct sw_cfi_expr *e, bool push_cfa, const char *what, sw_addr *out)
{
    struct sw_expr_ctx ctx = {
        .addr_size = u->a->word_size,
        .big_endian = u->a->big_endian,
        .reg = expr_reg,
        .read = expr_read,
        .arg = u,
        .have_cfa = push_cfa,
        .push_cfa = push_cfa,
        .cfa = u->cfa,
        .err = u->err,
    };
    int rc = e->undecodable ? sw_fail(u->err, SW_EPROTO, "libdwarf cannot decode the expression")
                            : sw_expr_eval_word(&ctx, e->ops, e->nops, out);
    if (rc < 0)
        sw_err_prefix(u->err, "CFI at 0x%" PRIx64 ": %s: ", u->pc, what);
    return rc;
}

/* The caller's value of column COL.  Returns 1 with *VAL and *LOC, 0 when
 * the value is not known, or a negative code. */
static int
rule_value(struct unwind *u, unsigned col, sw_word *val, struct sw_location *loc)
{
    const struct sw_cfi_rule *r = &u->row->rules[col];
    sw_word mask = word_mask(u->a);
    sw_addr addr;
    char what[48], nb[32];
    int rc;

    memset(loc, 0, sizeof *loc);
    switch (r->kind) {
    case SW_CFI_UNDEFINED:
        return 0;
    case SW_CFI_SAME:
        if (!sw_frame_reg(&u->cur, col, val))
            return 0;
        *loc = (struct sw_location){ .kind = SW_LOC_REGISTER, .reg = col };
        return 1;
    case SW_CFI_REGISTER:
        if (!sw_frame_reg(&u->cur, r->reg, val))
            return 0;
        *loc = (struct sw_location){ .kind = SW_LOC_REGISTER, .reg = r->reg };
        return 1;
    case SW_CFI_OFFSET:
        addr = (u->cfa + (sw_addr)r->offset) & mask;
        if ((rc = read_slot(u, col, addr, val)) < 0)
            return rc;
        *loc = (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = addr };
        return 1;
    case SW_CFI_VAL_OFFSET:
        *val = (u->cfa + (sw_addr)r->offset) & mask;
        return 1;
    case SW_CFI_EXPRESSION:
        snprintf(what, sizeof what, "address of %s", reg_name(u->a, col, nb, sizeof nb));
        if ((rc = eval(u, &r->expr, true, what, &addr)) < 0)
            return rc;
        if ((rc = read_slot(u, col, addr, val)) < 0)
            return rc;
        *loc = (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = addr };
        return 1;
    case SW_CFI_VAL_EXPRESSION:
        snprintf(what, sizeof what, "value of %s", reg_name(u->a, col, nb, sizeof nb));
        if ((rc = eval(u, &r->expr, true, what, val)) < 0)
            return rc;
        return 1;
    }
    return 0;
}

static enum sw_gcf not_me(struct sw_errbuf *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static enum sw_gcf
not_me(struct sw_errbuf *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sw_vfail(err, SW_ENOCFI, fmt, ap);
    va_end(ap);
    return SW_GCF_NOT_ME;
}

/* A failure while recovering a value: a dead link ends the walk, anything
 * else (unreadable stack, an expression we cannot evaluate) is a fact
 * about this frame. */
static enum sw_gcf
gcf_of(int code)
{
    return sw_is_link_error(code) ? SW_GCF_ERROR : SW_GCF_NOT_ME;
}

enum sw_gcf
sw_debug_apply_row(const struct arch_desc *a, struct sw_proc *p, const struct sw_cfi_row *row,
                   const struct sw_frame *in, struct sw_frame *out, struct sw_errbuf *err)
{
    struct unwind u;
    struct sw_frame f;
    sw_word v, mask = word_mask(a);
    char nb[32];
    int rc;

    memset(&u, 0, sizeof u);
    u.a = a;
    u.p = p;
    u.row = row;
    u.err = err;
    u.pc = sw_frame_lookup_pc(in);
    /* The frame's own RA, SP and FP are authoritative whoever produced it;
     * the registers carry what else is known.  A guessed FP does not
     * replace a recovered one. */
    u.cur = *in;
    sw_frame_set_reg(&u.cur, (unsigned)a->dw_pc, in->ra);
    sw_frame_set_reg(&u.cur, (unsigned)a->dw_sp, in->sp);
    if (!sw_frame_reg(&u.cur, (unsigned)a->dw_fp, &v))
        sw_frame_set_reg(&u.cur, (unsigned)a->dw_fp, in->fp);

    /* The CFA.  DW_CFA_GNU_args_size is not applied: the row's CFA already
     * counts the arguments pushed for the call in progress, and the
     * caller's SP at that call is the CFA.  gdb ignores the operand; GCC's
     * unwinder and LLVM's libunwind add it only to resume at a landing pad,
     * which expects the arguments popped (tests/unit/cfi/test_cfi_asm.c). */
    if (row->cfa_is_expr) {
        rc = eval(&u, &row->cfa_expr, false, "CFA", &u.cfa);
        if (rc < 0)
            return gcf_of(rc);
    } else {
        if (!sw_frame_reg(&u.cur, row->cfa_reg, &v))
            return not_me(err, "CFI at 0x%" PRIx64 ": the CFA needs %s, which is not known", u.pc,
                          reg_name(a, row->cfa_reg, nb, sizeof nb));
        u.cfa = (v + (sw_addr)row->cfa_offset) & mask;
    }

    /* Every register the caller has: callee-saved ones propagate frame by
     * frame, so the next step's CFA and rules can use them. */
    sw_frame_init(&f);
    sw_word ra = 0, sp = u.cfa, fp = in->fp;
    bool have_ra = false, ra_undefined = false;
    for (unsigned col = 0; col < SW_FRAME_MAX_REGS; col++) {
        struct sw_location loc;
        rc = rule_value(&u, col, &v, &loc);
        if (rc < 0) {
            /* An unreadable slot or a link failure decides the frame; an
             * expression we cannot evaluate only loses that register,
             * unless it is the return address. */
            if (gcf_of(rc) == SW_GCF_ERROR || rc == SW_EMEM || col == row->ra_column)
                return gcf_of(rc);
            continue;
        }
        if (rc == 0) {
            if (col == row->ra_column && row->rules[col].kind == SW_CFI_UNDEFINED)
                ra_undefined = true;
            continue;
        }
        v &= mask;
        sw_frame_set_reg(&f, col, v);
        if (col == row->ra_column) {
            ra = v;
            have_ra = true;
            f.ra_loc = loc;
        }
        if (col == (unsigned)a->dw_fp) {
            fp = v;
            f.fp_loc = loc;
        }
        if (col == (unsigned)a->dw_sp && row->rules[col].kind != SW_CFI_SAME) {
            /* An explicit rule for the SP (signal trampolines have one)
             * wins over "the caller's SP is the CFA". */
            sp = v;
            f.sp_loc = loc;
        }
    }

    /* A return address saved at or above the CFA on AArch64 (PowerPC keeps
     * LR in the caller's frame, above the CFA, by its ABI): the slots above
     * the CFA were pushed before this function ran, and the caller's SP
     * lies past them.  glibc's AArch64
     * lazy-binding resolver (_dl_runtime_resolve, sysdeps/aarch64/
     * dl-trampoline.S) is such: PLT0 pushes x16 and x30, and its CFI counts
     * the CFA from below them, so that "the caller's SP is the CFA" is 16
     * bytes short and the caller's own CFI reads the wrong slots (gdb then
     * shows the caller twice and stops). */
    if (a->family == ARCH_FAMILY_AARCH64 && row->ra_column < SW_FRAME_MAX_REGS &&
        row->rules[row->ra_column].kind == SW_CFI_OFFSET &&
        row->rules[row->ra_column].offset >= 0 &&
        !(row->rules[a->dw_sp].kind != SW_CFI_SAME &&
          row->rules[a->dw_sp].kind != SW_CFI_UNDEFINED)) {
        sw_addr past = (u.cfa + (sw_addr)row->rules[row->ra_column].offset + a->word_size + 15) &
                       ~(sw_addr)15 & mask;
        if (past > sp)
            sp = past;
    }

    /* glibc's _start and clone3 mark the outermost frame this way. */
    if (ra_undefined)
        return SW_GCF_STACKBOTTOM;
    if (row->ra_column >= SW_FRAME_MAX_REGS || !have_ra)
        return not_me(err, "CFI at 0x%" PRIx64 ": the return address (%s) is not known", u.pc,
                      reg_name(a, row->ra_column, nb, sizeof nb));
    /* Signed by `paciasp`: the caller's PC without the code, its x30 as
     * saved (gdb's aarch64_dwarf2_prev_register does the same). */
    if (row->ra_signed && a->ra_unsign != NULL)
        ra = a->ra_unsign(ra);
    /* A zero read at an SP found by scanning may be a stale slot, and on
     * M-profile a zero read from the stack is no bottom either: the frame
     * goes to the walker, whose rule refuses it. */
    if (ra == 0 && in->trust != SW_TRUST_SCAN &&
        !(a->exc_return != NULL && f.ra_loc.kind == SW_LOC_ADDRESS))
        return SW_GCF_STACKBOTTOM;

    /* The caller's frame lies outward of the callee's.  On machines whose
     * calls push the return address it is strictly outward; elsewhere a
     * leaf that allocates nothing has CFA == SP.  Signal frames point
     * anywhere (sigaltstack). */
    bool signal = in->kind == SW_FRAME_SIGNAL || row->signal_frame;
    if (!signal && (sp < in->sp || (a->call_ra_on_stack && sp == in->sp)))
        return not_me(
            err, "CFI at 0x%" PRIx64 ": the caller's SP 0x%" PRIx64 " is not outward of 0x%" PRIx64,
            u.pc, sp, in->sp);

    sw_frame_set_reg(&f, (unsigned)a->dw_sp, sp);
    sw_frame_set_reg(&f, (unsigned)a->dw_pc, ra);
    f.ra = ra;
    f.sp = sp;
    f.fp = fp;
    f.thread = in->thread;
    f.level = in->level + 1;
    f.kind = SW_FRAME_NORMAL;
    f.trust = SW_TRUST_CFI;
    /* A signal trampoline's caller was interrupted, not calling: its PC is
     * exact and must be looked up as it is. */
    f.non_call = row->signal_frame;
    *out = f;
    return SW_GCF_SUCCESS;
}

enum sw_gcf
sw_debug_step_with_cfi(const struct arch_desc *a, struct sw_proc *p, struct sw_cfi *cfi,
                       sw_addr bias, const struct sw_frame *in, struct sw_frame *out,
                       struct sw_errbuf *err)
{
    struct sw_cfi_row row;
    sw_addr pc = sw_frame_lookup_pc(in);

    int rc = sw_cfi_row_at(cfi, (pc - bias) & word_mask(a), &row, err);
    if (rc < 0) {
        if (rc == SW_ENOMEM)
            return SW_GCF_ERROR;
        sw_err_prefix(err, "CFI at 0x%" PRIx64 ": ", pc);
        return SW_GCF_NOT_ME;
    }
    return sw_debug_apply_row(a, p, &row, in, out, err);
}
