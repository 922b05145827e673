/* walker/steppers/frame_func_ppc.c -- FrameFuncStepper and FrameFuncHelper for PowerPC.
 *
 * Walks the ABI back chain (ppc32 SysV, ppc64 ELFv1 and ELFv2 alike): the
 * word at SP is the caller's SP, and a function that calls saves its return
 * address in its CALLER's frame header, at caller SP + 4 (ppc32) or + 16
 * (ppc64: {back chain, CR, LR}; notes/anchors.md section 1.3, Dyninst's
 * ppc-swk.C).  Until the prologue has run (frame 0, or code a signal
 * interrupted) and in leaf functions the return address is the live LR, and
 * a frame not yet allocated means the caller's SP is the SP itself: the
 * helper reads the function's first instructions from the local ELF file
 * (no round trip) to find `stwu/stdu r1,-N(r1)` and `mflr r0; stw/std r0`.
 * The ELFv1 .opd descriptors are resolved by the ELF cache, so symbols here
 * are code addresses.  Not for code that keeps its frame another way (CFI's
 * job).
 */
#include "walker/steppers/frame_func.h"

#include <string.h>

#include "arch/ppc_regs.h"
#include "walker/walker_internal.h"

/* Power ISA encodings (Book I; D-, DS- and X-forms).  gdb's rs6000
 * skip_prologue scanner matches the same words. */
#define PPC_MFLR_R0   0x7c0802a6u /* mflr r0 */
#define PPC_MTLR_R0   0x7c0803a6u /* mtlr r0 */
#define PPC_BLR       0x4e800020u /* blr */
#define PPC_STWU_R1   0x94210000u /* stwu r1,d(r1)       mask PPC_D_MASK */
#define PPC_STW_R0    0x90010000u /* stw r0,d(r1)        mask PPC_D_MASK */
#define PPC_STW_R31   0x93e10000u /* stw r31,d(r1)       mask PPC_D_MASK */
#define PPC_STDU_R1   0xf8210001u /* stdu r1,ds(r1)      mask PPC_DS_MASK */
#define PPC_STD_R0    0xf8010000u /* std r0,ds(r1)       mask PPC_DS_MASK */
#define PPC_STD_R31   0xfbe10000u /* std r31,ds(r1)      mask PPC_DS_MASK */
#define PPC_STWUX_R1  0x7c21016eu /* stwux r1,r1,rB      mask PPC_X_RB_MASK */
#define PPC_STDUX_R1  0x7c21016au /* stdux r1,r1,rB      mask PPC_X_RB_MASK */
#define PPC_D_MASK    0xffff0000u
#define PPC_DS_MASK   0xffff0003u
#define PPC_X_RB_MASK 0xffff07ffu
#define PPC_OP(i)     ((i) >> 26)
#define PPC_RT(i)     (((i) >> 21) & 31u)
#define PPC_RA(i)     (((i) >> 16) & 31u)
#define PPC_XO(i)     (((i) >> 1) & 0x3ffu)

/* How far the analysis looks: gcc puts the stack allocation and the LR save
 * within the first few instructions (after the ELFv2 global entry's two). */
#define PPC_PROLOGUE_WORDS 16
#define PPC_EPILOGUE_WORDS 8

/* What the first instructions of a function say; offsets in bytes from its
 * start.  A store "runs" once the PC is past it. */
struct ppc_prologue {
    bool alloc;         /* stwu/stdu r1 (the frame and its back chain) */
    bool alloc_dynamic; /* by stwux/stdux: its size is in a register */
    bool lr_saved;      /* mflr r0, then stw/std r0 to the caller's header */
    bool r31_saved;     /* stw/std r31 (the conventional frame pointer) */
    uint32_t alloc_off, lr_off, r31_off;
    int64_t alloc_disp; /* -N of stwu r1,-N(r1) */
    int64_t r31_disp;   /* d of stw/std r31,d(r1) */
};

static int64_t
d_disp(uint32_t insn)
{
    return (int16_t)(insn & 0xffffu);
}

static int64_t
ds_disp(uint32_t insn)
{
    return (int16_t)(insn & 0xfffcu);
}

static bool
is_branch(uint32_t insn)
{
    uint32_t op = PPC_OP(insn);
    /* b/bl 18, bc 16, bclr/bcctr (19, XO 16/528) */
    return op == 18 || op == 16 || (op == 19 && (PPC_XO(insn) == 16 || PPC_XO(insn) == 528));
}

/* Whether INSN writes r1 (the epilogue's frame pop): addi/addis, lwz/lwzu,
 * ld (D/DS forms with RT r1) and mr r1,rX (or r1,rX,rX). */
static bool
writes_r1(uint32_t insn)
{
    uint32_t op = PPC_OP(insn);
    if ((op == 14 || op == 15 || op == 32 || op == 33 || op == 58) && PPC_RT(insn) == 1)
        return true;
    return op == 31 && PPC_XO(insn) == 444 && PPC_RA(insn) == 1;
}

static uint32_t
insn_at(const struct arch_desc *a, const uint8_t *code, size_t i)
{
    /* Instructions are words in the target's byte order (ppc64le: little). */
    return (uint32_t)arch_load(a, code + 4 * i, 4);
}

static void
scan_prologue(const struct arch_desc *a, const uint8_t *code, size_t nwords,
              struct ppc_prologue *pro)
{
    bool mflr = false;
    memset(pro, 0, sizeof *pro);
    for (size_t i = 0; i < nwords; i++) {
        uint32_t insn = insn_at(a, code, i);
        uint32_t off = (uint32_t)(4 * i);
        if (insn == PPC_MFLR_R0) {
            mflr = true;
        } else if (!pro->alloc && ((insn & PPC_D_MASK) == PPC_STWU_R1 ||
                                   (a->word_size == 8 && (insn & PPC_DS_MASK) == PPC_STDU_R1))) {
            pro->alloc = true;
            pro->alloc_off = off;
            pro->alloc_disp = a->word_size == 8 ? ds_disp(insn) : d_disp(insn);
        } else if (!pro->alloc && ((insn & PPC_X_RB_MASK) == PPC_STWUX_R1 ||
                                   (insn & PPC_X_RB_MASK) == PPC_STDUX_R1)) {
            pro->alloc = pro->alloc_dynamic = true;
            pro->alloc_off = off;
        } else if (mflr && !pro->lr_saved &&
                   ((a->word_size == 4 && (insn & PPC_D_MASK) == PPC_STW_R0) ||
                    (a->word_size == 8 && (insn & PPC_DS_MASK) == PPC_STD_R0))) {
            pro->lr_saved = true;
            pro->lr_off = off;
        } else if (!pro->r31_saved &&
                   ((a->word_size == 4 && (insn & PPC_D_MASK) == PPC_STW_R31) ||
                    (a->word_size == 8 && (insn & PPC_DS_MASK) == PPC_STD_R31))) {
            pro->r31_saved = true;
            pro->r31_off = off;
            pro->r31_disp = a->word_size == 8 ? ds_disp(insn) : d_disp(insn);
        } else if (PPC_OP(insn) == 18 && (insn & 1u)) {
            break; /* bl: the body, a prologue precedes every call.  Not
                    * other branches: shrink-wrapped code tests and branches
                    * (to an early return) before its prologue. */
        }
    }
}

/* Read the prologue of the function covering PC.  Returns 0, SW_ENOSYM or
 * the code of a failed read. */
static int
read_prologue(struct sw_walker *w, sw_addr pc, struct sw_symbol *sym, struct ppc_prologue *pro)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    uint8_t code[4 * PPC_PROLOGUE_WORDS];

    if (sw_walker_symlookup(w)->ops->lookup(sw_walker_symlookup(w), pc, sym) < 0)
        return SW_ENOSYM;
    /* Read no further than the function: the last one in a file may end
     * right where the file's contents do. */
    size_t n = sym->size && sym->size < sizeof code ? (size_t)sym->size & ~(size_t)3 : sizeof code;
    int rc = sw_walker_read_code(w, sym->start, code, n);
    if (rc < 0)
        return rc;
    scan_prologue(a, code, n / 4, pro);
    return 0;
}

/* At an exact PC: whether the frame is already popped, i.e. a `blr` follows
 * with no write to r1 and no other branch in between; then *LR_IN_MEM says
 * whether the `mtlr r0` that reloads the return address is still to come. */
static bool
in_epilogue(struct sw_walker *w, const struct sw_symbol *sym, sw_addr pc, bool *lr_in_mem)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    uint8_t code[4 * PPC_EPILOGUE_WORDS];
    size_t n = sizeof code;

    if (sym->size && sym->start + sym->size > pc && sym->start + sym->size - pc < n)
        n = (size_t)(sym->start + sym->size - pc) & ~(size_t)3;
    if (n == 0 || sw_walker_read_code(w, pc, code, n) < 0)
        return false;
    *lr_in_mem = false;
    for (size_t i = 0; i < n / 4; i++) {
        uint32_t insn = insn_at(a, code, i);
        if (insn == PPC_BLR)
            return true;
        if (writes_r1(insn) || is_branch(insn))
            return false;
        if (insn == PPC_MTLR_R0)
            *lr_in_mem = true;
    }
    return false;
}

/* Where the frame at PC stands: whether its frame is allocated and whether
 * its return address is saved yet.  EXACT as for sw_frame_func_alloc. */
struct ppc_state {
    bool allocated;
    bool lr_in_mem;
    bool popped; /* in the epilogue after the frame is gone */
};

static struct ppc_state
frame_state(struct sw_walker *w, const struct sw_symbol *sym, const struct ppc_prologue *pro,
            sw_addr pc, bool exact)
{
    struct ppc_state st = { .allocated = true, .lr_in_mem = true };
    if (!exact)
        return st; /* it made a call: the prologue has run */
    bool lr_in_mem;
    if (in_epilogue(w, sym, pc, &lr_in_mem))
        return (struct ppc_state){ .allocated = false, .lr_in_mem = lr_in_mem, .popped = true };
    sw_addr off = pc - sym->start;
    st.allocated = pro->alloc && off > pro->alloc_off;
    st.lr_in_mem = pro->lr_saved && off > pro->lr_off;
    return st;
}

static int
ppc_alloc(struct sw_walker *w, sw_addr pc, bool exact, struct sw_frame_alloc *out)
{
    struct sw_symbol sym;
    struct ppc_prologue pro;
    struct sw_frame_alloc r = { SW_FRAME_UNKNOWN_T, SW_FRAME_UNKNOWN_S };

    int rc = read_prologue(w, pc, &sym, &pro);
    if (rc < 0) {
        *out = r;
        return rc;
    }
    /* STANDARD: allocates a frame and saves the LR; SAVEFP_ONLY: allocates a
     * frame but keeps the return address in the LR (a leaf with locals);
     * NO_FRAME: neither (a leaf that lives in its caller's frame). */
    if (pro.alloc)
        r.type = pro.lr_saved ? SW_FRAME_STANDARD : SW_FRAME_SAVEFP_ONLY;
    else
        r.type = SW_FRAME_NO_FRAME;
    struct ppc_state st = frame_state(w, &sym, &pro, pc, exact);
    if (st.popped || (!st.allocated && !st.lr_in_mem))
        r.state = r.type == SW_FRAME_NO_FRAME ? SW_FRAME_SET : SW_FRAME_UNSET;
    else if (r.type == SW_FRAME_STANDARD && !(st.allocated && st.lr_in_mem))
        r.state = SW_FRAME_HALFSET;
    else
        r.state = SW_FRAME_SET;
    *out = r;
    return 0;
}

static enum sw_gcf
ppc_caller_frame(struct sw_stepper *s, const struct sw_frame *in, struct sw_frame *out)
{
    struct sw_walker *w = s->walker;
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    const unsigned word = a->word_size;
    /* The LR save slot of the ABI's frame header. */
    const sw_addr lr_slot = word == 4 ? 4 : 16;
    bool exact = in->top || in->non_call;
    sw_addr pc = sw_frame_lookup_pc(in);
    struct sw_symbol sym;
    struct ppc_prologue pro;
    struct ppc_state st = { .allocated = true, .lr_in_mem = true };
    sw_word caller_sp = in->sp, ra, fp = in->fp;
    sw_addr ra_at = 0, fp_at = 0;
    enum sw_gcf r;

    /* No symbol: Dyninst's assumption, a standard frame that is set up. */
    int rc = read_prologue(w, pc, &sym, &pro);
    if (rc < 0 && sw_is_link_error(rc))
        return sw_walker_fail_from_proc(w, rc), SW_GCF_ERROR;
    bool known = rc == 0;
    if (known)
        st = frame_state(w, &sym, &pro, pc, exact);

    if (st.allocated) {
        if ((r = sw_ff_read_word(w, in->sp, &caller_sp)) != SW_GCF_SUCCESS)
            return r;
        if (caller_sp == 0)
            return SW_GCF_STACKBOTTOM; /* _start and thread entries end the chain with 0 */
        if (caller_sp <= in->sp)
            return SW_GCF_NOT_ME; /* not a back chain of this stack */
    }
    if (st.lr_in_mem) {
        ra_at = caller_sp + lr_slot;
        if ((r = sw_ff_read_word(w, ra_at, &ra)) != SW_GCF_SUCCESS)
            return r;
    } else if (sw_walker_frame_reg(w, in, PPC_DW_LR, &ra) != 1) {
        return SW_GCF_NOT_ME; /* a leaf, and the LR is not known here */
    }

    /* r31 the prologue saved, relative to the caller's SP: before the
     * allocation at SP + d, after it at SP - N + d. */
    if (known && !st.popped && pro.r31_saved && (!exact || pc - sym.start > pro.r31_off)) {
        if (!pro.alloc || pro.r31_off < pro.alloc_off)
            fp_at = caller_sp + (sw_addr)pro.r31_disp;
        else if (!pro.alloc_dynamic)
            fp_at = caller_sp + (sw_addr)pro.alloc_disp + (sw_addr)pro.r31_disp;
        if (fp_at && (r = sw_ff_read_word(w, fp_at, &fp)) != SW_GCF_SUCCESS)
            return r;
    }

    struct sw_frame f = *in; /* registers not saved are unchanged (gdb's rule) */
    f.ra = ra;
    f.sp = caller_sp;
    f.fp = fp;
    f.ra_loc = ra_at ? (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = ra_at }
                     : (struct sw_location){ .kind = SW_LOC_REGISTER, .reg = PPC_DW_LR };
    f.sp_loc = st.allocated ? (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = in->sp }
                            : (struct sw_location){ .kind = SW_LOC_REGISTER, .reg = PPC_DW_R1 };
    f.fp_loc = fp_at ? (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = fp_at }
                     : (struct sw_location){ .kind = SW_LOC_REGISTER, .reg = PPC_DW_R31 };
    f.kind = SW_FRAME_NORMAL;
    f.non_call = false;
    f.bottom = false;
    f.trust = SW_TRUST_FP;
    f.stepper = s;
    sw_frame_set_reg(&f, PPC_DW_PC, ra);
    sw_frame_set_reg(&f, PPC_DW_LR, ra); /* what the LR holds once the callee returns */
    sw_frame_set_reg(&f, PPC_DW_R1, caller_sp);
    sw_frame_set_reg(&f, PPC_DW_R31, fp);
    *out = f;
    return SW_GCF_SUCCESS;
}

const struct sw_ff_arch sw_ff_ppc = {
    .alloc = ppc_alloc,
    .caller_frame = ppc_caller_frame,
};
