/* walker/steppers/analysis.h -- stack-height analysis of one function, per instruction.
 *
 * The seed's Δ table: for each instruction reachable from a function's
 * entry, where the CFA (the SP before the call) is relative to SP or FP,
 * where the return address and the caller's FP are; and per function, what
 * its code does anywhere (saves FP, sets it, allocates stack).  Used by the
 * analysis stepper (analysis.c) and the FrameFuncHelper (frame_func*.c).
 * Not a stepper API.
 */
#ifndef RSPWALK_WALKER_ANALYSIS_H
#define RSPWALK_WALKER_ANALYSIS_H

#include "rspwalk/arch.h"
#include "rspwalk/symlookup.h"
#include "rspwalk/types.h"

struct sw_walker;

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

/* What a function does at some instruction the analysis reached: the
 * facts behind the seed's frame_type. */
struct sw_an_func {
    sw_addr start, size;
    bool saves_fp;  /* stores the caller's FP in its frame */
    bool sets_fp;   /* ...then points FP into its frame */
    bool saves_ra;  /* stores the link register (never on x86: the call does) */
    bool allocates; /* moves SP below where the call left it */
    bool signs_ra;  /* aarch64 paciasp/pacibsp: saved return addresses carry a PAC */
};

/* The facts at PC in the function covering it (EXACT: PC is where execution
 * stopped; otherwise PC is a return address and the facts are those right
 * after the call before it).  Returns 0, SW_ENOSYM (no function with a
 * size covers PC), SW_EINVAL (the analysis does not reach PC), SW_ENOMEM or
 * a read error.  Uses W's cache (below) when it has one. */
int sw_analysis_at(struct sw_walker *w, sw_addr pc, bool exact, struct sw_an_pc *out);

/* The same, and what the function does: *FN is written when the result is
 * 0 or SW_EINVAL (the function is known, PC is not reached), *AT only on 0. */
int sw_analysis_func(struct sw_walker *w, sw_addr pc, bool exact, struct sw_an_func *fn,
                     struct sw_an_pc *at);

/* The facts at an exact PC from the straight-line code after it, for code
 * no analysed function covers (no symbol, or a path the analysis does not
 * reach: a jump table's case, a tail after a trap): from PC up to a return,
 * only SP adjustments and reloads of FP and the return address from stack
 * slots.  The CFA is then the SP at the return (plus the return address on
 * x86).  Returns 0, SW_EINVAL (no such path within a few instructions) or a
 * read error. */
int sw_analysis_exit(struct sw_walker *w, sw_addr pc, struct sw_an_pc *out);

/* Whether the analysed code of the function at START jumps to an address
 * from TO to TO + SLACK (a tail call, or a conditional branch to a split-off
 * part): 1, 0, SW_EINVAL (the function has more jumps out than the analysis
 * keeps, none of them there), SW_ENOSYM (no function with a size there) or
 * another error of sw_analysis_at. */
int sw_analysis_jumps_to(struct sw_walker *w, sw_addr start, sw_addr to, sw_addr slack);

/* The function SYM was split from when SYM is its cold part (gcc's
 * -freorder-blocks-and-partition names it NAME.cold, older gcc NAME.cold.N):
 * NAME from SYM's module.  Returns 0 with *PARENT set, or SW_ENOSYM. */
int sw_analysis_cold_parent(struct sw_walker *w, const struct sw_symbol *sym,
                            struct sw_symbol *parent);

/* Analysed functions, cached per walker: the analysis and frame-func
 * steppers attach the cache when they join a walker (a walker with neither
 * analyses every query afresh); the walker clears it when a library is
 * unloaded and frees it with itself. */
struct sw_an_cache;

/* Give W an analysis cache if it has none.  Returns 0 or SW_ENOMEM (message
 * on W). */
int sw_an_cache_attach(struct sw_walker *w);

/* A new empty cache; NULL when out of memory.  Free with sw_an_cache_free. */
struct sw_an_cache *sw_an_cache_new(void);

/* NULL is a no-op. */
void sw_an_cache_free(struct sw_an_cache *c);

/* Forget every function (their code may be gone). */
void sw_an_cache_clear(struct sw_an_cache *c);

/* How many functions W's cache has analysed since the walker was made
 * (each once while it stays cached); 0 without a cache. */
unsigned sw_analysis_count(struct sw_walker *w);

#endif /* RSPWALK_WALKER_ANALYSIS_H */
