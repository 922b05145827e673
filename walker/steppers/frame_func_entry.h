/* walker/steppers/frame_func_entry.h -- the entry scan: where frame 0's return address is
 * when no function covers its PC (x86).
 *
 * Used by the FrameFuncHelper's facts (frame_func_facts.c) where the analysis knows no
 * function and no return follows the PC.  Not an analysis of the function.
 */
#ifndef RSPWALK_WALKER_FRAME_FUNC_ENTRY_H
#define RSPWALK_WALKER_FRAME_FUNC_ENTRY_H

#include "walker/steppers/analysis.h"

/* The entry scan (frame_func_entry.c), x86 only: decoding forward from PC
 * (where execution stopped) along the fall-through path, `push %bp; mov
 * %sp,%bp` or a return ahead of any other change to SP, FP or the stack
 * (no record: the return address at SP), or `mov %sp,%bp` at PC right
 * after `push %bp` (the caller's FP at SP, the return address above it).  Returns 0 with
 * *OUT the facts at PC (CFA = SP + height); SW_EINVAL (not such code, or
 * not x86, or no decoder); SW_EMEM (unreadable code); SW_ENOMEM or a link
 * error. */
int sw_ff_entry_scan(struct sw_walker *w, sw_addr pc, struct sw_an_pc *out);

#endif /* RSPWALK_WALKER_FRAME_FUNC_ENTRY_H */
