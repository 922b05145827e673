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

/* One link_map as a refresh saw it: what its first words must still hold at
 * a later stop for the list to be the same.  The dynamic linker appends
 * (dlopen) and unlinks (dlclose) by rewriting a neighbour's l_next or
 * l_prev, so a list whose every entry still points where it did, at the same
 * load address, is the list the refresh read. */
struct sw_rdebug_entry {
    sw_addr lm; /* the link_map's address */
    sw_addr l_addr, l_ld, l_next, l_prev;
    bool check_ld;   /* L_LD is known (the list gave it) */
    bool check_prev; /* L_PREV is known: not the first entry listed */
};

/* The bytes sw_rdebug_unchanged reads of each entry, at its LM. */
size_t sw_rdebug_entry_bytes(const struct sw_proc *p);

/* The check of the N modules MODS, listed in link-map order as
 * libraries-svr4 and sw_rdebug_modules list them (the main program's entry
 * left out).  *OUT NULL and *NOUT 0 when there is nothing to check by (no
 * module, or one without its link_map address).  Returns 0 or SW_ENOMEM.
 * *OUT: caller frees with sw_free. */
int sw_rdebug_watch(const struct sw_modinfo *mods, size_t n, struct sw_rdebug_entry **out,
                    size_t *nout);

/* Whether the link map still holds the N entries E as they were: *SAME
 * false when a word differs or an entry cannot be read.  Each entry is one
 * read of sw_rdebug_entry_bytes at its LM (the RSP backend has them cached
 * when they came with the stop's first write, sw_proc_ops.stop_reads).
 * Returns 0, or a link error with the message in ERR. */
int sw_rdebug_unchanged(struct sw_proc *p, const struct sw_rdebug_entry *e, size_t n, bool *same,
                        struct sw_errbuf *err);

#endif /* RSPWALK_LIBSTATE_INTERNAL_H */
