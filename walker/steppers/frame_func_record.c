/* walker/steppers/frame_func_record.c -- FrameFuncStepper rules for x86, x86-64 and AArch64.
 *
 * These families keep a frame record: once a function has saved the
 * caller's FP and pointed FP at its frame, [FP] is the caller's FP and
 * [FP + word] the return address (push %rbp; mov %rsp,%rbp -- stp x29, x30;
 * mov x29, sp).  Mid-stack the stepper follows that chain; for frame 0 in a
 * prologue or an epilogue, and for frames the analysis sees save their
 * return address without a record (aarch64 -fomit-frame-pointer), the
 * analysis facts (analysis.h) say where the CFA, the return address and the
 * caller's FP are.  A PC no analysed function covers is taken as a set
 * record (Dyninst's rule), unless a return follows it (the exit scan).  Not
 * for frameless code mid-stack (the analysis stepper's job).
 */
#include "walker/steppers/frame_func_facts.h"

#include "walker/walker_internal.h"

static void
record_classify(const struct arch_desc *a, const struct sw_an_func *fn, const struct sw_an_pc *at,
                struct sw_frame_alloc *out)
{
    if (fn == NULL)
        out->type = SW_FRAME_UNKNOWN_T;
    else if (!fn->saves_fp)
        out->type = SW_FRAME_NO_FRAME;
    else
        out->type = fn->sets_fp ? SW_FRAME_STANDARD : SW_FRAME_SAVEFP_ONLY;

    if (at == NULL)
        out->state = SW_FRAME_UNKNOWN_S;
    else if (out->type == SW_FRAME_NO_FRAME || (out->type == SW_FRAME_UNKNOWN_T && !at->fp_pushed))
        out->state = sw_ff_ra_as_called(a, at) ? SW_FRAME_UNSET : SW_FRAME_SET;
    else if (!at->fp_pushed)
        out->state = SW_FRAME_UNSET;
    else if ((at->fp_cfa || at->fp_alt) && at->caller_fp == SW_AN_FP_SAVED)
        out->state = SW_FRAME_SET;
    else
        out->state = SW_FRAME_HALFSET;
}

/* Whether the stepper takes a frame whose PC is a return address (not
 * EXACT).  x86 keeps Dyninst's rule: standard frames only (or unknown
 * functions, assumed standard).  AArch64 also takes frames whose return
 * address the analysis finds from SP (a record without x29, or x30 saved
 * alone), which gdb's prologue analyzer also does. */
static bool
takes_mid_stack(const struct arch_desc *a, const struct sw_ff_facts *ff)
{
    if (ff->fa.type == SW_FRAME_STANDARD || ff->fa.type == SW_FRAME_UNKNOWN_T)
        return true;
    return !a->call_ra_on_stack && ff->have_at && ff->at.ra == SW_AN_RA_SLOT;
}

static enum sw_gcf
record_caller_frame(struct sw_stepper *s, const struct sw_frame *in, struct sw_frame *out)
{
    struct sw_walker *w = s->walker;
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    const sw_addr word = a->word_size;
    const bool exact = in->top || in->non_call;
    struct sw_ff_facts ff;
    sw_word ra, fp = in->fp;
    sw_addr cfa, ra_at = 0, fp_at = 0;
    enum sw_gcf r;

    if (sw_ff_facts(w, &sw_ff_record, in->ra, exact, &ff) < 0)
        return SW_GCF_ERROR;
    if (!exact && !takes_mid_stack(a, &ff))
        return SW_GCF_NOT_ME;
    /* x86 frameless body code is the analysis stepper's (Dyninst's rule:
     * this stepper walks frames, and the return address of a frameless
     * function is only known from its height). */
    if (a->call_ra_on_stack && ff.fa.type == SW_FRAME_NO_FRAME && ff.fa.state != SW_FRAME_UNSET)
        return SW_GCF_NOT_ME;
    if (!ff.have_at) {
        /* No facts at the PC: an unknown function, or body code of a known
         * one the analysis does not reach (a jump table's case) -- a set
         * record if the function builds one. */
        if (ff.fa.type != SW_FRAME_STANDARD && ff.fa.type != SW_FRAME_UNKNOWN_T)
            return SW_GCF_NOT_ME;
        ff.fa.state = SW_FRAME_SET;
    }

    const struct sw_an_pc *at = &ff.at;
    bool use_fp = ff.fa.state == SW_FRAME_SET && ff.fa.type != SW_FRAME_NO_FRAME;
    /* FP set relative to a realigned SP (gcc's DRAP in i386 main): the
     * record holds a copy of the return address but the CFA is elsewhere,
     * which the analysis stepper follows. */
    if (use_fp && ff.have_at && !at->fp_cfa && at->fp_alt)
        return SW_GCF_NOT_ME;
    if (use_fp && !(ff.have_at && at->fp_cfa)) {
        /* The record at FP, the least CFA above it: unknown code, or code
         * whose FP the analysis lost (paths joining with different facts). */
        if (in->fp == 0)
            return SW_GCF_STACKBOTTOM; /* _start and thread entries clear the FP */
        if (in->fp < in->sp || (!a->call_ra_on_stack && in->fp % word != 0))
            return SW_GCF_NOT_ME; /* not a frame record of this stack */
        fp_at = in->fp;
        ra_at = in->fp + word;
        cfa = in->fp + 2 * word;
        if ((r = sw_step_read_word(w, ra_at, &ra)) != SW_GCF_SUCCESS)
            return r;
    } else {
        if (use_fp) {
            if (in->fp == 0)
                return SW_GCF_STACKBOTTOM;
            if (in->fp < in->sp)
                return SW_GCF_NOT_ME;
            cfa = in->fp - (sw_addr)at->fp_off;
        } else if (at->sp_known && !at->sp_alt) {
            cfa = in->sp + (sw_addr)at->height;
        } else {
            return SW_GCF_NOT_ME;
        }
        if (cfa < in->sp)
            return SW_GCF_NOT_ME;
        if (at->ra == SW_AN_RA_SLOT) {
            ra_at = cfa + (sw_addr)at->ra_off;
            if ((r = sw_step_read_word(w, ra_at, &ra)) != SW_GCF_SUCCESS)
                return r;
        } else if (at->ra == SW_AN_RA_LIVE) {
            int got = sw_walker_frame_reg(w, in, (unsigned)a->dw_ra, &ra);
            if (got < 0 && sw_is_link_error(got))
                return sw_walker_fail_from_proc(w, got), SW_GCF_ERROR;
            if (got != 1)
                return SW_GCF_NOT_ME;
        } else {
            return SW_GCF_NOT_ME;
        }
        /* The saved copy once there is one, as CFI says (the register may
         * still hold the same value). */
        if (at->fp_pushed) {
            if (at->fp_save_alt)
                return SW_GCF_NOT_ME; /* saved relative to a realigned SP */
            fp_at = cfa + (sw_addr)at->fp_save_off;
        }
    }
    if (fp_at && (r = sw_step_read_word(w, fp_at, &fp)) != SW_GCF_SUCCESS)
        return r;
    if (ff.have_fn && ff.fn.signs_ra && a->ra_unsign != NULL)
        ra = a->ra_unsign(ra);

    struct sw_frame f = *in; /* registers not saved are unchanged (gdb's rule) */
    f.ra = ra;
    f.sp = cfa;
    f.fp = fp;
    f.ra_loc = ra_at ? (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = ra_at }
                     : (struct sw_location){ .kind = SW_LOC_REGISTER, .reg = (unsigned)a->dw_ra };
    f.sp_loc = (struct sw_location){ .kind = SW_LOC_UNKNOWN };
    f.fp_loc = fp_at ? (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = fp_at }
                     : (struct sw_location){ .kind = SW_LOC_REGISTER, .reg = (unsigned)a->dw_fp };
    f.kind = SW_FRAME_NORMAL;
    f.non_call = false;
    f.bottom = false;
    /* The record at FP or the live LR; on aarch64 a slot found from SP is
     * the analysis's word (x86 frames are all the frame-pointer stepper's). */
    f.trust = a->call_ra_on_stack || ra_at == 0 || ra_at == in->fp + word ? SW_TRUST_FP
                                                                          : SW_TRUST_ANALYSIS;
    f.stepper = s;
    sw_frame_set_reg(&f, (unsigned)a->dw_pc, ra);
    sw_frame_set_reg(&f, (unsigned)a->dw_sp, cfa);
    sw_frame_set_reg(&f, (unsigned)a->dw_fp, fp);
    /* On return the link register still holds the address returned to. */
    if (a->dw_ra != a->dw_pc)
        sw_frame_set_reg(&f, (unsigned)a->dw_ra, ra);
    *out = f;
    return SW_GCF_SUCCESS;
}

const struct sw_ff_arch sw_ff_record = {
    .classify = record_classify,
    .caller_frame = record_caller_frame,
};
