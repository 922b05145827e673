/* dwarf/types.c -- the types of local variables, as gdb's ptype names them.
 *
 * Base types, pointers, typedefs and qualifiers, structures and enums (one
 * level of members), one-dimensional arrays: read on demand into the arena
 * of one sw_dinfo_func (dwarf/vars.c), cached by DIE offset.  No values here.
 */
#include "dwarf/dwarf.h"

#include <stdio.h>
#include <string.h>

#include "dwarf/dwarf_internal.h"

void *
sw_di_alloc(struct di_vars *c, size_t n)
{
    struct di_blk *b = sw_calloc(1, sizeof *b + n);
    if (b == NULL) {
        c->oom = true;
        return NULL;
    }
    b->next = c->arena;
    c->arena = b;
    return b->data;
}

const char *
sw_di_cat(struct di_vars *c, const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = sw_di_alloc(c, la + lb + 1);
    if (s == NULL)
        return "?";
    memcpy(s, a, la);
    memcpy(s + la, b, lb + 1);
    return s;
}

static const struct sw_dinfo_type *type_at(struct di_vars *c, Dwarf_Off off, unsigned depth);

static const struct sw_dinfo_type di_type_void = { .kind = SW_DT_OTHER, .name = "void" };
const struct sw_dinfo_type sw_di_type_unknown = { .kind = SW_DT_OTHER, .name = "?" };

/* The type DIE refers to by DW_AT_type; void when it has none. */
const struct sw_dinfo_type *
sw_di_die_type(struct di_vars *c, Dwarf_Die *die, unsigned depth)
{
    Dwarf_Off off;
    if (!sw_di_attr_ref(c->d, die, DW_AT_type, &off))
        return &di_type_void;
    return type_at(c, off, depth + 1);
}

static enum sw_dinfo_tkind
base_kind(Dwarf_Word enc)
{
    switch (enc) {
    case DW_ATE_signed:
        return SW_DT_SIGNED;
    case DW_ATE_unsigned:
        return SW_DT_UNSIGNED;
    case DW_ATE_signed_char:
        return SW_DT_SCHAR;
    case DW_ATE_unsigned_char:
    case DW_ATE_UTF:
        return SW_DT_UCHAR;
    case DW_ATE_boolean:
        return SW_DT_BOOL;
    case DW_ATE_float:
        return SW_DT_FLOAT;
    default:
        return SW_DT_OTHER;
    }
}

/* Members (or enumerators: name and value in OFFSET) of the DIE's children. */
static void
read_members(struct di_vars *c, Dwarf_Die *die, struct sw_dinfo_type *t, int want, unsigned depth)
{
    struct sw_dinfo *d = c->d;
    struct sw_dinfo_member tmp[DI_MAX_MEMBERS];
    size_t n = 0;
    Dwarf_Die child;

    if (dwarf_child(die, &child) != 0)
        return;
    do {
        if (dwarf_tag(&child) != want)
            continue;
        struct sw_dinfo_member m = { 0 };
        Dwarf_Word u = 0;
        Dwarf_Sword sv = 0;
        sw_di_attr_string(d, &child, DW_AT_name, &m.name);
        if (want == DW_TAG_enumerator) {
            Dwarf_Attribute a;
            if (dwarf_attr(&child, DW_AT_const_value, &a) != NULL) {
                if (dwarf_formsdata(&a, &sv) == 0)
                    m.offset = (uint64_t)sv;
                else if (dwarf_formudata(&a, &u) == 0)
                    m.offset = u;
            }
            m.type = &di_type_void;
            tmp[n++] = m;
        } else if (!sw_di_has_attr(d, &child, DW_AT_bit_size)) {
            /* Bit fields are left out: one level of whole members. */
            if (sw_di_attr_udata(d, &child, DW_AT_data_member_location, &u))
                m.offset = u;
            m.type = sw_di_die_type(c, &child, depth);
            tmp[n++] = m;
        }
    } while (n < DI_MAX_MEMBERS && dwarf_siblingof(&child, &child) == 0);
    if (n > 0) {
        struct sw_dinfo_member *v = sw_di_alloc(c, n * sizeof *v);
        if (v != NULL) {
            memcpy(v, tmp, n * sizeof *v);
            t->members = v;
            t->nmembers = n;
        }
    }
}

/* The element count of an array DIE's first dimension; false when it has
 * more than one, or none is given. */
static bool
array_count(struct di_vars *c, Dwarf_Die *die, uint64_t *count)
{
    struct sw_dinfo *d = c->d;
    Dwarf_Die child, sib;
    Dwarf_Word u = 0;
    bool ok = false;

    if (dwarf_child(die, &child) != 0)
        return false;
    if (sw_di_attr_udata(d, &child, DW_AT_count, &u)) {
        *count = u;
        ok = true;
    } else if (sw_di_attr_udata(d, &child, DW_AT_upper_bound, &u)) {
        *count = u + 1;
        ok = true;
    }
    if (dwarf_siblingof(&child, &sib) == 0)
        ok = false;
    return ok;
}

static const char *
tagged_name(struct di_vars *c, Dwarf_Die *die, const char *prefix)
{
    const char *n = NULL;
    if (!sw_di_attr_string(c->d, die, DW_AT_name, &n))
        return sw_di_cat(c, prefix, "{...}");
    return sw_di_cat(c, prefix, n);
}

static const struct sw_dinfo_type *
type_at(struct di_vars *c, Dwarf_Off off, unsigned depth)
{
    struct sw_dinfo *d = c->d;
    Dwarf_Word u = 0;

    for (size_t i = 0; i < c->ntc; i++)
        if (c->tc[i].off == off)
            return c->tc[i].t;
    if (depth > DI_MAX_TYPE_DEPTH)
        return &sw_di_type_unknown;
    Dwarf_Die die_v, *die = &die_v;
    if (!sw_di_die_at(d, off, die))
        return &sw_di_type_unknown;
    int tag = dwarf_tag(die);
    if (tag == DW_TAG_invalid)
        return &sw_di_type_unknown;
    struct sw_dinfo_type *t = sw_di_alloc(c, sizeof *t);
    if (t == NULL)
        return &sw_di_type_unknown;
    t->name = "?";
    /* Cached before its parts, so a structure that points to itself ends. */
    if (c->ntc == c->captc) {
        size_t cap = c->captc ? c->captc * 2 : 32;
        struct di_tcache *v = sw_realloc(c->tc, cap * sizeof *v);
        if (v == NULL) {
            c->oom = true;
            return &sw_di_type_unknown;
        }
        c->tc = v;
        c->captc = cap;
    }
    c->tc[c->ntc++] = (struct di_tcache){ off, t };
    if (sw_di_attr_udata(d, die, DW_AT_byte_size, &u))
        t->size = u;

    const struct sw_dinfo_type *under;
    const char *s = NULL;
    switch (tag) {
    case DW_TAG_base_type:
        sw_di_attr_string(d, die, DW_AT_name, &t->name);
        t->kind = sw_di_attr_udata(d, die, DW_AT_encoding, &u) ? base_kind(u) : SW_DT_OTHER;
        break;
    case DW_TAG_typedef:
    case DW_TAG_const_type:
    case DW_TAG_volatile_type:
    case DW_TAG_restrict_type:
    case DW_TAG_atomic_type:
        under = sw_di_die_type(c, die, depth);
        *t = *under;
        if (tag == DW_TAG_typedef) {
            if (sw_di_attr_string(d, die, DW_AT_name, &s))
                t->name = s;
        } else {
            const char *q = tag == DW_TAG_const_type      ? "const"
                            : tag == DW_TAG_volatile_type ? "volatile"
                            : tag == DW_TAG_restrict_type ? "restrict"
                                                          : "_Atomic";
            /* gdb: "const int", but "char * const". */
            t->name = under->kind == SW_DT_POINTER
                          ? sw_di_cat(c, sw_di_cat(c, under->name, " "), q)
                          : sw_di_cat(c, sw_di_cat(c, q, " "), under->name);
        }
        break;
    case DW_TAG_pointer_type:
    case DW_TAG_reference_type:
    case DW_TAG_rvalue_reference_type: {
        const char *star = tag == DW_TAG_pointer_type ? "*" : "&";
        under = sw_di_die_type(c, die, depth);
        size_t l = strlen(under->name);
        t->kind = SW_DT_POINTER;
        if (t->size == 0)
            t->size = c->addr_size;
        if (under->kind == SW_DT_OTHER && l > 0 && under->name[l - 1] == ')')
            t->name = "void (*)()"; /* a function: its signature is not kept */
        else
            t->name = sw_di_cat(c, under->name,
                                l > 0 && (under->name[l - 1] == '*' || under->name[l - 1] == '&')
                                    ? star
                                    : (tag == DW_TAG_pointer_type ? " *" : " &"));
        break;
    }
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
    case DW_TAG_class_type:
        t->kind = SW_DT_STRUCT;
        t->name = tagged_name(c, die, tag == DW_TAG_union_type ? "union " : "struct ");
        read_members(c, die, t, DW_TAG_member, depth);
        break;
    case DW_TAG_enumeration_type:
        t->kind = SW_DT_ENUM;
        t->name = tagged_name(c, die, "enum ");
        read_members(c, die, t, DW_TAG_enumerator, depth);
        break;
    case DW_TAG_array_type: {
        char dim[32] = "[]";
        under = sw_di_die_type(c, die, depth);
        t->target = under;
        if (array_count(c, die, &t->count)) {
            t->kind = SW_DT_ARRAY;
            snprintf(dim, sizeof dim, "[%llu]", (unsigned long long)t->count);
            if (t->size == 0)
                t->size = t->count * under->size;
        }
        t->name = sw_di_cat(c, sw_di_cat(c, under->name, " "), dim);
        break;
    }
    case DW_TAG_subroutine_type:
        t->name = "void ()";
        break;
    default:
        break;
    }
    return t;
}
