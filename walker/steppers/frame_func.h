/* walker/steppers/frame_func.h -- FrameFuncHelper: how far a function's frame is set up.
 *
 * The seed's allocatesFrame(addr), computed from the stack-height analysis
 * (analysis.h) on every architecture, for the frame-func stepper and (later)
 * the wanderer.  The facts are frame_func_facts.c's, the rules of each
 * family frame_func_record.c (x86, x86-64, aarch64) and frame_func_ppc.c,
 * the stepper that picks the family frame_func.c.
 */
#ifndef RSPWALK_WALKER_FRAME_FUNC_H
#define RSPWALK_WALKER_FRAME_FUNC_H

#include "walker/steppers/frame_func_facts.h"

/* Classify the function covering PC (EXACT: PC is where execution stopped,
 * so epilogue instructions count; otherwise PC is a return address).  Code
 * comes from the local ELF file when there is one; the analysis is cached
 * per function (analysis.h).  Returns 0; SW_ENOSYM (no function with a size
 * covers PC: unknown, unknown); SW_EINVAL (the analysis does not reach PC
 * and no return follows it: the function's type, unknown state);
 * SW_ENOARCH, SW_ENOMEM or the code of a failed read (unknown, unknown).
 * *OUT is always written. */
int sw_frame_func_alloc(struct sw_walker *w, sw_addr pc, bool exact, struct sw_frame_alloc *out);

#endif /* RSPWALK_WALKER_FRAME_FUNC_H */
