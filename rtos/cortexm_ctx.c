/* rtos/cortexm_ctx.c -- a parked FreeRTOS task's registers from its saved context (Cortex-M).
 *
 * What FreeRTOS's PendSV handler pushed on the task's stack, and pxPortInitialiseStack
 * imitates for a task that never ran (portable/GCC/ARM_CM3/port.c, ARM_CM4F/port.c):
 *
 *   TOP ->  r4 r5 r6 r7 r8 r9 r10 r11          software, 8 words
 *           [EXC_RETURN]                       CM4F only
 *           [s16 ... s31]                      CM4F, when EXC_RETURN bit 4 is clear
 *           r0 r1 r2 r3 r12 lr pc xPSR          hardware frame (ARMv7-M ARM B1.5.6)
 *           [s0 ... s15 FPSCR reserved]        extended frame, when EXC_RETURN bit 4 is clear
 *           [alignment word]                   when the stacked xPSR's bit 9 is set
 *
 * Pure: bytes in, registers out.  Not the exception-frame stepper (walker/steppers/excframe.c),
 * which finds frames while walking; this one makes a walk's starting registers.
 */
#include "rtos/rtos_internal.h"

#include <stdio.h>

#define CTX_SW_WORDS     8
#define CTX_FP_SW_BYTES  (16 * 4)  /* s16-s31 */
#define CTX_HW_BASIC     32        /* r0-r3, r12, lr, pc, xPSR */
#define CTX_HW_EXTENDED  (32 + 72) /* and s0-s15, FPSCR, a reserved word */
#define EXC_RETURN_FTYPE 0x10u     /* bit 4 clear: an FP context was stacked */
#define XPSR_THUMB       (1u << 24)
#define XPSR_ALIGNED     (1u << 9)

static uint32_t
word(const struct arch_desc *a, const uint8_t *mem, size_t i)
{
    return (uint32_t)arch_load(a, mem + 4 * i, 4);
}

size_t
sw_rtos_ctx_size(enum rtos_port port, const struct arch_desc *a, const uint8_t *head)
{
    if (port == RTOS_PORT_CM3)
        return 4 * CTX_SW_WORDS + CTX_HW_BASIC;
    uint32_t exc = word(a, head, CTX_SW_WORDS);
    if (exc & EXC_RETURN_FTYPE)
        return 4 * (CTX_SW_WORDS + 1) + CTX_HW_BASIC;
    return 4 * (CTX_SW_WORDS + 1) + CTX_FP_SW_BYTES + CTX_HW_EXTENDED;
}

int
sw_rtos_ctx_decode(enum rtos_port port, const struct arch_desc *a, sw_addr top, const uint8_t *mem,
                   size_t len, struct rtos_ctx *out, char *why, size_t why_len)
{
    struct rtos_ctx c = { .exc_return = 0xfffffffdu };
    size_t hw, hw_size = CTX_HW_BASIC;

    if (len < (port == RTOS_PORT_CM3 ? 4 * CTX_SW_WORDS + CTX_HW_BASIC : RTOS_CTX_HEAD)) {
        snprintf(why, why_len, "context at 0x%llx: %zu bytes, too short", (unsigned long long)top,
                 len);
        return SW_EINVAL;
    }
    for (unsigned i = 0; i < CTX_SW_WORDS; i++)
        c.r[4 + i] = word(a, mem, i);
    hw = 4 * CTX_SW_WORDS;
    if (port == RTOS_PORT_CM4F) {
        c.exc_return = word(a, mem, CTX_SW_WORDS);
        /* Thread mode on the process stack, basic (0xFFFFFFFD) or extended (0xFFFFFFED): the
         * only ones a task resumes with. */
        if ((c.exc_return | EXC_RETURN_FTYPE) != 0xfffffffdu) {
            snprintf(why, why_len,
                     "context at 0x%llx: EXC_RETURN 0x%08x does not return to a task "
                     "(Thread mode, process stack)",
                     (unsigned long long)top, (unsigned)c.exc_return);
            return SW_EINVAL;
        }
        c.fp = (c.exc_return & EXC_RETURN_FTYPE) == 0;
        hw += 4 + (c.fp ? CTX_FP_SW_BYTES : 0);
        hw_size = c.fp ? CTX_HW_EXTENDED : CTX_HW_BASIC;
    }
    if (len < hw + CTX_HW_BASIC) {
        snprintf(why, why_len, "context at 0x%llx: %zu bytes, %zu needed", (unsigned long long)top,
                 len, hw + CTX_HW_BASIC);
        return SW_EINVAL;
    }
    const uint8_t *f = mem + hw;
    c.r[0] = word(a, f, 0);
    c.r[1] = word(a, f, 1);
    c.r[2] = word(a, f, 2);
    c.r[3] = word(a, f, 3);
    c.r[12] = word(a, f, 4);
    c.r[14] = word(a, f, 5);
    c.r[15] = word(a, f, 6);
    c.xpsr = word(a, f, 7);
    if (!(c.xpsr & XPSR_THUMB)) {
        snprintf(why, why_len, "context at 0x%llx: stacked xPSR 0x%08x lacks the Thumb bit",
                 (unsigned long long)top, (unsigned)c.xpsr);
        return SW_EINVAL;
    }
    if (c.r[15] & 1u) {
        snprintf(why, why_len, "context at 0x%llx: stacked pc 0x%08x is odd",
                 (unsigned long long)top, (unsigned)c.r[15]);
        return SW_EINVAL;
    }
    c.r[13] = (uint32_t)(top + hw + hw_size + (c.xpsr & XPSR_ALIGNED ? 4 : 0));
    *out = c;
    return 0;
}
