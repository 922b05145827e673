/* libstate/module.h -- one local file as walks use it: its ELF, CFI and DWARF.
 *
 * A module is one file (or one image read from target memory) of the module
 * cache: its sw_elf, borrowed from the cache's ELF cache, and its call frame
 * information and DWARF, opened on first use and owned by the module (the
 * pattern of libdwfl's Dwfl_Module).  Several library states may share one
 * module cache (struct sw_modcache, rspwalk/libstate.h); a module has no load
 * address, which is each sw_lib's.  Included by libstate/ and walker/ files
 * and their tests.  Not the module list (libstate.c).
 *
 * Threads: a module cache, its modules, and the sw_elf, sw_cfi and sw_dinfo
 * they hand out may be used from several threads at once.  The cache's lock
 * guards its list of modules and its reference count; each module's lock
 * guards the opening of its CFI and DWARF.
 */
#ifndef RSPWALK_LIBSTATE_MODULE_H
#define RSPWALK_LIBSTATE_MODULE_H

#include "rspwalk/libstate.h"
#include "util/util.h"

struct sw_elf;
struct sw_module;
struct sw_elfcache;
struct sw_cfi;
struct sw_dinfo;

/* Take a reference to MC (a library state given it by its configuration);
 * sw_modcache_free drops one. */
void sw_modcache_ref(struct sw_modcache *mc);

/* MC's ELF cache (borrowed, valid while MC is). */
struct sw_elfcache *sw_modcache_elfs(struct sw_modcache *mc);

/* The module of E, a file or image of MC's ELF cache: made on the first
 * call, the same object afterwards, from any thread.  *OUT borrowed, valid
 * while MC is.  Returns 0 or SW_ENOMEM with the message in ERR. */
int sw_modcache_module(struct sw_modcache *mc, struct sw_elf *e, struct sw_module **out,
                       struct sw_errbuf *err);

/* The module's file (borrowed from the ELF cache). */
struct sw_elf *sw_module_elf(const struct sw_module *m);

/* The module's call frame information (cfi/cfi.h: the file's .eh_frame and
 * .debug_frame, its debug file's .debug_frame read from sw_elf_dwarf_path;
 * an image's from its bytes), opened on the first call for a target of
 * WORD_SIZE bytes, owned by M.  0 with *CFI, or with *CFI NULL when the file
 * has none or it cannot be read (remembered; *WHY, borrowed from M, says
 * why), or SW_ENOMEM with the message in *WHY (a later call tries again). */
int sw_module_cfi(struct sw_module *m, unsigned word_size, struct sw_cfi **cfi,
                  const struct sw_errbuf **why);

/* The module's DWARF (dwarf/dwarf.h), opened on the first call from the file
 * and its sw_elf_dwarf_path, owned by M and shared by every walk that looks
 * at the file.  0 with *D NULL when there is none or it cannot be read
 * (remembered, with a debug message; no error for a walk), or SW_ENOMEM with
 * the message in ERR (a later call tries again).  An image read from memory
 * (the vDSO) has none. */
int sw_module_dinfo(struct sw_module *m, struct sw_dinfo **d, struct sw_errbuf *err);

/* The library state's ELF cache (borrowed): its module cache's. */
struct sw_elfcache *sw_libstate_elfcache(struct sw_libstate *ls);

#endif /* RSPWALK_LIBSTATE_MODULE_H */
