/* libstate/libstate_internal.h -- the library list read from the dynamic
 * linker's own data, for stubs that offer no list (QEMU user mode).
 *
 * Included only by libstate/ files and their tests.  Not the LibraryState
 * itself (rspwalk/libstate.h): this only produces the module list it places.
 */
#ifndef RSPWALK_LIBSTATE_INTERNAL_H
#define RSPWALK_LIBSTATE_INTERNAL_H

#include "rspwalk/proc.h"
#include "util/util.h"

/* Bounds of the link-map walk: a longer chain is a loop or garbage (glibc
 * programs load tens of objects; 1024 is far above any real one), and a
 * name longer than PATH_MAX is not a path. */
#define SW_RDEBUG_MAX_MODULES  1024
#define SW_RDEBUG_MAX_NAME_LEN 4096

/* The modules the dynamic linker has loaded, read the way gdb does without a
 * library list (solib-svr4.c): DT_DEBUG in the executable's dynamic section
 * at runtime address DYN_ADDR gives struct r_debug, whose r_map heads the
 * link_map chain.  Layouts are the target's (P->arch word size and byte
 * order).  The main program's entry (empty name) is skipped.
 *
 * A dynamic section without DT_DEBUG (a static program), DT_DEBUG still 0
 * (ld.so has not run yet) or r_map 0 is an empty list, not an error.
 * Unreadable memory ends the walk with what was read so far (a debug line
 * says why); an entry whose name cannot be read is skipped.  *R_BRK (may be
 * NULL) gets r_debug.r_brk, the address the dynamic linker calls on every
 * load and unload (0 when unknown).
 *
 * Returns 0, or a link error (SW_ETIMEDOUT, SW_ECONN, SW_EEXITED) or
 * SW_ENOMEM with the message in ERR.  *MODS: caller frees with
 * sw_modinfo_free(*MODS, *N); NULL when *N is 0. */
int sw_rdebug_modules(struct sw_proc *p, sw_addr dyn_addr, struct sw_modinfo **mods, size_t *n,
                      sw_addr *r_brk, struct sw_errbuf *err);

/* Only r_debug.r_brk, by the same path (DT_DEBUG, then struct r_debug): a
 * few reads of the dynamic section and one word, without the link map.
 * *R_BRK is 0 when unknown (no DT_DEBUG, or ld.so has not filled it in).
 * Returns 0 or, like sw_rdebug_modules, a link error with ERR set. */
int sw_rdebug_brk(struct sw_proc *p, sw_addr dyn_addr, sw_addr *r_brk, struct sw_errbuf *err);

#endif /* RSPWALK_LIBSTATE_INTERNAL_H */
