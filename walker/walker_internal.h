/* walker/walker_internal.h -- the walk context: what steppers need of a walker.
 *
 * Frame registers (lazy ones included), the process, the library state,
 * code reads, signal-frame layouts and per-walker caches, all defined in
 * walker/context.c, which calls no stepper.  Inline and tail-call frames
 * are walker/virtual.c's.  Included only by walker/ files and their tests.
 */
#ifndef RSPWALK_WALKER_INTERNAL_H
#define RSPWALK_WALKER_INTERNAL_H

#include "rspwalk/arch.h"
#include "rspwalk/errors.h"
#include "rspwalk/frame.h"
#include "rspwalk/libstate.h"
#include "rspwalk/proc.h"
#include "rspwalk/stepper.h"
#include "rspwalk/symlookup.h"
#include "rspwalk/walker.h"
#include "util/util.h"
#include "elf/elf.h"
#include "libstate/module.h"

/* The ELF cache of W's library state (borrowed). */
struct sw_elfcache *sw_walker_elfcache(struct sw_walker *w);

/* Read LEN bytes of code or read-only data at runtime address ADDR: from the
 * local ELF file of the module that covers it when there is one, else from
 * the target.  Returns 0, SW_EMEM, or a link error. */
int sw_walker_read_code(struct sw_walker *w, sw_addr addr, void *buf, size_t len);
/* One instruction's bytes at ADDR for a disassembler: MAX of them, else 4,
 * else 1, as many as can be read (code may end at the end of a file or a
 * mapping); *N says how many.  0, a link error, or the last read's code. */
int sw_walker_read_insn(struct sw_walker *w, sw_addr addr, uint8_t *buf, size_t max, size_t *n);

/* The signal-frame layout (W's arch->sigframe chain) whose rt_sigreturn
 * trampoline starts at RA, NULL if none: code read as sw_walker_read_code. */
const struct arch_sigframe *sw_walker_sigframe_at(struct sw_walker *w, sw_addr ra);

/* The next layout after PREV in the chain whose trampoline starts at RA, NULL if none. */
const struct arch_sigframe *sw_walker_sigframe_next(struct sw_walker *w, sw_addr ra,
                                                    const struct arch_sigframe *prev);

/* Whether code in no module may be read from the target for the wanderer's
 * call check (sw_wand_code): only while the walker checks one caller in the
 * memory map's executable ranges. */
bool sw_walker_code_from_target(const struct sw_walker *w);

/* Read a target word at ADDR through W's process. */
int sw_walker_read_word(struct sw_walker *w, sw_addr addr, sw_word *val);

/* Register DW of F: from F, else -- for frame 0 of the last sw_initial_frame
 * and the CFI frames outward of it, whose same-value rules carry frame 0's
 * registers -- from the ProcessState (a lazy register: one 'g' at most per
 * thread per stop).  1 with *VAL, 0 when not known, or a link error. */
int sw_walker_frame_reg(struct sw_walker *w, const struct sw_frame *f, unsigned dw, sw_word *val);

/* Whether F may take lazy registers (see sw_walker_frame_reg). */
bool sw_walker_frame_lazy(const struct sw_walker *w, const struct sw_frame *f);

/* Fill every register F lacks that is lazy: 1 if F was lazy, 0 if not, or a
 * link error.  For steppers whose rules need registers they cannot name in
 * advance (a CFI row that failed without them). */
int sw_walker_fill_lazy(struct sw_walker *w, struct sw_frame *f);

/* Copy W's process error into W's message and return its code. */
int sw_walker_fail_from_proc(struct sw_walker *w, int code);

/* Whether the instruction that ends at RA is a call (x86 call forms,
 * AArch64 bl/blr, PowerPC bl/bctrl/blrl), decoded from the local file of
 * the module covering RA (walker/steppers/wanderer.c): 1 a call, 0 not,
 * -1 when no local code covers it or the family is unknown. */
int sw_walker_follows_call(struct sw_walker *w, sw_addr ra);

/* Read a target word for a stepper: SUCCESS, NOT_ME (unreadable: a fact about
 * the frame) or ERROR (a dead link; the message is left on the walker). */
enum sw_gcf sw_step_read_word(struct sw_walker *w, sw_addr addr, sw_word *val);

/* A cache a walker keeps for its steppers' helpers (the stack-height
 * analysis), named by its ops table.  Both members REQUIRED. */
struct sw_walker_cache_ops {
    /* Forget what an unloaded library may have made stale. */
    void (*clear)(void *cache);
    /* Free the cache (never NULL here). */
    void (*free)(void *cache);
};

/* W's cache of kind OPS, NULL if none was added. */
void *sw_walker_cache(struct sw_walker *w, const struct sw_walker_cache_ops *ops);

/* Give W the cache CACHE of kind OPS (W takes ownership; a second one of the
 * same kind is freed at once).  Cleared when a library is unloaded, freed by
 * sw_walker_free.  Returns 0, or SW_ENOMEM (CACHE freed, message on W). */
int sw_walker_cache_add(struct sw_walker *w, const struct sw_walker_cache_ops *ops, void *cache);

/* Inline and tail-call frames (walker/virtual.c).  A cache of each module's
 * DWARF (struct sw_dinfo, opened on first use), owned by the walker: created
 * by the first sw_walker_add_virtual_frames in W's slot, freed by
 * sw_walker_free with sw_virtual_free.  NULL is a no-op. */
struct sw_virtual;
void sw_virtual_free(struct sw_virtual *v);

/* W's slot for that cache (walker.c); NULL until the first use. */
struct sw_virtual **sw_walker_virtual_slot(struct sw_walker *w);

/* Turn ST, a walk of physical frames, into the stack gdb shows: before each
 * physical frame the inlined subroutines covering its lookup PC (innermost
 * first, kind SW_FRAME_INLINE, a copy of the physical frame with stepper NULL
 * and vname set), and after it, before its caller, the tail-call frames
 * between the two (kind SW_FRAME_TAILCALL, RA the tail call's return address,
 * SP and FP the caller's).  Levels are renumbered.  Frames already virtual are
 * computed again.  Modules without debug information add nothing.  Returns 0,
 * or SW_ENOMEM with ST unchanged and the message in ERR.  *CACHE: NULL at
 * first, then reused; free with sw_virtual_free. */
int sw_virtual_frames_add(struct sw_virtual **cache, struct sw_libstate *ls, struct sw_stack *st,
                          struct sw_errbuf *err);

/* The same with W's library state and cache; the message goes on W. */
int sw_walker_add_virtual_frames(struct sw_walker *w, struct sw_stack *st);

/* The module covering PC and its DWARF from W's cache (walker/virtual.c),
 * for local variables: *D NULL when the module has none.  Returns 0 or
 * SW_ENOMEM (message on W). */
struct sw_dinfo;
int sw_walker_dinfo_at(struct sw_walker *w, sw_addr pc, const struct sw_lib **lib,
                       struct sw_dinfo **d);

#endif /* RSPWALK_WALKER_INTERNAL_H */
