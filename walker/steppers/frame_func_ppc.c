/* walker/steppers/frame_func_ppc.c -- FrameFuncStepper rules for PowerPC.
 *
 * Walks the ABI back chain (ppc32 SysV, ppc64 ELFv1 and ELFv2 alike): the
 * word at SP is the caller's SP once a function has allocated its frame
 * (stwu/stdu r1 store it), and a function that calls saves its return
 * address in its CALLER's frame header, at caller SP + 4 (ppc32) or + 16
 * (ppc64: {back chain, CR, LR}; the 64-bit ELF ABI's stack frame header,
 * as Dyninst's ppc-swk.C reads it).  Whether the frame is allocated yet and how big it is, where
 * the return address is (the live LR, r0 after mflr, the header slot) and
 * where r31 was saved come from the analysis facts (analysis.h), so frame 0
 * in a prologue or an epilogue, leaves and functions that allocate twice
 * are right; the back chain is read where the height is not known.  A PC no analysed function
 * covers is taken as a complete standard frame (Dyninst's assumption) unless a return follows it.
 * The ELFv1 .opd descriptors are resolved by the ELF cache, so symbols are code addresses.
 */
#include "walker/steppers/frame_func_facts.h"

#include "arch/ppc_regs.h"
#include "walker/walker_internal.h"

/* Whether the function's own frame is allocated at AT: SP is not (known to
 * be) the caller's SP.  Unknown SP means allocated: only stwux/stdux
 * (alloca) and restores from registers lose it, and the first keeps the
 * back chain. */
static bool
allocated(const struct sw_an_pc *at)
{
    return !(at->sp_known && !at->sp_alt && at->height == 0);
}

static void
ppc_classify(const struct arch_desc *a, const struct sw_an_func *fn, const struct sw_an_pc *at,
             struct sw_frame_alloc *out)
{
    (void)a;
    if (fn == NULL)
        out->type = SW_FRAME_UNKNOWN_T;
    else if (!fn->allocates)
        out->type = SW_FRAME_NO_FRAME;
    else
        out->type = fn->saves_ra ? SW_FRAME_STANDARD : SW_FRAME_SAVEFP_ONLY;

    if (at == NULL) {
        out->state = SW_FRAME_UNKNOWN_S;
        return;
    }
    bool alloc = allocated(at), saved = at->ra == SW_AN_RA_SLOT;
    switch (out->type) {
    case SW_FRAME_NO_FRAME:
        out->state = at->ra == SW_AN_RA_LIVE ? SW_FRAME_UNSET : SW_FRAME_SET;
        break;
    case SW_FRAME_SAVEFP_ONLY:
        out->state = alloc ? SW_FRAME_SET : SW_FRAME_UNSET;
        break;
    default:
        out->state = alloc && saved     ? SW_FRAME_SET
                     : !alloc && !saved ? SW_FRAME_UNSET
                                        : SW_FRAME_HALFSET;
        break;
    }
}

static enum sw_gcf
ppc_caller_frame(struct sw_stepper *s, const struct sw_frame *in, struct sw_frame *out)
{
    struct sw_walker *w = s->walker;
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    /* The LR save slot of the ABI's frame header, above the caller's SP. */
    const int64_t lr_slot = a->word_size == 4 ? 4 : 16;
    const bool exact = in->top || in->non_call;
    struct sw_ff_facts ff;
    sw_word caller_sp = in->sp, ra, fp = in->fp;
    sw_addr ra_at = 0, fp_at = 0;
    unsigned ra_reg = PPC_DW_LR;
    enum sw_gcf r;

    if (sw_ff_facts(w, &sw_ff_ppc, in->ra, exact, &ff) < 0)
        return SW_GCF_ERROR;
    struct sw_an_pc at = ff.at;
    if (!ff.have_at) {
        /* No facts at the PC: an unknown function or code of a known one
         * the analysis does not reach (a jump table's case) -- the body of
         * the frame its type says: allocated, the LR saved if it is ever. */
        at = (struct sw_an_pc){ .caller_fp = SW_AN_FP_CALLER };
        switch (ff.fa.type) {
        case SW_FRAME_UNKNOWN_T:
        case SW_FRAME_STANDARD:
            at.ra = SW_AN_RA_SLOT;
            at.ra_off = lr_slot;
            break;
        case SW_FRAME_SAVEFP_ONLY:
            at.ra = SW_AN_RA_LIVE;
            break;
        default:
            at.sp_known = true;
            at.ra = SW_AN_RA_LIVE;
            break;
        }
        if (!exact && at.ra == SW_AN_RA_LIVE)
            return SW_GCF_NOT_ME; /* a call left no return address in the LR */
    }

    /* The caller's SP: SP itself before the allocation and after it is freed;
     * else SP + height where the height is known (a second allocation's back
     * chain points at the first, not at the caller), FP - offset where r31
     * was pointed at the frame before an alloca, or the back chain.  The back
     * chain is read in every allocated frame: 0 ends the stack, and one that
     * does not point between SP and the caller's SP is not this stack's. */
    bool alloc = allocated(&at), chain = false;
    if (alloc) {
        sw_word back;
        if ((r = sw_step_read_word(w, in->sp, &back)) != SW_GCF_SUCCESS)
            return r;
        if (back == 0)
            return SW_GCF_STACKBOTTOM; /* _start and thread entries end the chain with 0 */
        if (back <= in->sp)
            return SW_GCF_NOT_ME;
        if (at.sp_known && !at.sp_alt)
            caller_sp = in->sp + (sw_addr)at.height;
        else if (at.fp_cfa && in->fp != 0)
            caller_sp = in->fp - (sw_addr)at.fp_off;
        else
            caller_sp = back, chain = true;
        if (back > caller_sp)
            return SW_GCF_NOT_ME;
    }
    if (at.ra == SW_AN_RA_SLOT) {
        ra_at = caller_sp + (sw_addr)at.ra_off;
        if ((r = sw_step_read_word(w, ra_at, &ra)) != SW_GCF_SUCCESS)
            return r;
    } else if (at.ra == SW_AN_RA_LIVE || at.ra == SW_AN_RA_IN_R0) {
        ra_reg = at.ra == SW_AN_RA_LIVE ? PPC_DW_LR : PPC_DW_R0;
        int got = sw_walker_frame_reg(w, in, ra_reg, &ra);
        if (got < 0 && sw_is_link_error(got))
            return sw_walker_fail_from_proc(w, got), SW_GCF_ERROR;
        if (got != 1)
            return SW_GCF_NOT_ME; /* the LR is not known here */
    } else {
        return SW_GCF_NOT_ME;
    }
    /* r31, the conventional frame pointer, where the prologue saved it. */
    if (at.fp_pushed && !at.fp_save_alt) {
        fp_at = caller_sp + (sw_addr)at.fp_save_off;
        if ((r = sw_step_read_word(w, fp_at, &fp)) != SW_GCF_SUCCESS)
            return r;
    }

    struct sw_frame f = *in; /* registers not saved are unchanged (gdb's rule) */
    f.ra = ra;
    f.sp = caller_sp;
    f.fp = fp;
    f.ra_loc = ra_at ? (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = ra_at }
                     : (struct sw_location){ .kind = SW_LOC_REGISTER, .reg = ra_reg };
    f.sp_loc = chain   ? (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = in->sp }
               : alloc ? (struct sw_location){ .kind = SW_LOC_UNKNOWN }
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
    .classify = ppc_classify,
    .caller_frame = ppc_caller_frame,
};
