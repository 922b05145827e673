/* walker/walker_internal.h -- what steppers and the walker share.
 *
 * Included only by walker/ files and their tests.
 */
#ifndef RSPWALK_WALKER_INTERNAL_H
#define RSPWALK_WALKER_INTERNAL_H

#include "rspwalk/rspwalk.h"
#include "util/util.h"
#include "walker/elf.h"

/* The ELF cache of W's library state (borrowed). */
struct sw_elfcache *sw_walker_elfcache(struct sw_walker *w);

/* The library state's ELF cache (borrowed). */
struct sw_elfcache *sw_libstate_elfcache(struct sw_libstate *ls);

/* Read LEN bytes of code or read-only data at runtime address ADDR: from the
 * local ELF file of the module that covers it when there is one, else from
 * the target.  Returns 0, SW_EMEM, or a link error. */
int sw_walker_read_code(struct sw_walker *w, sw_addr addr, void *buf, size_t len);

/* The signal-frame layout (W's arch->sigframe chain) whose rt_sigreturn
 * trampoline starts at RA, NULL if none: code read as sw_walker_read_code. */
const struct arch_sigframe *sw_walker_sigframe_at(struct sw_walker *w, sw_addr ra);

/* The next layout after PREV in the chain whose trampoline starts at RA, NULL if none. */
const struct arch_sigframe *sw_walker_sigframe_next(struct sw_walker *w, sw_addr ra,
                                                    const struct arch_sigframe *prev);

/* Read a target word at ADDR through W's process. */
int sw_walker_read_word(struct sw_walker *w, sw_addr addr, sw_word *val);

/* Whether CODE from a ProcessState read is a link failure (ends the walk)
 * rather than a fact about the frame (NOT_ME). */
static inline bool
sw_is_link_error(int code)
{
    return code == SW_ETIMEDOUT || code == SW_ECONN || code == SW_EEXITED || code == SW_ENOMEM;
}

/* Copy W's process error into W's message and return its code. */
int sw_walker_fail_from_proc(struct sw_walker *w, int code);

#endif /* RSPWALK_WALKER_INTERNAL_H */
