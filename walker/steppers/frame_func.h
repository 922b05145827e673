/* walker/steppers/frame_func.h -- FrameFuncHelper: how far a function's frame is set up.
 *
 * The seed's allocatesFrame(addr), computed from the stack-height analysis
 * (analysis.h) on every architecture, for the frame-func stepper and (later)
 * the wanderer.  The stepper is frame_func.c; the rules of each family are
 * frame_func_record.c (x86, x86-64, aarch64) and frame_func_ppc.c.
 */
#ifndef RSPWALK_WALKER_FRAME_FUNC_H
#define RSPWALK_WALKER_FRAME_FUNC_H

#include "rspwalk/rspwalk.h"
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

/* Classify the function covering PC (EXACT: PC is where execution stopped,
 * so epilogue instructions count; otherwise PC is a return address).  Code
 * comes from the local ELF file when there is one; the analysis is cached
 * per function (analysis.h).  Returns 0; SW_ENOSYM (no function with a size
 * covers PC: unknown, unknown); SW_EINVAL (the analysis does not reach PC
 * and no return follows it: the function's type, unknown state);
 * SW_ENOARCH, SW_ENOMEM or the code of a failed read (unknown, unknown).
 * *OUT is always written. */
int sw_frame_func_alloc(struct sw_walker *w, sw_addr pc, bool exact, struct sw_frame_alloc *out);

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

/* Gather and classify the facts at PC: the analysis, and at an exact PC
 * whose facts lack the CFA or the return address, the exit scan
 * (sw_analysis_exit).  Returns 0, or SW_ENOMEM or a link error (the message
 * is left on W); a missing function or unreadable code is in OUT->rc. */
int sw_ff_facts(struct sw_walker *w, sw_addr pc, bool exact, struct sw_ff_facts *out);

/* Whether AT has the return address where a call leaves it (x86: at SP,
 * nothing below; others: in the link register). */
bool sw_ff_ra_as_called(const struct arch_desc *a, const struct sw_an_pc *at);

/* Read a target word for a stepper: SUCCESS, NOT_ME (unreadable: a fact about
 * the frame) or ERROR (a dead link; the message is left on the walker). */
enum sw_gcf sw_ff_read_word(struct sw_walker *w, sw_addr addr, sw_word *val);

/* S's analysis-cache slot if S is the frame-func stepper (NULL otherwise):
 * where a walker without an analysis stepper keeps its cache. */
struct sw_an_cache **sw_ff_cache_slot(struct sw_stepper *s);

#endif /* RSPWALK_WALKER_FRAME_FUNC_H */
