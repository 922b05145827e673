/* dwarf/names.c -- gdb's name of a C++ function that has no linkage name.
 *
 * gdb qualifies such a name with the namespaces and classes around its
 * declaration (gdb/dwarf2/read.c determine_prefix): "std::condition_variable::
 * wait<...>", "(anonymous namespace)::helper", a local class's "Local::method"
 * (a function resets the prefix).  libdw keeps no parent links, so the
 * namespaces, classes and functions of a unit are read once, as nested offset
 * intervals, the first time one of its names is asked for.  Not the choice of
 * the function (dwarf/scopes.c), not linkage names (walker/demangle.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dwarf/dwarf_internal.h"

enum nm_kind { NM_NAMESPACE, NM_CLASS, NM_ENUM, NM_FUNCTION, NM_OTHER };

struct nm_scope {
    Dwarf_Off lo, hi; /* the DIE and its children: [its offset, the next sibling's) */
    uint32_t parent;  /* DI_NONE at the top of the unit */
    uint8_t kind;     /* enum nm_kind */
    bool named;       /* NAME given (an anonymous namespace is named by gdb) */
    const char *name; /* in the mapped file */
};

struct nm_unit {
    Dwarf_Off off;
    bool cplus;
    struct nm_scope *v; /* DIE pre-order: sorted by lo */
    size_t n, cap;
};

struct di_names {
    struct nm_unit *units;
    size_t nunits, capunits;
    struct di_blk *strings; /* the qualified names handed out */
};

static bool
is_cplus(Dwarf_Word lang)
{
    return lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_03 ||
           lang == DW_LANG_C_plus_plus_11 || lang == DW_LANG_C_plus_plus_14;
}

static int
scope_add(struct nm_unit *u, const struct nm_scope *s)
{
    struct nm_scope *v = sw_grow(u->v, &u->cap, u->n + 1, sizeof *v, 64);
    if (v == NULL)
        return SW_ENOMEM;
    u->v = v;
    u->v[u->n++] = *s;
    return 0;
}

/* The children of PARENT (which ends at END) that can hold declarations:
 * namespaces, classes, enumerations and functions, lexical blocks looked
 * through.  0, SW_ENOMEM or SW_EBADELF. */
static int
read_children(struct sw_dinfo *d, struct nm_unit *u, Dwarf_Die *parent, Dwarf_Off end, uint32_t up,
              unsigned depth)
{
    Dwarf_Die child;
    if (depth >= DI_MAX_DEPTH)
        return 0;
    int rc = dwarf_child(parent, &child);
    if (rc > 0)
        return 0;
    if (rc < 0)
        return sw_di_fail(d, SW_EBADELF, "children of a DIE");
    for (;;) {
        Dwarf_Die sib;
        Dwarf_Off off = sw_di_off(&child), next = end;
        int more = dwarf_siblingof(&child, &sib);
        if (more < 0)
            return sw_di_fail(d, SW_EBADELF, "siblings of a DIE");
        if (more == 0)
            next = sw_di_off(&sib);
        enum nm_kind kind = NM_OTHER;
        switch (dwarf_tag(&child)) {
        case DW_TAG_namespace:
            kind = NM_NAMESPACE;
            break;
        case DW_TAG_class_type:
        case DW_TAG_structure_type:
        case DW_TAG_union_type:
        case DW_TAG_interface_type:
            kind = NM_CLASS;
            break;
        case DW_TAG_enumeration_type:
            /* An enum class names its scope; a plain enum is looked through. */
            kind = sw_di_attr_flag(d, &child, DW_AT_enum_class) ? NM_CLASS : NM_ENUM;
            break;
        case DW_TAG_subprogram:
        case DW_TAG_inlined_subroutine:
            kind = NM_FUNCTION;
            break;
        case DW_TAG_lexical_block:
            kind = NM_OTHER;
            break;
        default:
            kind = (enum nm_kind) - 1;
        }
        if ((int)kind >= 0) {
            struct nm_scope s = { .lo = off, .hi = next, .parent = up, .kind = (uint8_t)kind };
            s.named = sw_di_attr_string(d, &child, DW_AT_name, &s.name);
            rc = scope_add(u, &s);
            if (rc == 0)
                rc = read_children(d, u, &child, next, (uint32_t)(u->n - 1), depth + 1);
            if (rc < 0)
                return rc;
        }
        if (more > 0)
            return 0;
        child = sib;
    }
}

/* The unit at CU_OFF, read on first use; NULL when out of memory or
 * unreadable (its names are then left as they are). */
static struct nm_unit *
unit_at(struct sw_dinfo *d, Dwarf_Off cu_off)
{
    if (d->names == NULL) {
        d->names = sw_calloc(1, sizeof *d->names);
        if (d->names == NULL)
            return NULL;
    }
    struct di_names *nm = d->names;
    for (size_t i = 0; i < nm->nunits; i++)
        if (nm->units[i].off == cu_off)
            return &nm->units[i];
    struct nm_unit *v = sw_grow(nm->units, &nm->capunits, nm->nunits + 1, sizeof *v, 8);
    if (v == NULL)
        return NULL;
    nm->units = v;
    struct nm_unit *u = &nm->units[nm->nunits];
    *u = (struct nm_unit){ .off = cu_off };
    Dwarf_Die cu;
    Dwarf_Word lang = 0;
    if (sw_di_die_at(d, cu_off, &cu) && sw_di_attr_udata(d, &cu, DW_AT_language, &lang) &&
        is_cplus(lang)) {
        u->cplus = true;
        if (read_children(d, u, &cu, (Dwarf_Off)-1, DI_NONE, 0) < 0) {
            sw_free(u->v);
            u->v = NULL;
            u->n = 0;
            u->cplus = false;
        }
    }
    nm->nunits++;
    return u;
}

/* The innermost scope of U strictly around the DIE at OFF; DI_NONE if none. */
static uint32_t
around(const struct nm_unit *u, Dwarf_Off off)
{
    size_t lo = 0, hi = u->n;
    while (lo < hi) { /* the first scope starting at or after OFF */
        size_t mid = lo + (hi - lo) / 2;
        if (u->v[mid].lo < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint32_t c = lo > 0 ? (uint32_t)(lo - 1) : DI_NONE;
    while (c != DI_NONE && off >= u->v[c].hi)
        c = u->v[c].parent;
    return c;
}

static char *
keep(struct di_names *nm, size_t len)
{
    struct di_blk *b = sw_malloc(sizeof *b + len);
    if (b == NULL)
        return NULL;
    b->next = nm->strings;
    nm->strings = b;
    return (char *)b->data;
}

const char *
sw_di_cxx_name(struct sw_dinfo *d, Dwarf_Off decl, const char *name)
{
    Dwarf_Die die, cudie;
    if (name == NULL || !sw_di_die_at(d, decl, &die) ||
        dwarf_diecu(&die, &cudie, NULL, NULL) == NULL)
        return name;
    struct nm_unit *u = unit_at(d, sw_di_off(&cudie));
    if (u == NULL || !u->cplus)
        return name;
    /* gdb's determine_prefix: up to a function (which resets it) or an
     * anonymous class (which has none); plain enums looked through. */
    const char *parts[DI_MAX_DEPTH];
    size_t np = 0, len = strlen(name) + 1;
    for (uint32_t c = around(u, decl); c != DI_NONE && np < DI_MAX_DEPTH; c = u->v[c].parent) {
        const struct nm_scope *s = &u->v[c];
        if (s->kind == NM_FUNCTION || (s->kind == NM_CLASS && !s->named))
            break;
        if (s->kind == NM_ENUM || s->kind == NM_OTHER)
            continue;
        parts[np] = s->named ? s->name : "(anonymous namespace)";
        len += strlen(parts[np++]) + 2;
    }
    if (np == 0)
        return name;
    char *q = keep(d->names, len);
    if (q == NULL)
        return name;
    char *p = q;
    while (np-- > 0)
        p += sprintf(p, "%s::", parts[np]);
    strcpy(p, name);
    return q;
}

void
sw_di_names_free(struct sw_dinfo *d)
{
    struct di_names *nm = d->names;
    if (nm == NULL)
        return;
    for (size_t i = 0; i < nm->nunits; i++)
        sw_free(nm->units[i].v);
    sw_free(nm->units);
    while (nm->strings) {
        struct di_blk *b = nm->strings;
        nm->strings = b->next;
        sw_free(b);
    }
    sw_free(nm);
    d->names = NULL;
}
