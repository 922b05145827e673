/* walker/steppers/analysis_internal.h -- the dataflow's state, shared by the analysis files.
 *
 * analysis_flow.c runs the dataflow over one function's code; analysis.c
 * caches its results and answers queries; analysis_stub.c finds the extent
 * of linker stubs no symbol covers.  Included by those three only.
 */
#ifndef RSPWALK_WALKER_ANALYSIS_INTERNAL_H
#define RSPWALK_WALKER_ANALYSIS_INTERNAL_H

#include "disasm/disasm.h"
#include "walker/steppers/analysis.h"

enum {
    SW_AN_ST_SEEN = 1 << 0,     /* reached by the analysis */
    SW_AN_ST_INSN = 1 << 1,     /* an instruction starts here */
    SW_AN_ST_STRONG = 1 << 2,   /* reached by a jump or a fall-through that is not a call's */
    SW_AN_ST_SP = 1 << 3,       /* SP = base - height */
    SW_AN_ST_ALT = 1 << 4,      /* ...where the base is L, not the CFA (see below) */
    SW_AN_ST_FPCFA = 1 << 5,    /* FP = CFA + fp_off */
    SW_AN_ST_FPALT = 1 << 6,    /* FP = L + fp_alt_off */
    SW_AN_ST_R0LR = 1 << 7,     /* PowerPC r0 holds the return address */
    SW_AN_ST_PUSHED = 1 << 8,   /* the caller's FP is saved at CFA + fp_save_off */
    SW_AN_ST_PUSHALT = 1 << 9,  /* the caller's FP is saved at L + fp_save_off */
    SW_AN_ST_DRAP = 1 << 10,    /* general register drap_gpr[0] = CFA + drap_off[0] */
    SW_AN_ST_CFASLOT = 1 << 11, /* the CFA is saved at L + cfa_slot */
    SW_AN_ST_KCONST = 1 << 12,  /* general register k_gpr holds the constant k_val */
    SW_AN_ST_CMPSP = 1 << 13,   /* the flags (CR0) compare SP with drap_gpr[0] */
    SW_AN_ST_DRAP2 = 1 << 14,   /* general register drap_gpr[1] = CFA + drap_off[1] */
    SW_AN_ST_CMPSP2 = 1 << 15   /* the flags (CR0) compare SP with drap_gpr[1] */
};

/* The state before one instruction.  Offsets are from the CFA, or from L:
 * the SP right after `and $-N,%sp` realigned the stack, an address with no
 * known distance to the CFA (gcc's DRAP: the CFA is kept in a register,
 * then saved in the realigned frame). */
struct sw_an_state {
    int32_t height, fp_off, fp_alt_off, ra_off, fp_save_off, cfa_slot, k_val;
    int32_t drap_off[2]; /* two registers that hold CFA-relative addresses (gcc's DRAP,
                          * PowerPC's copy of the caller's SP, a probe loop's bound) */
    uint16_t flags;
    uint16_t drap_gpr[2], k_gpr;
    uint8_t ra;        /* enum sw_an_ra */
    uint8_t caller_fp; /* enum sw_an_fp */
    uint8_t len;       /* of the instruction, when SW_AN_ST_INSN */
};

/* A jump out of a function with a known target, and the state it carries
 * there: how a function's split-off part (NAME.cold, reached only by jumps
 * from NAME) is entered. */
struct sw_an_edge {
    sw_addr target;
    struct sw_an_state state;
};

/* Where the dataflow starts: at the entry (the state a call leaves), or at
 * the targets of a parent function's jumps. */
struct sw_an_seeds {
    const struct sw_an_edge *edges; /* NULL: from the entry */
    size_t n;
    /* Callees that store the caller's r0 at SP + 16 and return (64-bit
     * PowerPC's out-of-line register saves, _savegpr0_N, which -Os code
     * calls after mflr r0 to save its LR): a call to one saves the return
     * address if r0 holds it.  NULL when none. */
    const sw_addr *lr_savers;
    size_t nlr_savers;
    /* Seed the code the flow did not reach with the state the function's
     * indirect jumps leave, when they all leave the same one (jump tables).
     * Set for the extents of stripped code (analysis_starts.c), where
     * nothing else can tell, and for x86 (a symbol's extent holds one
     * function); other symbolised code keeps "not reached".  x86: only
     * below offset IND_END (0: the whole code), where other jumps enter. */
    bool seed_ind;
    sw_addr ind_end;
};

/* The jumps out of the function a dataflow found (up to max; *n counts them
 * all, so n > max says some are missing). */
struct sw_an_exits {
    struct sw_an_edge *edges;
    size_t max, n;
};

/* Run the dataflow over CODE (SIZE bytes at START) into ST (SIZE entries,
 * zeroed: the state before each instruction, by offset) from SEEDS (NULL:
 * the entry), record the jumps out in EXITS (may be NULL), and summarise
 * what the reached code does in *SUM.  Returns 0 or SW_ENOMEM. */
int sw_an_flow(struct sw_disasm *dis, const struct arch_desc *a, const uint8_t *code, sw_addr start,
               sw_addr size, const struct sw_an_seeds *seeds, struct sw_an_exits *exits,
               struct sw_an_state *st, struct sw_an_func *sum);

/* Apply instruction I at ADDR to S (the state before it). */
void sw_an_transfer(const struct arch_desc *a, const struct sw_insn *i, sw_addr addr,
                    struct sw_an_state *s);

/* The linker stub covering PC, as a function to analyse: *OUT's start and
 * size (its name NULL) when PC is in a PLT section of its module (.plt,
 * .iplt, .plt.sec, .plt.got, .glink) or after NEAR (may be NULL), a sizeless
 * stub symbol of the PowerPC linkers ("0000001b.plt_call.puts"), on an
 * architecture of 4-byte instructions; DIS decodes them.  The stub runs
 * from the end of the previous jump to its own jump.  Returns 0, SW_ENOSYM
 * (no stub there) or the link error of a code read. */
int sw_an_stub_at(struct sw_walker *w, struct sw_disasm *dis, sw_addr pc,
                  const struct sw_symbol *near, struct sw_symbol *out);

/* Function starts of stripped modules (analysis_starts.c), cached per
 * module: the analysis cache owns one. */
struct sw_an_starts;

/* A new empty cache; NULL when out of memory.  Free with sw_an_starts_free
 * (NULL is a no-op); clear when modules may be gone. */
struct sw_an_starts *sw_an_starts_new(void);
void sw_an_starts_free(struct sw_an_starts *s);
void sw_an_starts_clear(struct sw_an_starts *s);

/* The function covering PC where no symbol does, in a module without a
 * .symtab (stripped), on AArch64, PowerPC and x86 (with DIS, A's decoder;
 * NULL: none for x86): from the start at or below PC to the next start of
 * its module's .text, the starts being its direct calls' targets, the code
 * addresses its data holds (non-PIE; x86-64 PIE: its relative relocations),
 * and its entry point.  *OUT's name is NULL.  S (may be NULL) keeps the
 * starts of the last modules asked about.  Returns 0, SW_ENOSYM (no module
 * with a local file, a module with a .symtab, another family, PC not in
 * .text) or SW_ENOMEM. */
int sw_an_starts_func(struct sw_walker *w, struct sw_an_starts *s, struct sw_disasm *dis,
                      sw_addr pc, struct sw_symbol *out);

/* A direct jump of a stripped module from one extent of sw_an_starts_func into
 * another, to no start: a tail call to a function nothing calls, or a jump to a
 * function's split-off part.  Addresses in the process. */
struct sw_an_jumpin {
    sw_addr site, target;
};

/* The jump-ins (x86 only) whose targets lie in [LO, HI) (one extent of the module holding
 * LO), by target, into OUT (at most MAX, their number in *N).  Returns 0, SW_ENOSYM or
 * SW_ENOMEM. */
int sw_an_starts_jumpins(struct sw_walker *w, struct sw_an_starts *s, struct sw_disasm *dis,
                         sw_addr lo, sw_addr hi, struct sw_an_jumpin *out, size_t max, size_t *n);

/* The facts of S. */
void sw_an_state_facts(const struct sw_an_state *s, struct sw_an_pc *out);

#endif /* RSPWALK_WALKER_ANALYSIS_INTERNAL_H */
