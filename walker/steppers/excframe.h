/* walker/steppers/excframe.h -- M-profile exception frames: the decoder of what the
 * hardware stacks on exception entry (ARMv7-M ARM B1.5.6-B1.5.8), below the sighandler
 * stepper's hook.  Pure functions over bytes already read; no I/O.  Included by
 * walker/steppers/sighandler.c and the unit tests.
 */
#ifndef RSPWALK_WALKER_STEPPERS_EXCFRAME_H
#define RSPWALK_WALKER_STEPPERS_EXCFRAME_H

#include "rspwalk/arch.h"
#include "rspwalk/frame.h"
#include "rspwalk/stepper.h"

/* The bytes of the largest frame: the extended (FP) frame's 26 words. */
#define SW_EXCFRAME_MAX 104

/* What an EXC_RETURN value says of the frame it returns through. */
struct sw_excframe {
    bool psp;    /* stacked on the process stack (PSP), else the main stack (MSP) */
    bool thread; /* returns to Thread mode, else to Handler mode (a nested exception) */
    bool fp;     /* extended frame: s0-s15, FPSCR and a reserved word follow xPSR, whether
                  * written or only reserved (lazy FP stacking) */
    size_t size; /* bytes stacked, without the alignment word: 32 or 104 */
};

/* Decode EXC_RETURN into *OUT.  Returns 0, or SW_EINVAL when the value is
 * not one ARMv7-M defines (0xFFFFFFE1, E9, ED, F1, F9, FD). */
int sw_excframe_kind(sw_addr exc_return, struct sw_excframe *out);

/* The interrupted context from the K->size bytes MEM stacked at FRAME_SP,
 * in A's byte order: r0-r3, r12, lr and the resume PC as registers of
 * *OUT, its RA the resume PC (exact: OUT is non_call), its SP the
 * interrupted code's SP (FRAME_SP + size, + 4 when the stacked xPSR's bit
 * 9 says the hardware aligned the stack).  Registers the hardware does not
 * stack are left to the caller.  Returns 0, or SW_EINVAL when the bytes
 * cannot be a frame the hardware wrote: xPSR without the Thumb bit (as a
 * zero-filled read of unmapped memory looks) or an odd resume PC. */
int sw_excframe_decode(const struct arch_desc *a, const struct sw_excframe *k, sw_addr frame_sp,
                       const uint8_t *mem, struct sw_frame *out);

/* The sighandler stepper's hook for a SW_FRAME_SIGNAL frame IN whose RA is
 * an EXC_RETURN value: the interrupted context, read from the stack IN's SP
 * (MSP) or the stub's psp register names, into *OUT.  SUCCESS, NOT_ME (no
 * such frame there, or psp unknown) or ERROR (a dead link, on the walker). */
enum sw_gcf sw_excframe_caller(struct sw_stepper *s, const struct sw_frame *in,
                               struct sw_frame *out);

#endif /* RSPWALK_WALKER_STEPPERS_EXCFRAME_H */
