/* walker/steppers/excframe.c -- M-profile exception frames: decoder and stepper hook.
 *
 * On exception entry an ARMv7-M core pushes r0-r3, r12, lr, the return
 * address and xPSR (plus s0-s15 and FPSCR in an extended frame) on the stack
 * the interrupted code used, and enters the handler with LR = EXC_RETURN;
 * an ARMv8-M core with the Security Extension may push r4-r11 below them
 * too (the additional state context, when EXC_RETURN's DCRS bit is clear).
 * A handler's CFI unwinds to that value: the walker marks the frame whose
 * RA it is SW_FRAME_SIGNAL ("<signal handler called>", as gdb shows it) and
 * the sighandler stepper calls sw_excframe_caller to step through it.
 */
#include "walker/steppers/excframe.h"

#include <inttypes.h>

#include "arch/armv7m_regs.h"
#include "walker/walker_internal.h"

/* Stacked words (ARMv7-M ARM B1.5.6, figure B1-3). */
enum { XF_R0, XF_R1, XF_R2, XF_R3, XF_R12, XF_LR, XF_PC, XF_XPSR };

#define XPSR_T       (UINT32_C(1) << 24) /* Thumb state: always set on an M-profile core */
#define XPSR_ALIGNED (UINT32_C(1) << 9)  /* the stack was realigned by one word on entry */

int
sw_excframe_kind(sw_addr exc_return, struct sw_excframe *out)
{
    /* ARMv8-M B3.21 (ARMv7-M's six values are its forms with S, DCRS and ES
     * set): bits 31:7 ones, bit 1 clear; Handler mode (bit 3 clear) with the
     * process stack (bit 2) is reserved. */
    if (exc_return > 0xffffffffu || (exc_return & 0xffffff82u) != 0xffffff80u ||
        (exc_return & 0xc) == 0x4)
        return SW_EINVAL;
    out->psp = (exc_return & 0x4) != 0;
    out->thread = (exc_return & 0x8) != 0;
    out->fp = (exc_return & 0x10) == 0;
    out->secure = (exc_return & 0x40) != 0;
    out->es = (exc_return & 0x1) != 0;
    out->extra = (exc_return & 0x20) == 0 ? SW_EXCFRAME_EXTRA : 0;
    out->size = out->extra + (out->fp ? 104 : 32);
    return 0;
}

int
sw_excframe_decode(const struct arch_desc *a, const struct sw_excframe *k, sw_addr frame_sp,
                   const uint8_t *mem, struct sw_frame *out)
{
    static const int16_t dw[] = { ARMV7M_DW_R0,  ARMV7M_DW_R1, ARMV7M_DW_R2, ARMV7M_DW_R3,
                                  ARMV7M_DW_R12, ARMV7M_DW_LR, ARMV7M_DW_PC, ARMV7M_DW_XPSR };
    const uint8_t *basic = mem + k->extra;
    const sw_addr basic_sp = frame_sp + k->extra;
    sw_word w[8];

    for (size_t i = 0; i < 8; i++)
        w[i] = arch_load(a, basic + 4 * i, 4);
    if (!(w[XF_XPSR] & XPSR_T) || (w[XF_PC] & 1) != 0)
        return SW_EINVAL;
    /* The integrity signature: 0xFEFA125A with bit 0 the frame's FType (set
     * for a basic frame), as the core writes it (ARMv8-M ARM B3.19; QEMU's
     * v7m_integrity_sig sets bit 0 on a core without an FPU, whose frames
     * are all basic). */
    if (k->extra != 0 && arch_load(a, mem, 4) != (k->fp ? 0xfefa125au : 0xfefa125bu))
        return SW_EINVAL;
    sw_frame_init(out);
    for (size_t i = 0; i < 8; i++)
        sw_frame_set_reg(out, (unsigned)dw[i], w[i]);
    /* Additional state context: signature, reserved, then r4-r11. */
    for (size_t i = 0; k->extra != 0 && i < 8; i++)
        sw_frame_set_reg(out, ARMV7M_DW_R4 + (unsigned)i, arch_load(a, mem + 8 + 4 * i, 4));
    sw_addr sp = frame_sp + k->size + ((w[XF_XPSR] & XPSR_ALIGNED) ? 4 : 0);
    sw_frame_set_reg(out, ARMV7M_DW_SP, sp);
    out->ra = w[XF_PC];
    out->sp = sp;
    out->ra_loc = (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = basic_sp + 4 * XF_PC };
    out->sp_loc = (struct sw_location){ .kind = SW_LOC_ADDRESS, .addr = frame_sp };
    /* The interrupted code resumes at the PC itself: look it up there. */
    out->non_call = true;
    out->trust = SW_TRUST_SIGFRAME;
    return 0;
}

/* The stack pointer K's frame is on, as the stub reports it: the banked one
 * of its security state (ARMv8-M with the Security Extension: msp_s, psp_s,
 * msp_ns, psp_ns), else, when the frame is on the process stack of the
 * handler's own state, psp (ARMv7-M's only one; on ARMv8-M, the current
 * state's, which is the handler's when the stop is in that state).  0 or a
 * negative code: SW_ENOREG when the stub reports none of them. */
static int
excframe_stack_pointer(struct sw_proc *p, sw_tid tid, const struct sw_excframe *k, sw_word *out)
{
    unsigned banked = k->secure ? (k->psp ? ARMV7M_DW_PSP_S : ARMV7M_DW_MSP_S)
                                : (k->psp ? ARMV7M_DW_PSP_NS : ARMV7M_DW_MSP_NS);
    int rc = p->ops->read_reg(p, tid, banked, out);
    if (rc >= 0 || sw_is_link_error(rc) || !k->psp || k->secure != k->es)
        return rc;
    return p->ops->read_reg(p, tid, ARMV7M_DW_PSP, out);
}

enum sw_gcf
sw_excframe_caller(struct sw_stepper *s, const struct sw_frame *in, struct sw_frame *out)
{
    struct sw_walker *w = s->walker;
    struct sw_proc *p = sw_walker_proc(w);
    const struct arch_desc *a = p->arch;
    struct sw_excframe k;
    uint8_t mem[SW_EXCFRAME_READ];
    struct sw_frame f;
    sw_word v;
    int rc;

    if (sw_excframe_kind(in->ra, &k) < 0)
        return SW_GCF_NOT_ME;
    /* The handler's caller SP is where the hardware stacked the frame when
     * it used the handler's own main stack (MSP of the exception's security
     * state, ES).  A frame on the process stack (an exception taken from
     * Thread mode on PSP) or on the other security state's stack (ARMv8-M:
     * a Non-secure exception over Secure code, or the reverse) is at that
     * stack pointer as the stub reports it: only the outermost exception of
     * a state returns to its process stack, and nothing moves it under a
     * running handler but an RTOS's context switch. */
    sw_addr frame_sp = in->sp;
    if (k.psp || k.secure != k.es) {
        rc = excframe_stack_pointer(p, in->thread, &k, &v);
        if (rc < 0) {
            if (sw_is_link_error(rc))
                return sw_walker_fail_from_proc(w, rc), SW_GCF_ERROR;
            return SW_GCF_NOT_ME; /* that stack pointer is not in the stub's registers */
        }
        frame_sp = v;
    }
    /* The words decoded; an extended frame's FP words are not needed. */
    rc = p->ops->read_mem(p, frame_sp, mem, k.extra + 32);
    if (rc < 0) {
        if (sw_is_link_error(rc))
            return sw_walker_fail_from_proc(w, rc), SW_GCF_ERROR;
        return SW_GCF_NOT_ME;
    }
    if (sw_excframe_decode(a, &k, frame_sp, mem, &f) < 0)
        return SW_GCF_NOT_ME;
    /* r4-r11, unless an additional state context held them, are not
     * stacked: the handler's frame holds them as its CFI restored them,
     * which are the interrupted code's. */
    for (unsigned dw = ARMV7M_DW_R4; dw <= ARMV7M_DW_R11 && k.extra == 0; dw++) {
        rc = sw_walker_frame_reg(w, in, dw, &v);
        if (rc < 0)
            return SW_GCF_ERROR;
        if (rc == 1)
            sw_frame_set_reg(&f, dw, v);
    }
    if (sw_frame_reg(&f, (unsigned)a->dw_fp, &v)) {
        f.fp = v;
        f.fp_loc = (struct sw_location){ .kind = SW_LOC_REGISTER, .reg = (unsigned)a->dw_fp };
    }
    f.thread = in->thread;
    f.stepper = s;
    *out = f;
    return SW_GCF_SUCCESS;
}
