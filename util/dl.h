/* util/dl.h -- a shared library opened on first use, its functions looked up by name.
 *
 * capstone, libdwarf and elfutils' libdw are not linked: each is opened with
 * dlopen(RTLD_LOCAL) the first time it is needed (disasm/capstone_dl.c,
 * cfi/cfi.c, dwarf/dwarf.c).  That keeps them out of the start of every process
 * (capstone's 77 000 relocations: 0.7 ms), and it keeps libdwarf and libdw
 * apart: the two export 34 functions of the same names (dwarf_tag,
 * dwarf_child, dwarf_attr, ...), and each calls its own through the global
 * symbol scope, where a library linked in would find the other's; opened
 * locally, each finds only its own.
 */
#ifndef RSPWALK_UTIL_DL_H
#define RSPWALK_UTIL_DL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* One function to look up: its name, and where its address goes (a function
 * pointer of the right type, written as an object pointer: POSIX's dlsym). */
struct sw_dl_sym {
    const char *name;
    void *slot; /* points to the function pointer */
};

struct sw_dl {
    const char *soname;           /* the library, by its SONAME */
    const struct sw_dl_sym *syms; /* what to look up */
    size_t nsyms;
    pthread_mutex_t lock; /* PTHREAD_MUTEX_INITIALIZER */
    bool tried, ok;
    void *lib; /* never closed: what it handed out may be used until exit */
    char error[256];
};

/* Open DL's library and fill every slot, once (later calls give the first
 * answer; thread-safe).  False when the library cannot be opened or lacks a
 * function: the reason, naming the library, is in DL->error, and in *WHY
 * when WHY is not NULL (borrowed from DL). */
bool sw_dl_load(struct sw_dl *dl, const char **why);

#endif /* RSPWALK_UTIL_DL_H */
