/* dwarf/scopes.c -- the scopes and call sites of a compilation unit.
 *
 * A unit is parsed on first use into its functions, inlined subroutines and
 * lexical blocks (with their ranges, in DIE pre-order) and its call sites;
 * the queries for the function covering an address are answered from that.
 * Not the address -> unit table (dwarf/dwarf.c), nor variables (dwarf/vars.c).
 */
#include "dwarf/dwarf.h"

#include <stdlib.h>
#include <string.h>

#include "dwarf/dwarf_internal.h"

/* The name gdb prints for DIE: the first DW_AT_linkage_name along its
 * abstract_origin / specification links, else the first DW_AT_name, in C++
 * qualified by the scopes around the last DIE of the chain (the
 * declaration: dwarf/names.c). */
static const char *
die_gdb_name(struct sw_dinfo *d, Dwarf_Die *die)
{
    const char *linkage = NULL, *name = NULL, *s;
    Dwarf_Die cur = *die;
    Dwarf_Off decl = 0;

    for (int hop = 0; hop < DI_MAX_HOPS; hop++) {
        Dwarf_Off off;
        decl = sw_di_off(&cur);
        if (sw_di_attr_string(d, &cur, DW_AT_linkage_name, &s) ||
            sw_di_attr_string(d, &cur, DW_AT_MIPS_linkage_name, &s)) {
            linkage = s;
            break;
        }
        if (name == NULL && sw_di_attr_string(d, &cur, DW_AT_name, &s))
            name = s;
        if (!sw_di_attr_ref(d, &cur, DW_AT_abstract_origin, &off) &&
            !sw_di_attr_ref(d, &cur, DW_AT_specification, &off))
            break;
        if (!sw_di_die_at(d, off, &cur))
            break;
    }
    if (linkage == NULL && name != NULL && decl != 0)
        return sw_di_cxx_name(d, decl, name);
    return linkage ? linkage : name;
}

/* ---- one unit -------------------------------------------------------------------------- */

struct di_parse {
    struct sw_dinfo *d;
    struct di_cu *cu;
    unsigned ndies;
    bool c_only; /* a C unit: its types hold no functions */
};

static int
add_scope(struct di_cu *cu, const struct di_scope *s)
{
    struct di_scope *v = sw_grow(cu->scopes, &cu->capscopes, cu->nscopes + 1, sizeof *v, 32);
    if (v == NULL)
        return SW_ENOMEM;
    cu->scopes = v;
    cu->scopes[cu->nscopes++] = *s;
    return 0;
}

/* gdb's dwarf2_attr: whether DIE, or the DIE its DW_AT_specification or
 * DW_AT_abstract_origin names (and so on), has attribute AT; *FLAG its value
 * as a flag when FLAG is not NULL. */
static bool
attr_along(struct sw_dinfo *d, Dwarf_Die *die, unsigned at, bool *flag)
{
    Dwarf_Die cur = *die;

    for (int hop = 0; hop < DI_MAX_HOPS; hop++) {
        Dwarf_Off off;
        if (sw_di_has_attr(d, &cur, at)) {
            if (flag != NULL)
                *flag = sw_di_attr_flag(d, &cur, at);
            return true;
        }
        if (!sw_di_attr_ref(d, &cur, DW_AT_specification, &off) &&
            !sw_di_attr_ref(d, &cur, DW_AT_abstract_origin, &off))
            break;
        if (!sw_di_die_at(d, off, &cur))
            break;
    }
    return false;
}

/* gdb's die_is_declaration: DW_AT_declaration along the origins and no
 * DW_AT_specification.  An LTO unit's concrete DIE that only names its
 * abstract origin in the early-debug unit is a declaration when that is. */
static bool
die_is_declaration(struct sw_dinfo *d, Dwarf_Die *die)
{
    bool decl = false;
    return attr_along(d, die, DW_AT_declaration, &decl) && decl &&
           !attr_along(d, die, DW_AT_specification, NULL);
}

/* Where a call site's target is, as gdb's read_call_site_scope records it:
 * a DW_AT_call_target expression needs the caller's registers, which a
 * tail-call search does not have, so it stays unresolved; a declaration is
 * resolved later by name (its linkage name, else its name, along its
 * origins); a definition by its entry: its low pc, or with DW_AT_ranges the
 * start of each range (gdb 13's call_site_target::ADDRESSES), of which only
 * the first can be a function's entry.  0 or SW_ENOMEM. */
static int
site_target(struct di_parse *p, Dwarf_Die *die, struct di_site *s)
{
    struct sw_dinfo *d = p->d;
    Dwarf_Off off;
    Dwarf_Die t;
    int rc = 0;

    s->tkind = DI_TGT_NONE;
    if (sw_di_has_attr(d, die, DW_AT_call_target) ||
        sw_di_has_attr(d, die, DW_AT_GNU_call_site_target))
        return 0;
    if (!sw_di_attr_ref(d, die, DW_AT_call_origin, &off) &&
        !sw_di_attr_ref(d, die, DW_AT_abstract_origin, &off))
        return 0;
    if (!sw_di_die_at(d, off, &t))
        return 0;
    if (die_is_declaration(d, &t)) {
        const char *name = die_gdb_name(d, &t);
        if (name != NULL) {
            s->tkind = DI_TGT_NAME;
            s->tname = name;
        }
    } else {
        /* A DWARF 4 range list counts from the target's own unit: libdw's
         * ranges take the base of the unit a DIE is in. */
        struct di_rbuf rb = { 0 };
        rc = sw_di_die_ranges(d, &t, &rb);
        if (rc == 0 && rb.n > 0) {
            s->tkind = DI_TGT_ADDR;
            s->taddr = rb.v[0].lo;
            s->tmulti = rb.n > 1 && sw_di_has_attr(d, &t, DW_AT_ranges);
        }
        sw_free(rb.v);
    }
    return rc;
}

static int
read_site(struct di_parse *p, Dwarf_Die *die, uint32_t func)
{
    struct di_cu *cu = p->cu;
    struct di_site s = { .func = func };

    if (!sw_di_attr_addr(p->d, die, DW_AT_call_return_pc, &s.pc) &&
        !sw_di_attr_addr(p->d, die, DW_AT_low_pc, &s.pc))
        return 0;
    s.tail = sw_di_attr_flag(p->d, die, DW_AT_call_tail_call) ||
             sw_di_attr_flag(p->d, die, DW_AT_GNU_tail_call);
    int rc = site_target(p, die, &s);
    if (rc < 0)
        return rc;
    struct di_site *v = sw_grow(cu->sites, &cu->capsites, cu->nsites + 1, sizeof *v, 32);
    if (v == NULL)
        return SW_ENOMEM;
    cu->sites = v;
    cu->sites[cu->nsites++] = s;
    return 0;
}

static int parse_die(struct di_parse *p, Dwarf_Die *die, uint32_t scope, uint32_t func,
                     unsigned depth);

static int
parse_children(struct di_parse *p, Dwarf_Die *parent, uint32_t scope, uint32_t func, unsigned depth)
{
    Dwarf_Die child;
    int rc;

    if (depth >= DI_MAX_DEPTH)
        return 0; /* deeper scopes of garbage are ignored, not an error */
    rc = dwarf_child(parent, &child);
    if (rc > 0)
        return 0;
    if (rc < 0)
        return sw_di_fail(p->d, SW_EBADELF, "children of a DIE");
    do {
        if ((rc = parse_die(p, &child, scope, func, depth)) < 0)
            return rc;
        rc = dwarf_siblingof(&child, &child);
        if (rc < 0)
            return sw_di_fail(p->d, SW_EBADELF, "siblings of a DIE");
    } while (rc == 0);
    return 0;
}

static int
parse_die(struct di_parse *p, Dwarf_Die *die, uint32_t scope, uint32_t func, unsigned depth)
{
    struct di_cu *cu = p->cu;
    int rc;

    if (++p->ndies > DI_MAX_DIES)
        return sw_fail(&p->d->err, SW_EBADELF,
                       "reading debug info of %s: the unit at 0x%llx has over %u DIEs",
                       p->d->source, (unsigned long long)cu->off, DI_MAX_DIES);
    int tag = dwarf_tag(die);
    if (tag == DW_TAG_invalid)
        return sw_di_fail(p->d, SW_EBADELF, "a DIE's tag");

    switch (tag) {
    case DW_TAG_subprogram:
    case DW_TAG_inlined_subroutine:
    case DW_TAG_lexical_block: {
        size_t first = cu->ranges.n;
        rc = sw_di_die_ranges(p->d, die, &cu->ranges);
        if (rc < 0)
            return rc;
        if (cu->ranges.n == first) {
            /* No code: a declaration or an abstract instance is skipped with
             * its children; a lexical block without ranges is transparent
             * (gdb reads its children as its parent's). */
            if (tag == DW_TAG_lexical_block)
                return parse_children(p, die, scope, func, depth + 1);
            return 0;
        }
        struct di_scope s = {
            .parent = scope,
            .first = (uint32_t)first,
            .nranges = (uint32_t)(cu->ranges.n - first),
            .kind = tag == DW_TAG_subprogram           ? DI_FUNC
                    : tag == DW_TAG_inlined_subroutine ? DI_INLINED
                                                       : DI_BLOCK,
        };
        if (s.kind != DI_BLOCK)
            s.name = die_gdb_name(p->d, die);
        s.die = sw_di_off(die);
        rc = add_scope(cu, &s);
        if (rc < 0)
            return rc;
        uint32_t idx = (uint32_t)(cu->nscopes - 1);
        return parse_children(p, die, idx, s.kind == DI_FUNC ? idx : func, depth + 1);
    }
    case DW_TAG_call_site:
    case DW_TAG_GNU_call_site:
        return func == DI_NONE ? 0 : read_site(p, die, func);
    case DW_TAG_namespace:
    case DW_TAG_module:
        return parse_children(p, die, scope, func, depth + 1);
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
        /* Functions defined in a class (a lambda's operator() in the
         * closure type of the function that holds it): code of their own,
         * not inside the enclosing function's ranges, so top-level scopes.
         * C has none: a C unit's members are not read (libc's units hold
         * thousands, from the headers they include). */
        if (p->c_only)
            return 0;
        return parse_children(p, die, DI_NONE, DI_NONE, depth + 1);
    default:
        return 0;
    }
}

/* Parse CU once.  Returns 0 (also for a unit found malformed earlier, which
 * stays empty), SW_ENOMEM (the unit stays unparsed: a later call retries),
 * SW_EBADELF (the unit is malformed; message on D). */
static int
cu_parse(struct sw_dinfo *d, struct di_cu *cu)
{
    struct di_parse p = { .d = d, .cu = cu };
    int rc;

    if (cu->state != 0)
        return 0;
    /* Parsed on an earlier run: taken from beside the uncompressed copy. */
    rc = sw_di_unit_load(d, cu);
    if (rc < 0)
        return rc;
    if (rc == 1) {
        cu->state = 1;
        return 0;
    }
    Dwarf_Die die;
    if (!sw_di_die_at(d, cu->off, &die)) {
        cu->state = -1;
        return sw_fail(&d->err, SW_EBADELF, "reading debug info of %s: no unit DIE at 0x%llx",
                       d->source, (unsigned long long)cu->off);
    }
    int lang = dwarf_srclang(&die);
    p.c_only = lang == DW_LANG_C89 || lang == DW_LANG_C || lang == DW_LANG_C99 ||
               lang == DW_LANG_C11 || lang == 0x2c /* DW_LANG_C17 */;
    rc = parse_children(&p, &die, DI_NONE, DI_NONE, 0);
    if (rc == 0)
        rc = sw_di_cu_index(cu);
    if (rc < 0) {
        cu->state = rc == SW_ENOMEM ? 0 : -1;
        sw_di_cu_reset(cu);
        return rc;
    }
    cu->state = 1;
    sw_di_unit_store(d, cu);
    return 0;
}

static bool
scope_covers(const struct di_cu *cu, uint32_t i, sw_addr vaddr)
{
    const struct di_scope *s = &cu->scopes[i];
    for (uint32_t k = 0; k < s->nranges; k++) {
        const struct di_range *r = &cu->ranges.v[s->first + k];
        if (vaddr >= r->lo && vaddr < r->hi)
            return true;
    }
    return false;
}

/* The innermost scope covering VADDR, descending level by level; of
 * sibling scopes that both cover it (an assembler unit's aliases of one
 * function: __clone3, __GI___clone3, clone3 at one range) the last, as
 * gdb's block_for_pc finds it.  DI_NONE if none. */
uint32_t
sw_di_innermost_scope(const struct di_cu *cu, sw_addr vaddr)
{
    uint32_t cur = DI_NONE;
    for (;;) {
        uint32_t next = DI_NONE;
        for (size_t i = cur == DI_NONE ? 0 : cur + 1; i < cu->nscopes; i++)
            if (cu->scopes[i].parent == cur && scope_covers(cu, (uint32_t)i, vaddr))
                next = (uint32_t)i;
        if (next == DI_NONE)
            return cur;
        cur = next;
    }
}

static int
parsed_cu_at_locked(struct sw_dinfo *d, sw_addr vaddr, struct di_cu **cu)
{
    int rc = sw_di_find_cu(d, vaddr, cu);
    if (rc == SW_ENOENT) {
        *cu = NULL;
        return 0;
    }
    if (rc < 0)
        return sw_fail(&d->err, rc, "reading debug info of %s: out of memory", d->source);
    rc = cu_parse(d, *cu);
    if (rc == SW_ENOMEM)
        sw_fail(&d->err, rc, "reading debug info of %s: out of memory", d->source);
    if (rc < 0 || (*cu)->state != 1)
        *cu = NULL;
    return rc;
}

/* The parsed unit covering VADDR; *CU NULL (and 0) when there is none. */
int
sw_di_parsed_cu_at(struct sw_dinfo *d, sw_addr vaddr, struct di_cu **cu)
{
    *cu = NULL;
    if (d->dbg == NULL)
        return 0;
    sw_di_lock(d);
    int rc = parsed_cu_at_locked(d, vaddr, cu);
    sw_di_unlock(d);
    return rc;
}

/* The concrete function scope at or above scope I. */
uint32_t
sw_di_func_of(const struct di_cu *cu, uint32_t i)
{
    while (i != DI_NONE && cu->scopes[i].kind != DI_FUNC)
        i = cu->scopes[i].parent;
    return i;
}

int
sw_dinfo_function_entry(struct sw_dinfo *d, sw_addr vaddr, sw_addr *entry)
{
    struct di_cu *cu;
    int rc = sw_di_parsed_cu_at(d, vaddr, &cu);
    if (rc < 0)
        return rc;
    if (cu == NULL)
        return SW_ENOENT;
    uint32_t f = sw_di_func_of(cu, sw_di_innermost_scope(cu, vaddr));
    if (f == DI_NONE)
        return SW_ENOENT;
    /* gdb's block entry: the start of a contiguous function, else of the
     * first range as listed. */
    *entry = cu->ranges.v[cu->scopes[f].first].lo;
    return 0;
}

int
sw_dinfo_function(struct sw_dinfo *d, sw_addr vaddr, struct sw_dinfo_name *out)
{
    struct di_cu *cu;
    int rc = sw_di_parsed_cu_at(d, vaddr, &cu);
    if (rc < 0)
        return rc;
    if (cu == NULL)
        return SW_ENOENT;
    uint32_t f = sw_di_func_of(cu, sw_di_innermost_scope(cu, vaddr));
    if (f == DI_NONE)
        return SW_ENOENT;
    out->name = cu->scopes[f].name;
    out->entry = cu->ranges.v[cu->scopes[f].first].lo;
    out->die = cu->scopes[f].die;
    return 0;
}
