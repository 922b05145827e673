/* walker/steppers/frame_func_facts.h -- FrameFuncHelper's facts and the families' rules.
 *
 * What frame_func_facts.c gathers at a PC and the table each family fills
 * (frame_func_record.c, frame_func_ppc.c).  The classification's API is
 * frame_func.h, the stepper that picks a family frame_func.c.
 */
#ifndef RSPWALK_WALKER_FRAME_FUNC_FACTS_H
#define RSPWALK_WALKER_FRAME_FUNC_FACTS_H

#include "rspwalk/arch.h"
#include "rspwalk/stepper.h"
#include "walker/steppers/analysis.h"

enum sw_frame_type {
    SW_FRAME_UNKNOWN_T = 0,
    SW_FRAME_NO_FRAME,    /* never builds the frame below */
    SW_FRAME_STANDARD,    /* push %bp; mov %sp,%bp -- or the family's equivalent */
    SW_FRAME_SAVEFP_ONLY, /* push %bp only -- or the family's equivalent */
};

enum sw_frame_state {
    SW_FRAME_UNKNOWN_S = 0,
    SW_FRAME_UNSET,   /* before the frame is built or after it is torn down */
    SW_FRAME_HALFSET, /* partly built or partly torn down */
    SW_FRAME_SET,     /* the frame is complete */
};

/* What the pair means, from the analysis facts of the function (type) and
 * at the PC (state):
 *
 *   x86, x86-64, aarch64: the frame is the caller's FP saved in the
 *   function's frame (push %rbp; stp x29, x30) and FP pointed at it.
 *   STANDARD saves FP and then sets it, SAVEFP_ONLY saves it and never sets
 *   it (-O2 code using rbp/x29 as a callee-saved register), NO_FRAME never
 *   saves it.  UNSET: the caller's FP is not saved (before the save, after
 *   the reload); HALFSET: saved, FP not (or no longer) pointing at the
 *   frame; SET: saved and FP set.
 *
 *   PowerPC: the frame is the stack frame with its back chain (stwu r1) and
 *   the return address saved in the caller's header (mflr r0; stw r0).
 *   STANDARD allocates and saves the LR, SAVEFP_ONLY allocates only (a leaf
 *   with locals), NO_FRAME never allocates.  SET: allocated and (STANDARD)
 *   LR saved; HALFSET: one of the two; UNSET: neither.
 *
 *   NO_FRAME, every family: UNSET while the return address is where the
 *   call left it (x86: at SP; others: in the link register), SET after the
 *   function moved it (aarch64 str x30; x86 an allocation below it). */
struct sw_frame_alloc {
    enum sw_frame_type type;
    enum sw_frame_state state;
};

/* The facts behind one classification, for the steppers. */
struct sw_ff_facts {
    int rc;       /* the analysis: 0, SW_ENOSYM, SW_EINVAL or a read error */
    bool have_fn; /* FN: the function is known (rc 0 or SW_EINVAL) */
    bool have_at; /* AT: the facts at the PC, from the analysis or the exit scan */
    struct sw_an_func fn;
    struct sw_an_pc at;
    struct sw_frame_alloc fa;
};

/* The rules of one architecture family.  Both REQUIRED. */
struct sw_ff_arch {
    /* The pair from what the function does (FN, NULL when no function is
     * known) and the facts at the PC (AT, NULL when not known). */
    void (*classify)(const struct arch_desc *a, const struct sw_an_func *fn,
                     const struct sw_an_pc *at, struct sw_frame_alloc *out);
    /* The stepper's caller_frame for this family. */
    enum sw_gcf (*caller_frame)(struct sw_stepper *s, const struct sw_frame *in,
                                struct sw_frame *out);
};

extern const struct sw_ff_arch sw_ff_record; /* x86, x86-64, aarch64 */
extern const struct sw_ff_arch sw_ff_ppc;

/* Gather the facts at PC and classify them by FF's rules (frame_func_facts.c):
 * the analysis, and at an exact PC whose facts lack the CFA or the return
 * address, the exit scan (sw_analysis_exit).  Returns 0, SW_ENOARCH (FF
 * NULL), or SW_ENOMEM or a link error (the message is left on W); a missing
 * function or unreadable code is in OUT->rc. */
int sw_ff_facts(struct sw_walker *w, const struct sw_ff_arch *ff, sw_addr pc, bool exact,
                struct sw_ff_facts *out);

/* Whether AT has the return address where a call leaves it (x86: at SP,
 * nothing below; others: in the link register). */
bool sw_ff_ra_as_called(const struct arch_desc *a, const struct sw_an_pc *at);

#endif /* RSPWALK_WALKER_FRAME_FUNC_FACTS_H */
