/* dwarf/die.c -- libdw, opened on first use, and what the DWARF readers ask of a DIE.
 *
 * The adapter every dwarf/ file reads DIEs through: libdw's functions
 * (dwarf/libdw_dl.h), the failure message, attributes of one DIE, the DIE at
 * an offset, a DIE's address ranges.  Calls no other dwarf/ file; not the
 * handle (dwarf/dwarf.c) and not a unit's scopes (dwarf/scopes.c).
 */
#include "dwarf/dwarf_internal.h"

#include <stddef.h>

#include "util/dl.h"
#include "util/util.h"

/* ---- libdw, opened on first use (dwarf/libdw_dl.h) --------------------------------- */

#ifndef SW_LIBDW_SONAME
#define SW_LIBDW_SONAME "libdw.so.1"
#endif

struct sw_libdw_fns sw_libdw;

#define SYM(field, name)                                                                           \
    {                                                                                              \
        name, &sw_libdw.field                                                                      \
    }
static const struct sw_dl_sym libdw_syms[] = {
    SYM(attr, "dwarf_attr"),
    SYM(begin_elf, "dwarf_begin_elf"),
    SYM(child, "dwarf_child"),
    SYM(diecu, "dwarf_diecu"),
    SYM(dieoffset, "dwarf_dieoffset"),
    SYM(end, "dwarf_end"),
    SYM(errmsg, "dwarf_errmsg"),
    SYM(errno_, "dwarf_errno"),
    SYM(filesrc, "dwarf_filesrc"),
    SYM(formaddr, "dwarf_formaddr"),
    SYM(formblock, "dwarf_formblock"),
    SYM(formflag, "dwarf_formflag"),
    SYM(formref_die, "dwarf_formref_die"),
    SYM(formsdata, "dwarf_formsdata"),
    SYM(formstring, "dwarf_formstring"),
    SYM(formudata, "dwarf_formudata"),
    SYM(getarangeinfo, "dwarf_getarangeinfo"),
    SYM(getaranges, "dwarf_getaranges"),
    SYM(getlocations, "dwarf_getlocations"),
    SYM(getsrc_die, "dwarf_getsrc_die"),
    SYM(getsrcfiles, "dwarf_getsrcfiles"),
    SYM(hasattr, "dwarf_hasattr"),
    SYM(lineno, "dwarf_lineno"),
    SYM(linesrc, "dwarf_linesrc"),
    SYM(nextcu, "dwarf_nextcu"),
    SYM(offdie, "dwarf_offdie"),
    SYM(onearange, "dwarf_onearange"),
    SYM(ranges, "dwarf_ranges"),
    SYM(siblingof, "dwarf_siblingof"),
    SYM(srclang, "dwarf_srclang"),
    SYM(tag, "dwarf_tag"),
    SYM(whatform, "dwarf_whatform"),
};
#undef SYM

static struct sw_dl libdw_dl = { .soname = SW_LIBDW_SONAME,
                                 .syms = libdw_syms,
                                 .nsyms = sizeof libdw_syms / sizeof libdw_syms[0],
                                 .lock = PTHREAD_MUTEX_INITIALIZER };

bool
sw_libdw_load(const char **why)
{
    return sw_dl_load(&libdw_dl, why);
}

/* ---- libdw helpers -------------------------------------------------------------------- */

int
sw_di_fail(struct sw_dinfo *d, int code, const char *what)
{
    int e = dwarf_errno(); /* and clears it */
    const char *m = e ? dwarf_errmsg(e) : NULL;
    sw_fail(&d->err, code, "reading debug info of %s: %s%s%s", d->source ? d->source : d->path,
            what, m ? ": " : "", m ? m : "");
    return code;
}

bool
sw_di_attr_string(struct sw_dinfo *d, Dwarf_Die *die, unsigned at, const char **out)
{
    Dwarf_Attribute a;
    (void)d;
    const char *s = dwarf_attr(die, at, &a) ? dwarf_formstring(&a) : NULL;
    if (s == NULL || s[0] == 0)
        return false;
    *out = s; /* in the string section: valid until dwarf_end */
    return true;
}

bool
sw_di_attr_ref(struct sw_dinfo *d, Dwarf_Die *die, unsigned at, Dwarf_Off *off)
{
    Dwarf_Attribute a;
    Dwarf_Die ref;
    (void)d;
    if (dwarf_attr(die, at, &a) == NULL || dwarf_formref_die(&a, &ref) == NULL)
        return false;
    *off = dwarf_dieoffset(&ref);
    return true;
}

bool
sw_di_attr_flag(struct sw_dinfo *d, Dwarf_Die *die, unsigned at)
{
    Dwarf_Attribute a;
    bool v = false;
    (void)d;
    return dwarf_attr(die, at, &a) != NULL && dwarf_formflag(&a, &v) == 0 && v;
}

bool
sw_di_attr_addr(struct sw_dinfo *d, Dwarf_Die *die, unsigned at, sw_addr *out)
{
    Dwarf_Attribute a;
    Dwarf_Addr v = 0;
    (void)d;
    if (dwarf_attr(die, at, &a) == NULL || dwarf_formaddr(&a, &v) != 0)
        return false;
    *out = v;
    return true;
}

bool
sw_di_attr_udata(struct sw_dinfo *d, Dwarf_Die *die, unsigned at, Dwarf_Word *out)
{
    Dwarf_Attribute a;
    (void)d;
    return dwarf_attr(die, at, &a) != NULL && dwarf_formudata(&a, out) == 0;
}

bool
sw_di_has_attr(struct sw_dinfo *d, Dwarf_Die *die, unsigned at)
{
    (void)d;
    return dwarf_hasattr(die, at) != 0;
}

bool
sw_di_die_at(struct sw_dinfo *d, Dwarf_Off off, Dwarf_Die *out)
{
    return d->dbg != NULL && dwarf_offdie(d->dbg, off, out) != NULL;
}

/* ---- ranges ---------------------------------------------------------------------------- */

static int
rbuf_add(struct di_rbuf *rb, sw_addr lo, sw_addr hi)
{
    /* A range at 0 is a discarded function's tombstone (gdb drops them too:
     * no section is at address 0 in a shared object or PIE). */
    if (lo == 0 || lo >= hi)
        return 0;
    struct di_range *v = sw_grow(rb->v, &rb->cap, rb->n + 1, sizeof *v, 64);
    if (v == NULL)
        return SW_ENOMEM;
    rb->v = v;
    rb->v[rb->n++] = (struct di_range){ lo, hi };
    return 0;
}

int
sw_di_die_ranges(struct sw_dinfo *d, Dwarf_Die *die, struct di_rbuf *rb)
{
    Dwarf_Addr base = 0, lo = 0, hi = 0;
    ptrdiff_t off = 0;
    int rc = 0;
    (void)d;
    /* libdw reads DW_AT_low_pc with DW_AT_high_pc, else DW_AT_ranges (DWARF 4
     * lists from the unit's base address, DWARF 5 rnglists and their index);
     * a malformed list ends with what was read, as gdb's complaint does. */
    for (size_t n = 0; rc == 0 && n < DI_MAX_RANGES; n++) {
        off = dwarf_ranges(die, off, &base, &lo, &hi);
        if (off <= 0)
            break;
        rc = rbuf_add(rb, lo, hi);
    }
    return rc;
}
