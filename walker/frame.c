/* walker/frame.c -- Frame helpers: registers by DWARF number, lookup PC, equality.
 *
 * A frame is a plain value; nothing here allocates.
 */
#include "rspwalk/frame.h"

#include <string.h>

void
sw_frame_init(struct sw_frame *f)
{
    memset(f, 0, sizeof *f);
}

bool
sw_frame_reg(const struct sw_frame *f, unsigned dw, sw_word *val)
{
    if (dw >= SW_FRAME_MAX_REGS || !(f->regs_valid[dw / 64] >> (dw % 64) & 1))
        return false;
    *val = f->regs[dw];
    return true;
}

void
sw_frame_set_reg(struct sw_frame *f, unsigned dw, sw_word val)
{
    if (dw >= SW_FRAME_MAX_REGS)
        return;
    f->regs[dw] = val;
    f->regs_valid[dw / 64] |= (uint64_t)1 << (dw % 64);
}

void
sw_frame_clear_reg(struct sw_frame *f, unsigned dw)
{
    if (dw >= SW_FRAME_MAX_REGS)
        return;
    f->regs_valid[dw / 64] &= ~((uint64_t)1 << (dw % 64));
}

sw_addr
sw_frame_lookup_pc(const struct sw_frame *f)
{
    /* A return address may point just past the last instruction of its
     * function (a call to a noreturn function); the call itself is at RA-1.
     * The top frame and frames resumed by the kernel hold an exact PC. */
    if (f->top || f->non_call || f->ra == 0)
        return f->ra;
    return f->ra - 1;
}

bool
sw_frame_equal(const struct sw_frame *a, const struct sw_frame *b)
{
    return a->ra == b->ra && a->sp == b->sp && a->fp == b->fp && a->thread == b->thread;
}

const char *
sw_trust_name(enum sw_trust t)
{
    switch (t) {
    case SW_TRUST_REGISTERS:
        return "registers";
    case SW_TRUST_SIGFRAME:
        return "sigframe";
    case SW_TRUST_CFI:
        return "cfi";
    case SW_TRUST_FP:
        return "fp";
    case SW_TRUST_ANALYSIS:
        return "analysis";
    case SW_TRUST_SCAN:
        return "scan";
    }
    return "unknown";
}
