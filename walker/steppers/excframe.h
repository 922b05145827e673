/* walker/steppers/excframe.h -- M-profile exception frames: the decoder of what the
 * hardware stacks on exception entry (ARMv7-M ARM B1.5.6-B1.5.8; ARMv8-M ARM B3.19-B3.21),
 * below the sighandler stepper's hook.  Pure functions over bytes already read; no I/O.
 * Included by walker/steppers/sighandler.c and the unit tests.
 */
#ifndef RSPWALK_WALKER_STEPPERS_EXCFRAME_H
#define RSPWALK_WALKER_STEPPERS_EXCFRAME_H

#include "rspwalk/arch.h"
#include "rspwalk/frame.h"
#include "rspwalk/stepper.h"

/* Bytes of ARMv8-M's additional state context (integrity signature, a reserved word,
 * r4-r11), stacked below the basic frame when EXC_RETURN's DCRS bit is clear. */
#define SW_EXCFRAME_EXTRA 40
/* The bytes sw_excframe_decode reads at most: the additional state context and the eight
 * words of the basic frame (an extended frame's FP words are not read). */
#define SW_EXCFRAME_READ (SW_EXCFRAME_EXTRA + 32)

/* What an EXC_RETURN value says of the frame it returns through. */
struct sw_excframe {
    bool psp;     /* stacked on the process stack (PSP), else the main stack (MSP) */
    bool thread;  /* returns to Thread mode, else to Handler mode (a nested exception) */
    bool fp;      /* extended frame: s0-s15, FPSCR and a reserved word follow xPSR, whether
                   * written or only reserved (lazy FP stacking) */
    bool secure;  /* ARMv8-M: the Secure state's stack (bit S; always set on ARMv7-M) */
    bool es;      /* ARMv8-M: the exception, so its handler's main stack, is Secure (bit ES;
                   * always set on ARMv7-M) */
    size_t extra; /* bytes of additional state context below the basic frame: 0 or 40 */
    size_t size;  /* bytes stacked, without the alignment word: extra + 32 or extra + 104 */
};

/* Decode EXC_RETURN into *OUT.  Returns 0, or SW_EINVAL when the value is
 * none: ARMv7-M's six (0xFFFFFFE1, E9, ED, F1, F9, FD) and ARMv8-M's forms
 * (bits 31:7 ones, bit 1 clear, bit 6 S, bit 5 DCRS, bit 0 ES), but never
 * Handler mode on the process stack (reserved). */
int sw_excframe_kind(sw_addr exc_return, struct sw_excframe *out);

/* The interrupted context from the K->extra + 32 bytes MEM stacked at
 * FRAME_SP, in A's byte order: r0-r3, r12, lr and the resume PC (and r4-r11
 * from an additional state context) as registers of *OUT, its RA the resume
 * PC (exact: OUT is non_call), its SP the interrupted code's SP (FRAME_SP +
 * size, + 4 when the stacked xPSR's bit 9 says the hardware aligned the
 * stack).  Registers the hardware does not stack are left to the caller.
 * Returns 0, or SW_EINVAL when the bytes cannot be a frame the hardware
 * wrote: xPSR without the Thumb bit (as a zero-filled read of unmapped
 * memory looks), an odd resume PC, or an additional state context without
 * its integrity signature (0xFEFA125B, or 0xFEFA125A over an extended frame
 * of a core with an FPU: bit 0 repeats EXC_RETURN's FType). */
int sw_excframe_decode(const struct arch_desc *a, const struct sw_excframe *k, sw_addr frame_sp,
                       const uint8_t *mem, struct sw_frame *out);

/* The sighandler stepper's hook for a SW_FRAME_SIGNAL frame IN whose RA is
 * an EXC_RETURN value: the interrupted context, read from the stack IN's SP
 * (the main stack of the handler's own security state) or the stack pointer
 * the stub names (psp; ARMv8-M's banked msp_ns, psp_ns, msp_s, psp_s), into
 * *OUT.  SUCCESS, NOT_ME (no such frame there, or that stack pointer
 * unknown) or ERROR (a dead link, on the walker). */
enum sw_gcf sw_excframe_caller(struct sw_stepper *s, const struct sw_frame *in,
                               struct sw_frame *out);

#endif /* RSPWALK_WALKER_STEPPERS_EXCFRAME_H */
