/* walker/symlookup_elf.c -- the default SymbolLookup: ELF symbols of the modules.
 *
 * An address goes to the module that covers it (LibraryState), then to the
 * ELF cache's symbol tables at the link-time address.  No DWARF here: the
 * names are those of gdb's minimal symbols (see sw_elf_symbol_at), which
 * gdb shows where no debug information covers the pc.
 */
#include "rspwalk/symlookup.h"

#include <stdlib.h>

#include "rspwalk/libstate.h"
#include "util/util.h"
#include "elf/elf.h"
#include "libstate/lib.h"

struct symlookup_elf {
    struct sw_symlookup base;
    struct sw_libstate *ls; /* borrowed */
};

static int
elf_lookup(struct sw_symlookup *s, sw_addr addr, struct sw_symbol *out)
{
    struct symlookup_elf *se = (struct symlookup_elf *)s;
    const struct sw_lib *lib;
    struct sw_elfsym sym;

    if (sw_libstate_lib_at(se->ls, addr, &lib) != 0 || sw_lib_elf(lib) == NULL)
        return SW_ENOSYM;
    int rc = sw_elf_symbol_at(sw_lib_elf(lib), addr - lib->bias, &sym);
    if (rc != 0)
        return rc;
    out->name = sym.name; /* owned by the ELF cache: outlives every refresh */
    out->start = sym.value + lib->bias;
    out->size = sym.size;
    out->module = lib->name;
    return 0;
}

static void
elf_destroy(struct sw_symlookup *s)
{
    sw_free(s);
}

static const struct sw_symlookup_ops symlookup_elf_ops = {
    .lookup = elf_lookup,
    .destroy = elf_destroy,
};

struct sw_symlookup *
sw_symlookup_elf_new(struct sw_libstate *ls)
{
    if (ls == NULL)
        return NULL;
    struct symlookup_elf *se = sw_calloc(1, sizeof *se);
    if (se == NULL)
        return NULL;
    se->base.ops = &symlookup_elf_ops;
    se->ls = ls;
    return &se->base;
}

void
sw_symlookup_free(struct sw_symlookup *s)
{
    if (s == NULL)
        return;
    if (s->ops && s->ops->destroy)
        s->ops->destroy(s);
    else
        free(s);
}
