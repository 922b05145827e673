/* rspwalk/symlookup.h -- SymbolLookup: from an address to a name.
 *
 * The default implementation reads ELF symbol tables with libelf and names an
 * address as gdb's minimal symbols do: the file's .symtab (else its
 * .dynsym) and its separate debug file's .symtab, found by build-id.
 *
 * Threads: a symbol lookup is used by one thread at a time (its walker's).
 * sw_name_demangle may be called from any thread.
 */
#ifndef RSPWALK_SYMLOOKUP_H
#define RSPWALK_SYMLOOKUP_H

#include "rspwalk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sw_symlookup;
struct sw_libstate;

/* What a lookup finds.  Strings are valid until the symbol lookup is freed
 * or its library state is refreshed. */
struct sw_symbol {
    const char *name;   /* the function's name */
    sw_addr start;      /* runtime address of its first byte */
    sw_addr size;       /* bytes; 0 if the symbol has no size */
    const char *module; /* target path of the module that holds it */
};

struct sw_symlookup_ops {
    /* REQUIRED.  The function symbol covering ADDR.  Returns 0, SW_ENOSYM. */
    int (*lookup)(struct sw_symlookup *s, sw_addr addr, struct sw_symbol *out);
    /* OPTIONAL (default: free(S)). */
    void (*destroy)(struct sw_symlookup *s);
};

struct sw_symlookup {
    const struct sw_symlookup_ops *ops; /* borrowed, static */
};

/* The default lookup over the modules of LS (borrowed: must outlive it).
 * Returns NULL when out of memory.  Free with sw_symlookup_free. */
SW_API struct sw_symlookup *sw_symlookup_elf_new(struct sw_libstate *ls);

/* Call S->ops->destroy.  NULL is a no-op. */
SW_API void sw_symlookup_free(struct sw_symlookup *s);

/* Where a name comes from, which decides how gdb prints it. */
enum sw_name_form {
    /* A symbol table's name (struct sw_symbol, no debug information covers
     * the pc): a C++ name demangled whole, "Square::area() const",
     * "void std::sort<...>(...)", "Runner::run(int) [clone .isra.0]". */
    SW_NAME_FROM_SYMBOL = 0,
    /* A DWARF function's name (struct sw_frame's vname): a C++ linkage name
     * demangled without its return type and, where gdb's own name parser
     * takes it apart, without its parameter list: "Square::area", but
     * "Level<0>::go(std::function<long (int)> const&, int)" whole. */
    SW_NAME_FROM_DEBUG = 1,
};

/* NAME as gdb's backtrace prints a function of that name from FORM: a C++
 * linkage name ("_Z...") demangled by libiberty, gdb's demangler; any other
 * name as it is.  Returns a new string (caller frees with free()), NULL for
 * a NULL NAME or when out of memory. */
SW_API char *sw_name_demangle(const char *name, enum sw_name_form form);

#ifdef __cplusplus
}
#endif
#endif /* RSPWALK_SYMLOOKUP_H */
