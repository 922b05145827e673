/* walker/steppers/frame_func.h -- FrameFuncHelper: how far a function's frame is set up.
 *
 * The seed's allocatesFrame(addr) as a function, for the frame-func stepper
 * and (later) the wanderer.
 */
#ifndef RSPWALK_WALKER_FRAME_FUNC_H
#define RSPWALK_WALKER_FRAME_FUNC_H

#include "rspwalk/rspwalk.h"

enum sw_frame_type {
    SW_FRAME_UNKNOWN_T = 0,
    SW_FRAME_NO_FRAME,    /* never pushes a frame pointer */
    SW_FRAME_STANDARD,    /* push %bp; mov %sp,%bp */
    SW_FRAME_SAVEFP_ONLY, /* push %bp only */
};

enum sw_frame_state {
    SW_FRAME_UNKNOWN_S = 0,
    SW_FRAME_UNSET,   /* before the frame is built or after it is torn down */
    SW_FRAME_HALFSET, /* the old FP is saved, the new one not yet set */
    SW_FRAME_SET,     /* the frame is complete */
};

struct sw_frame_alloc {
    enum sw_frame_type type;
    enum sw_frame_state state;
};

/* Classify the function covering PC (EXACT: PC is where execution stopped,
 * so epilogue instructions count).  Code comes from the local ELF file when
 * there is one.  Returns 0, SW_ENOSYM (no function covers PC), or the code
 * of a failed read; *OUT is always written (unknown on failure). */
int sw_frame_func_alloc(struct sw_walker *w, sw_addr pc, bool exact, struct sw_frame_alloc *out);

/* The rules of one architecture family (frame_func_<arch>.c).  Both REQUIRED. */
struct sw_ff_arch {
    /* sw_frame_func_alloc for this family; same contract. */
    int (*alloc)(struct sw_walker *w, sw_addr pc, bool exact, struct sw_frame_alloc *out);
    /* The stepper's caller_frame for this family. */
    enum sw_gcf (*caller_frame)(struct sw_stepper *s, const struct sw_frame *in,
                                struct sw_frame *out);
};

extern const struct sw_ff_arch sw_ff_x86;
extern const struct sw_ff_arch sw_ff_aarch64;
extern const struct sw_ff_arch sw_ff_ppc;

/* Read a target word for a stepper: SUCCESS, NOT_ME (unreadable: a fact about
 * the frame) or ERROR (a dead link; the message is left on the walker). */
enum sw_gcf sw_ff_read_word(struct sw_walker *w, sw_addr addr, sw_word *val);

#endif /* RSPWALK_WALKER_FRAME_FUNC_H */
