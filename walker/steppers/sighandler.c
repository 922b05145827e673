/* walker/steppers/sighandler.c -- SigHandlerStepper: through a signal frame.
 *
 * The walker marks a frame SW_FRAME_SIGNAL when its RA is the first byte of
 * the arch's rt_sigreturn trampoline (glibc's __restore_rt on x86-64).  At
 * that point the stack pointer addresses the kernel's ucontext, whose saved
 * general registers are the interrupted code's: its PC, SP, FP and every
 * callee-saved register.  Layouts come from arch/ (the target ABI).  An
 * M-profile exception frame (RA an EXC_RETURN value) is excframe.c's.
 */
#include "rspwalk/stepper.h"

#include <inttypes.h>

#include "walker/steppers/excframe.h"
#include "walker/walker_internal.h"

static enum sw_gcf
sighandler_caller_frame(struct sw_stepper *s, const struct sw_frame *in, struct sw_frame *out)
{
    struct sw_walker *w = s->walker;
    struct sw_proc *p = sw_walker_proc(w);
    const struct arch_desc *a = p->arch;
    uint8_t regs[64 * 8];
    struct sw_frame f;
    int rc;

    if (in->kind != SW_FRAME_SIGNAL)
        return SW_GCF_NOT_ME;
    /* An M-profile exception: the hardware's frame, not a kernel's. */
    if (a->exc_return != NULL && a->exc_return(in->ra))
        return sw_excframe_caller(s, in, out);
    /* Which of the arch's layouts: the trampoline at the RA says (i386 has
     * an rt and a non-rt frame), and where two share one trampoline, the
     * frame's own pointer to its registers (PowerPC). */
    const struct arch_sigframe *sf = sw_walker_sigframe_at(w, in->ra);
    for (; sf != NULL && sf->regs_ptr_offset != 0; sf = sw_walker_sigframe_next(w, in->ra, sf)) {
        sw_addr uc = in->sp + sf->uc_offset;
        sw_word ptr;
        rc = sw_walker_read_word(w, uc + sf->regs_ptr_offset, &ptr);
        if (rc < 0 && sw_is_link_error(rc))
            return sw_walker_fail_from_proc(w, rc), SW_GCF_ERROR;
        if (rc == 0 && ptr == uc + sf->mcontext_offset)
            break;
    }
    if (sf == NULL || sf->ngregs * sf->greg_size > sizeof regs)
        return SW_GCF_NOT_ME;

    sw_addr base = in->sp + sf->uc_offset + sf->mcontext_offset;
    rc = p->ops->read_mem(p, base, regs, sf->ngregs * sf->greg_size);
    if (rc < 0) {
        if (sw_is_link_error(rc))
            return sw_walker_fail_from_proc(w, rc), SW_GCF_ERROR;
        return SW_GCF_NOT_ME;
    }

    sw_frame_init(&f);
    for (size_t i = 0; i < sf->ngregs; i++) {
        int dw = sf->greg_dwarf[i];
        if (dw >= 0)
            sw_frame_set_reg(&f, (unsigned)dw,
                             arch_load(a, regs + i * sf->greg_size, sf->greg_size));
    }
    sw_word pc, sp, fp = 0;
    if (!sw_frame_reg(&f, (unsigned)a->dw_pc, &pc) || !sw_frame_reg(&f, (unsigned)a->dw_sp, &sp))
        return SW_GCF_NOT_ME;
    sw_frame_reg(&f, (unsigned)a->dw_fp, &fp);

    for (size_t i = 0; i < sf->ngregs; i++) {
        int dw = sf->greg_dwarf[i];
        sw_addr slot = base + i * sf->greg_size;
        struct sw_location loc = { .kind = SW_LOC_ADDRESS, .addr = slot };
        if (dw == a->dw_pc)
            f.ra_loc = loc;
        else if (dw == a->dw_sp)
            f.sp_loc = loc;
        else if (dw == a->dw_fp)
            f.fp_loc = loc;
    }
    f.ra = pc;
    f.sp = sp;
    f.fp = fp;
    /* The interrupted code resumes at PC itself: look it up there, not at PC-1. */
    f.non_call = true;
    f.trust = SW_TRUST_SIGFRAME;
    f.stepper = s;
    *out = f;
    return SW_GCF_SUCCESS;
}

static const struct sw_stepper_ops sighandler_ops = {
    .name = "sighandler",
    .priority = SW_PRIO_SIGHANDLER,
    .caller_frame = sighandler_caller_frame,
};

struct sw_stepper *
sw_stepper_sighandler_new(void)
{
    struct sw_stepper *s = sw_calloc(1, sizeof *s);
    if (s)
        s->ops = &sighandler_ops;
    return s;
}
