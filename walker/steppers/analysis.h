/* walker/steppers/analysis.h -- stack-height analysis of one function, per instruction.
 *
 * The seed's Δ table: for each instruction reachable from a function's
 * entry, where the CFA (the SP before the call) is relative to SP or FP,
 * where the return address and the caller's FP are.  Used by the analysis
 * stepper (analysis.c) and the FrameFuncHelper.  Not a stepper API.
 */
#ifndef RSPWALK_WALKER_ANALYSIS_H
#define RSPWALK_WALKER_ANALYSIS_H

#include "rspwalk/rspwalk.h"

/* Where the return address is. */
enum sw_an_ra {
    SW_AN_RA_UNKNOWN = 0,
    SW_AN_RA_LIVE,  /* in the link register (arch dw_ra) */
    SW_AN_RA_SLOT,  /* in memory at CFA + ra_off */
    SW_AN_RA_IN_R0, /* PowerPC: copied to r0 by mflr, not yet stored */
};

/* Where the caller's frame pointer is. */
enum sw_an_fp {
    SW_AN_FP_UNKNOWN = 0,
    SW_AN_FP_CALLER, /* FP still holds the caller's value */
    SW_AN_FP_SAVED,  /* FP was changed; the caller's is at CFA + fp_save_off */
};

/* The facts at one PC, before that instruction executes.  L is the SP
 * right after a stack realignment (`and $-N,%sp`), whose distance to the
 * CFA is not known statically. */
struct sw_an_pc {
    bool sp_known; /* CFA (L if sp_alt) = SP + height */
    bool sp_alt;
    int64_t height;
    bool fp_cfa; /* CFA = FP - fp_off (FP = CFA + fp_off) */
    int64_t fp_off;
    bool fp_alt; /* L = FP - fp_alt_off */
    int64_t fp_alt_off;
    bool cfa_saved; /* the CFA is stored at L + cfa_slot (gcc's DRAP) */
    int64_t cfa_slot;
    enum sw_an_ra ra;
    int64_t ra_off;
    enum sw_an_fp caller_fp;
    int64_t fp_save_off;
    bool fp_pushed;   /* the caller's FP has been saved (and not yet restored) */
    bool fp_save_alt; /* ...at L + fp_save_off, not CFA + fp_save_off */
};

/* The facts at PC in the function covering it (EXACT: PC is where execution
 * stopped; otherwise PC is a return address and the facts are those right
 * after the call before it).  Returns 0, SW_ENOSYM (no function with a
 * size covers PC), SW_EINVAL (the analysis does not reach PC), SW_ENOMEM or
 * a read error.  Uses a cache held by W's analysis stepper when W has one. */
int sw_analysis_at(struct sw_walker *w, sw_addr pc, bool exact, struct sw_an_pc *out);

#endif /* RSPWALK_WALKER_ANALYSIS_H */
