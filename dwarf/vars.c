/* dwarf/vars.c -- the variables of a function at a pc, with their locations.
 *
 * Parameters and the locals of the lexical blocks covering the pc, read on
 * demand from the DIE of a function or of an inlined subroutine (with what
 * its abstract instance adds, as gdb reads it); locations are libdw's decoded
 * operations, copied, which walker/locals.c runs through expr/expr.h's
 * evaluator without libdw.  Types are dwarf/types.c's.
 */
#include "dwarf/dwarf.h"

#include <stddef.h>
#include <string.h>

#include "expr/expr.h"
#include "dwarf/dwarf_internal.h"

/* ---- locations, as libdw decodes them ---------------------------------------------------- */

/* expr/expr.h's operation is libdw's, field for field, so libdw's arrays are copied whole. */
_Static_assert(sizeof(struct sw_expr_op) == sizeof(Dwarf_Op) &&
                   offsetof(struct sw_expr_op, atom) == offsetof(Dwarf_Op, atom) &&
                   offsetof(struct sw_expr_op, number) == offsetof(Dwarf_Op, number) &&
                   offsetof(struct sw_expr_op, number2) == offsetof(Dwarf_Op, number2) &&
                   offsetof(struct sw_expr_op, offset) == offsetof(Dwarf_Op, offset),
               "struct sw_expr_op is Dwarf_Op");

/* The location list (or single expression) of attribute AT of DIE.  libdw
 * keeps its decoding until dwarf_end; the copy lives as long as the
 * sw_dinfo_func, whose type it has. */
static void
read_locs(struct di_vars *c, Dwarf_Die *die, unsigned at, const struct sw_dinfo_loc **out,
          size_t *nout)
{
    struct sw_dinfo_loc tmp[64], *v = tmp;
    size_t n = 0, cap = sizeof tmp / sizeof tmp[0];
    Dwarf_Attribute a;
    Dwarf_Addr base = 0, lo = 0, hi = 0;
    Dwarf_Op *ops = NULL;
    size_t nops = 0;
    ptrdiff_t off = 0;

    *out = NULL;
    *nout = 0;
    if (dwarf_attr(die, at, &a) == NULL)
        return;
    /* A single expression comes as one entry over every address. */
    while (n < DI_MAX_LOCS &&
           (off = dwarf_getlocations(&a, off, &base, &lo, &hi, &ops, &nops)) > 0) {
        if (lo >= hi || nops == 0)
            continue; /* empty ranges */
        struct sw_expr_op *e = sw_di_alloc(c, nops * sizeof *e);
        if (e == NULL)
            break;
        memcpy(e, ops, nops * sizeof *e);
        if (n == cap) { /* more than fit on the stack: into the arena, doubled */
            struct sw_dinfo_loc *nv = sw_di_alloc(c, 2 * cap * sizeof *nv);
            if (nv == NULL)
                break;
            memcpy(nv, v, n * sizeof *nv);
            v = nv;
            cap *= 2;
        }
        v[n++] = (struct sw_dinfo_loc){ .lo = lo, .hi = hi, .ops = e, .nops = nops };
    }
    if (n == 0)
        return;
    if (v == tmp) {
        v = sw_di_alloc(c, n * sizeof *v);
        if (v == NULL)
            return;
        memcpy(v, tmp, n * sizeof *v);
    }
    *out = v;
    *nout = n;
}

/* The number in constant attribute A, as gdb's dwarf2_const_value_data
 * reads it: DW_FORM_sdata and DW_FORM_implicit_const are signed, the
 * fixed-size data forms are bits that fill the value from its low end
 * (0xfeedface in DW_FORM_data4 is 4277009102 for an unsigned long, not
 * sign-extended), DW_FORM_udata is unsigned. */
static bool
const_number(Dwarf_Attribute *a, Dwarf_Sword *out)
{
    unsigned form = dwarf_whatform(a);
    if (form == DW_FORM_sdata || form == DW_FORM_implicit_const)
        return dwarf_formsdata(a, out) == 0;
    Dwarf_Word u = 0;
    if (dwarf_formudata(a, &u) != 0)
        return false;
    *out = (Dwarf_Sword)u;
    return true;
}

/* DW_AT_const_value: its block, or its number when the type is a scalar. */
static void
read_const_value(struct di_vars *c, Dwarf_Die *die, struct sw_dinfo_var *var)
{
    Dwarf_Attribute a;
    Dwarf_Sword sv = 0;
    Dwarf_Block blk;
    struct sw_dinfo_const k = { 0 };

    if (dwarf_attr(die, DW_AT_const_value, &a) == NULL)
        return;
    if (dwarf_formblock(&a, &blk) == 0 && blk.data != NULL)
        k = (struct sw_dinfo_const){ .data = blk.data, .len = (size_t)blk.length };
    else if (const_number(&a, &sv) && var->type->size <= 8)
        k.number = sv;
    else
        return;
    struct sw_dinfo_const *p = sw_di_alloc(c, sizeof *p);
    if (p == NULL)
        return;
    *p = k;
    var->cval = p;
}

/* ---- the variables of a scope, as gdb reads them ---------------------------------------- */

/* Call FN for each child of PARENT with its tag, until C runs out of memory. */
static void
each_child(struct di_vars *c, Dwarf_Die *parent,
           void (*fn)(struct di_vars *, Dwarf_Die *, int, unsigned), unsigned depth)
{
    Dwarf_Die child;

    if (depth >= DI_MAX_DEPTH || dwarf_child(parent, &child) != 0)
        return;
    do {
        int tag = dwarf_tag(&child);
        if (tag != DW_TAG_invalid)
            fn(c, &child, tag, depth);
    } while (!c->oom && dwarf_siblingof(&child, &child) == 0);
}

/* The abstract instance DIE is a copy of: its DW_AT_abstract_origin, followed
 * to the end (GCC before 4.5 made chains, PR 40573); else DIE itself. */
static bool
origin_of(struct di_vars *c, Dwarf_Die *die, Dwarf_Off *out)
{
    Dwarf_Off off;
    if (!sw_di_attr_ref(c->d, die, DW_AT_abstract_origin, &off)) {
        *out = sw_di_off(die);
        return true;
    }
    for (int hop = 1; hop < DI_MAX_HOPS; hop++) {
        Dwarf_Die next;
        Dwarf_Off up;
        if (!sw_di_die_at(c->d, off, &next) ||
            !sw_di_attr_ref(c->d, &next, DW_AT_abstract_origin, &up))
            break;
        off = up;
    }
    *out = off;
    return true;
}

static bool
offs_has(const struct di_offs *s, Dwarf_Off off)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->v[mid] < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n && s->v[lo] == off;
}

static void
offs_add(struct di_vars *c, struct di_offs *s, Dwarf_Off off)
{
    size_t i = s->n;
    if (offs_has(s, off))
        return;
    Dwarf_Off *v = sw_grow(s->v, &s->cap, s->n + 1, sizeof *v, 16);
    if (v == NULL) {
        c->oom = true;
        return;
    }
    s->v = v;
    while (i > 0 && s->v[i - 1] > off) {
        s->v[i] = s->v[i - 1];
        i--;
    }
    s->v[i] = off;
    s->n++;
}

/* List the parameter (PARAM) or variable DIE, a copy of abstract DIE ORIGIN,
 * in the block at DEPTH: name and type may be on the abstract instance, the
 * location is DIE's own (none: optimized out). */
static void
add_var(struct di_vars *c, Dwarf_Die *die, Dwarf_Off origin, bool param, unsigned depth)
{
    struct sw_dinfo *d = c->d;
    struct sw_dinfo_var v = { .param = param };
    Dwarf_Die cur = *die;
    const char *s;

    if (sw_di_attr_flag(d, die, DW_AT_declaration))
        return; /* an extern declared inside the function: not a local */
    for (int hop = 0; hop < DI_MAX_HOPS; hop++) {
        Dwarf_Off off;
        if (v.name == NULL && sw_di_attr_string(d, &cur, DW_AT_name, &s))
            v.name = s;
        if (v.type == NULL && sw_di_has_attr(d, &cur, DW_AT_type))
            v.type = sw_di_die_type(c, &cur, 0);
        if ((v.name && v.type) || !sw_di_attr_ref(d, &cur, DW_AT_abstract_origin, &off) ||
            !sw_di_die_at(d, off, &cur))
            break;
    }
    if (v.name == NULL)
        return; /* gdb does not list unnamed parameters */
    if (v.type == NULL)
        v.type = &sw_di_type_unknown;
    if (sw_di_has_attr(d, die, DW_AT_location))
        read_locs(c, die, DW_AT_location, &v.locs, &v.nlocs);
    else
        read_const_value(c, die, &v);
    if (c->nvars == c->capvars) {
        size_t cap = c->capvars ? c->capvars * 2 : 16;
        struct sw_dinfo_var *nv = sw_realloc(c->vars, cap * sizeof *nv);
        unsigned *nd = nv ? sw_realloc(c->depth, cap * sizeof *nd) : NULL;
        if (nv)
            c->vars = nv;
        if (nd == NULL) {
            c->oom = true;
            return;
        }
        c->depth = nd;
        c->capvars = cap;
    }
    c->vars[c->nvars] = v;
    c->depth[c->nvars++] = param ? 0 : depth + 1;
    offs_add(c, &c->listed, origin);
}

/* gdb's inherit_abstract_dies, for a scope CONCRETE (function, inlined
 * subroutine or lexical block) that is a copy of an abstract one: the
 * children of the abstract scope that no direct child of CONCRETE is a copy
 * of are listed too, with no location ("<optimized out>") unless they have a
 * DW_AT_const_value; those of an abstract lexical block that is not copied
 * join the scope (gdb reads a block without ranges as part of its parent).
 * GCC moves the locals of an inlined subroutine into a lexical block of its
 * own, so gdb lists them twice, the copy in scope and an optimized-out one;
 * here a variable whose copy is listed already is not listed again. */
struct di_inherit {
    struct di_offs direct; /* what CONCRETE's direct children are copies of */
    bool params;           /* CONCRETE is a function or inlined subroutine */
};

static void
note_direct(struct di_vars *c, Dwarf_Die *child, int tag, unsigned depth)
{
    Dwarf_Off off;
    (void)depth;
    if (tag != DW_TAG_call_site && tag != DW_TAG_GNU_call_site &&
        sw_di_has_attr(c->d, child, DW_AT_abstract_origin) && origin_of(c, child, &off))
        offs_add(c, &c->inh->direct, off);
}

static void
inherit_child(struct di_vars *c, Dwarf_Die *child, int tag, unsigned depth)
{
    Dwarf_Off off;
    bool param = tag == DW_TAG_formal_parameter;

    if ((!param && tag != DW_TAG_variable && tag != DW_TAG_lexical_block) ||
        (param && !c->inh->params) || !origin_of(c, child, &off) || offs_has(&c->inh->direct, off))
        return;
    if (tag == DW_TAG_lexical_block) {
        bool params = c->inh->params;
        c->inh->params = false; /* parameters only directly under a function */
        each_child(c, child, inherit_child, depth);
        c->inh->params = params;
    } else if (!offs_has(&c->listed, off)) {
        add_var(c, child, off, param, depth);
    }
}

static void
inherit(struct di_vars *c, Dwarf_Die *concrete, bool params, unsigned depth)
{
    struct di_inherit inh = { .params = params }, *outer = c->inh;
    Dwarf_Off off;
    Dwarf_Die origin;

    if (!sw_di_has_attr(c->d, concrete, DW_AT_abstract_origin) || !origin_of(c, concrete, &off) ||
        !sw_di_die_at(c->d, off, &origin))
        return;
    c->inh = &inh;
    each_child(c, concrete, note_direct, depth);
    each_child(c, &origin, inherit_child, depth);
    c->inh = outer;
    sw_free(inh.direct.v);
}

static void walk_child(struct di_vars *c, Dwarf_Die *child, int tag, unsigned depth);

/* The variables of the scope PARENT at DEPTH (0: the function or inlined
 * subroutine), of its lexical blocks covering the pc first (innermost
 * bindings are listed before what the abstract instance adds), not of the
 * subroutines inlined into it (frames of their own). */
static void
walk_scope(struct di_vars *c, Dwarf_Die *parent, unsigned depth)
{
    each_child(c, parent, walk_child, depth);
    inherit(c, parent, depth == 0, depth);
}

static void
walk_child(struct di_vars *c, Dwarf_Die *child, int tag, unsigned depth)
{
    Dwarf_Off off;
    if ((tag == DW_TAG_formal_parameter && depth == 0) || tag == DW_TAG_variable) {
        if (origin_of(c, child, &off))
            add_var(c, child, off, tag == DW_TAG_formal_parameter, depth);
    } else if (tag == DW_TAG_lexical_block) {
        struct di_rbuf rb = { 0 };
        bool in = false;
        if (sw_di_die_ranges(c->d, child, &rb) < 0)
            c->oom = true;
        for (size_t i = 0; i < rb.n; i++)
            in = in || (c->vaddr >= rb.v[i].lo && c->vaddr < rb.v[i].hi);
        /* A block without ranges is transparent, as for scopes. */
        if (in)
            walk_scope(c, child, depth + 1);
        else if (rb.n == 0)
            each_child(c, child, walk_child, depth);
        sw_free(rb.v);
    }
}

/* ---- the variables of a scope ---------------------------------------------------------- */

void
sw_dinfo_func_free(struct sw_dinfo_func *fn)
{
    if (fn == NULL)
        return;
    for (struct di_blk *b = fn->arena, *next; b != NULL; b = next) {
        next = b->next;
        sw_free(b);
    }
    sw_free(fn);
}

/* Parameters, then locals from the innermost block out (gdb's order), into
 * FN from C. */
static void
order_vars(struct di_vars *c, struct sw_dinfo_func *fn)
{
    struct sw_dinfo_var *vars = c->nvars ? sw_di_alloc(c, c->nvars * sizeof *vars) : NULL;
    size_t k = 0;
    unsigned maxd = 0;

    if (vars == NULL)
        return;
    for (size_t i = 0; i < c->nvars; i++)
        if (c->depth[i] == 0)
            vars[k++] = c->vars[i];
        else if (c->depth[i] > maxd)
            maxd = c->depth[i];
    for (unsigned dep = maxd; dep > 0; dep--)
        for (size_t i = 0; i < c->nvars; i++)
            if (c->depth[i] == dep)
                vars[k++] = c->vars[i];
    fn->vars = vars;
    fn->nvars = k;
}

/* The variables of scope S of CU (a function, or an inlined subroutine whose
 * frame base is its concrete function F's) visible at VADDR. */
static int
scope_vars(struct sw_dinfo *d, struct di_cu *cu, uint32_t s, uint32_t f, sw_addr vaddr,
           struct sw_dinfo_func **out)
{
    struct di_vars c = { .d = d, .vaddr = vaddr };
    Dwarf_Die die, fdie, cudie;

    if (!sw_di_die_at(d, cu->scopes[s].die, &die) || !sw_di_die_at(d, cu->scopes[f].die, &fdie))
        return sw_fail(&d->err, SW_EBADELF, "reading debug info of %s: no DIE at 0x%llx", d->source,
                       (unsigned long long)cu->scopes[s].die);
    uint8_t asize = 8;
    if (dwarf_diecu(&die, &cudie, &asize, NULL) == NULL)
        asize = 8;
    c.addr_size = asize;

    struct sw_dinfo_func *fn = sw_calloc(1, sizeof *fn);
    if (fn != NULL) {
        fn->name = cu->scopes[s].name;
        fn->entry = cu->ranges.v[cu->scopes[s].first].lo;
        fn->die = cu->scopes[s].die;
        read_locs(&c, &fdie, DW_AT_frame_base, &fn->base, &fn->nbase);
        walk_scope(&c, &die, 0);
        order_vars(&c, fn);
        fn->arena = c.arena;
    } else {
        c.oom = true;
    }
    sw_free(c.vars);
    sw_free(c.depth);
    sw_free(c.listed.v);
    sw_free(c.tc);
    if (c.oom) {
        sw_dinfo_func_free(fn);
        return sw_fail(&d->err, SW_ENOMEM, "local variables in %s: out of memory", d->source);
    }
    *out = fn;
    return 0;
}

/* scope_vars under D's lock: it reads DIEs through libdw. */
static int
scope_vars_locked(struct sw_dinfo *d, struct di_cu *cu, uint32_t s, uint32_t f, sw_addr vaddr,
                  struct sw_dinfo_func **out)
{
    sw_di_lock(d);
    int rc = scope_vars(d, cu, s, f, vaddr, out);
    sw_di_unlock(d);
    return rc;
}

int
sw_dinfo_frame_vars(struct sw_dinfo *d, sw_addr vaddr, struct sw_dinfo_func **out)
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
    return scope_vars_locked(d, cu, f, f, vaddr, out);
}

int
sw_dinfo_inline_vars(struct sw_dinfo *d, sw_addr vaddr, size_t depth, struct sw_dinfo_func **out)
{
    struct di_cu *cu;
    size_t k = 0;
    int rc = sw_di_parsed_cu_at(d, vaddr, &cu);

    if (rc < 0)
        return rc;
    if (cu == NULL)
        return SW_ENOENT;
    /* sw_dinfo_inline_chain's walk: the DEPTH-th inlined scope outwards. */
    for (uint32_t i = sw_di_innermost_scope(cu, vaddr); i != DI_NONE; i = cu->scopes[i].parent) {
        if (cu->scopes[i].kind == DI_FUNC)
            break;
        if (cu->scopes[i].kind == DI_INLINED && k++ == depth) {
            uint32_t f = sw_di_func_of(cu, i);
            if (f == DI_NONE)
                break;
            return scope_vars_locked(d, cu, i, f, vaddr, out);
        }
    }
    return SW_ENOENT;
}
