/* libstate/jit.h -- code generated at run time, as the GDB JIT interface lists it.
 *
 * __jit_debug_descriptor heads a list of in-memory ELF objects (GDB manual, "JIT
 * Compilation Interface"): read here from target memory, every word as hostile, each object
 * kept as a module without a file.  Included by libstate/ files and their tests.
 */
#ifndef RSPWALK_LIBSTATE_JIT_H
#define RSPWALK_LIBSTATE_JIT_H

#include <stddef.h>
#include <stdint.h>

#include "rspwalk/arch.h"
#include "rspwalk/proc.h"
#include "util/util.h"

struct sw_libstate;
struct sw_lib;
struct sw_lib_entry;

/* The symbol gdb looks for in every module (gdb/jit.c). */
#define SW_JIT_DESCRIPTOR "__jit_debug_descriptor"
/* Bounds on what a target's list may make us read: a longer chain is a loop
 * or garbage (V8 registers one object per function: thousands), an object
 * larger than SW_JIT_MAX_SYMFILE is not debug information for generated code
 * (QEMU's is under 1 KiB), and a library state reads at most
 * SW_JIT_MAX_TOTAL bytes of objects in its life (each image read is kept in
 * the ELF cache until the library state is freed). */
#define SW_JIT_MAX_ENTRIES 4096u
#define SW_JIT_MAX_SYMFILE (16u * 1024 * 1024)
#define SW_JIT_MAX_TOTAL   (256ull * 1024 * 1024)

/* struct jit_descriptor: version and action_flag (uint32_t), relevant_entry
 * and first_entry (pointers). */
struct sw_jit_desc {
    uint32_t version, action;
    sw_addr relevant, first;
};

/* struct jit_code_entry: next_entry, prev_entry, symfile_addr (pointers),
 * symfile_size (uint64_t); AT is where the entry itself lies. */
struct sw_jit_entry {
    sw_addr at, next, prev, symfile_addr;
    uint64_t symfile_size;
};

/* The bytes of the descriptor and of one entry for arch A (the word size
 * and, for i386, the 4-byte alignment of a uint64_t in a struct). */
size_t sw_jit_desc_bytes(const struct arch_desc *a);
size_t sw_jit_entry_bytes(const struct arch_desc *a);

/* Decode the descriptor from BUF (sw_jit_desc_bytes of A). */
void sw_jit_desc_decode(const struct arch_desc *a, const uint8_t *buf, struct sw_jit_desc *d);

/* The entries of the list starting at FIRST, in list order, at most MAX.
 * The walk stops at a null next_entry; at an entry that cannot be read, or
 * whose prev_entry is not the entry before it (the first's must be 0: a
 * doubly-linked list so checked has no cycle), or past MAX, it stops with
 * what came before and WHY (may be NULL, WHYLEN bytes) says so ("" when the
 * list ended well).  Returns 0, or a link error or SW_ENOMEM with the
 * message in ERR.  *OUT: caller frees with sw_free; NULL when *N is 0. */
int sw_jit_entries(struct sw_proc *p, sw_addr first, size_t max, struct sw_jit_entry **out,
                   size_t *n, char *why, size_t whylen, struct sw_errbuf *err);

/* Whether an object of SIZE bytes may be read after READ bytes of objects
 * were: NULL if so, else why not (a static string). */
const char *sw_jit_symfile_refused(uint64_t size, uint64_t read);

/* The library state's JIT objects (owned by it: struct sw_libstate.jit). */
struct sw_ls_jit;

/* Find the descriptor in the N modules LIBS a refresh has placed (before
 * they replace LS's list) and read its objects.  A descriptor that is
 * absent, or a list that cannot be read, leaves no JIT objects (a debug
 * line, or a warning for a list cut short).  Returns 0, or a link error or
 * SW_ENOMEM with the message on LS (the JIT objects as they were). */
int sw_ls_jit_refresh(struct sw_libstate *ls, const struct sw_lib_entry *libs, size_t n);

/* At a later stop: read the descriptor's words again (one read, fetched
 * with the stop's first reads: sw_ls_jit_stop_read) and the list only when
 * they changed (each registration or removal rewrites relevant_entry).
 * Returns as sw_ls_jit_refresh. */
int sw_ls_jit_update(struct sw_libstate *ls);

/* The descriptor's range for the stop's first reads: 0 and 0 when none. */
void sw_ls_jit_stop_read(const struct sw_libstate *ls, sw_addr *addr, size_t *len);

/* The JIT object covering ADDR, or NULL. */
const struct sw_lib *sw_ls_jit_lib_at(const struct sw_libstate *ls, sw_addr addr);

/* Free LS's JIT objects and state (NULL-safe inside). */
void sw_ls_jit_free(struct sw_libstate *ls);

#endif /* RSPWALK_LIBSTATE_JIT_H */
