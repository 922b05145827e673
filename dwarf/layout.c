/* dwarf/layout.c -- structure layouts from .debug_info (dwarf/layout.h).
 *
 * A linear scan of the compilation units' top-level DIEs for one structure tag: done once per
 * reader, so no index is kept.  Not a type printer: dwarf/types.c is.
 */
#include "dwarf/layout.h"

#include <dwarf.h>
#include <string.h>

#include "dwarf/dwarf.h"
#include "dwarf/dwarf_internal.h"
#include "dwarf/libdw_dl.h"
#include "util/util.h"

/* Typedef, const and volatile chains are this deep at most in practice; a longer one is taken
 * for a loop in broken DWARF. */
#define LAYOUT_TYPE_DEPTH 16

/* The byte size of the type DIE refers to with DW_AT_type; 0 when unknown. */
static uint64_t
type_size(struct sw_dinfo *d, Dwarf_Die *die, unsigned depth)
{
    Dwarf_Attribute a;
    Dwarf_Die t;
    Dwarf_Word v;

    if (depth > LAYOUT_TYPE_DEPTH || dwarf_attr(die, DW_AT_type, &a) == NULL ||
        dwarf_formref_die(&a, &t) == NULL)
        return 0;
    if (sw_di_attr_udata(d, &t, DW_AT_byte_size, &v))
        return v;
    if (dwarf_tag(&t) != DW_TAG_array_type)
        return type_size(d, &t, depth + 1); /* typedef, const, volatile */
    uint64_t elem = type_size(d, &t, depth + 1), count = 1;
    Dwarf_Die sub;
    if (dwarf_child(&t, &sub) != 0)
        return 0;
    do {
        if (dwarf_tag(&sub) != DW_TAG_subrange_type)
            continue;
        if (sw_di_attr_udata(d, &sub, DW_AT_count, &v))
            count *= v;
        else if (sw_di_attr_udata(d, &sub, DW_AT_upper_bound, &v))
            count *= v + 1;
        else
            return 0;
    } while (dwarf_siblingof(&sub, &sub) == 0);
    return elem * count;
}

static void
fill_members(struct sw_dinfo *d, Dwarf_Die *st, struct sw_dinfo_field *m, size_t n)
{
    Dwarf_Die c;
    const char *name;
    Dwarf_Word off;

    if (dwarf_child(st, &c) != 0)
        return;
    do {
        if (dwarf_tag(&c) != DW_TAG_member || !sw_di_attr_string(d, &c, DW_AT_name, &name))
            continue;
        for (size_t i = 0; i < n; i++) {
            if (m[i].found || strcmp(m[i].name, name) != 0)
                continue;
            /* DWARF 2's location expression form (DW_OP_plus_uconst) is not read: GCC has
             * written a constant since DWARF 3. */
            if (!sw_di_attr_udata(d, &c, DW_AT_data_member_location, &off))
                break;
            m[i].found = true;
            m[i].offset = off;
            m[i].size = type_size(d, &c, 0);
        }
    } while (dwarf_siblingof(&c, &c) == 0);
}

int
sw_dinfo_struct_layout(struct sw_dinfo *d, const char *tag, struct sw_dinfo_field *members,
                       size_t n, uint64_t *size)
{
    Dwarf_Off off = 0, next;
    size_t hsize;

    for (size_t i = 0; i < n; i++)
        members[i].found = false;
    if (d->dbg == NULL)
        return sw_fail(&d->err, SW_ENOENT, "struct %s: %s has no .debug_info", tag, d->path);
    sw_di_lock(d);
    while (dwarf_nextcu(d->dbg, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu, c;
        const char *name;
        Dwarf_Word bytes;
        if (dwarf_offdie(d->dbg, off + hsize, &cu) != NULL && dwarf_child(&cu, &c) == 0) {
            do {
                if (dwarf_tag(&c) != DW_TAG_structure_type ||
                    !sw_di_attr_string(d, &c, DW_AT_name, &name) || strcmp(name, tag) != 0 ||
                    sw_di_attr_flag(d, &c, DW_AT_declaration) ||
                    !sw_di_attr_udata(d, &c, DW_AT_byte_size, &bytes))
                    continue;
                fill_members(d, &c, members, n);
                if (size)
                    *size = bytes;
                sw_di_unlock(d);
                return 0;
            } while (dwarf_siblingof(&c, &c) == 0);
        }
        off = next;
    }
    sw_di_unlock(d);
    return sw_fail(&d->err, SW_ENOENT, "struct %s: not defined in the debug info of %s", tag,
                   d->path);
}
