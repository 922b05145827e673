/* walker/locals.c -- local variables of walked frames (include/rspwalk/locals.h).
 *
 * Names, types and locations come from dwarf/dwarf.h (the module's
 * sw_dinfo, cached per walker by walker/virtual.c); this file evaluates a
 * location for one frame with expr/expr.h (pieces split here; registers,
 * frame base, CFA and memory through the evaluator's context) and formats
 * values as gdb prints them.  No libdw here, and no unwinding: the
 * registers of outer frames are those the walk recovered.
 */
#include "rspwalk/locals.h"

#include <dwarf.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dwarf/dwarf.h"
#include "expr/expr.h"
#include "walker/walker_internal.h"

/* Values larger than this are not read: locals worth printing are small, and
 * a garbage size must not become a huge read. */
#define LV_MAX_SIZE 65536
/* gdb prints 200 elements; a stack listing needs the first few. */
#define LV_MAX_ELEMS 16
/* gdb's "repeats" threshold (set print repeats). */
#define LV_REPEATS 10
/* Inline levels looked at to place an inline frame (virtual.c keeps 32). */
#define LV_MAX_INLINE 32

/* A function as sw_frame_function hands it out: the public part first, then
 * what only this file reads. */
struct lv_function {
    struct sw_function pub;
    char *module;             /* owned: the module's path */
    sw_addr bias;             /* the module's load bias */
    struct sw_dinfo_func *df; /* owned: its DWARF; df->vars[i] is pub.vars[i] */
};

static const struct lv_function *
lv_fn(const struct sw_function *fn)
{
    return (const struct lv_function *)fn;
}

/* The DWARF variable behind V, or NULL when V is not one of its function's. */
static const struct sw_dinfo_var *
lv_var(const struct sw_local_var *v)
{
    if (v == NULL || v->fn == NULL || v->fn->nvars == 0)
        return NULL;
    uintptr_t at = (uintptr_t)v, first = (uintptr_t)v->fn->vars;
    if (at < first || at >= first + v->fn->nvars * sizeof *v || (at - first) % sizeof *v != 0)
        return NULL;
    return &lv_fn(v->fn)->df->vars[v - v->fn->vars];
}

/* ---- the function of a frame ---------------------------------------------------------- */

/* The place of inline frame K among the inline frames of its physical frame:
 * 0 for the innermost.  sw_walk_stack puts them right before that physical
 * frame, innermost first, after the frame of the previous physical frame or
 * its tail-call frames, so the run of inline frames that K is in starts the
 * chain. */
static size_t
inline_depth(const struct sw_stack *st, size_t k)
{
    size_t first = k;
    while (first > 0 && st->frames[first - 1].kind == SW_FRAME_INLINE)
        first--;
    return k - first;
}

/* The physical frame containing frame K (K itself when it is one); ST->n
 * when the walk ended before it. */
static size_t
physical_of(const struct sw_stack *st, size_t k)
{
    while (k < st->n && st->frames[k].kind == SW_FRAME_INLINE)
        k++;
    return k;
}

int
sw_frame_function(struct sw_walker *w, const struct sw_stack *stack, size_t frame_index,
                  struct sw_function **out)
{
    const struct sw_lib *lib = NULL;
    const struct sw_frame *frame;
    struct sw_dinfo *d = NULL;
    struct sw_dinfo_func *df = NULL;
    sw_addr pc;
    int rc;

    if (w == NULL || stack == NULL || out == NULL)
        return SW_EINVAL;
    if (frame_index >= stack->n)
        return sw_walker_fail(w, SW_EINVAL, "local variables: no frame %zu in a stack of %zu",
                              frame_index, stack->n);
    frame = &stack->frames[frame_index];
    if (frame->kind == SW_FRAME_TAILCALL || frame->kind == SW_FRAME_SIGNAL)
        return sw_walker_fail(w, SW_EINVAL, "local variables: frame %zu is a %s frame", frame_index,
                              frame->kind == SW_FRAME_SIGNAL ? "signal" : "tail-call");
    pc = sw_frame_lookup_pc(frame);
    rc = sw_walker_dinfo_at(w, pc, &lib, &d);
    if (rc < 0)
        return rc;
    if (d == NULL)
        return sw_walker_fail(w, SW_ENOSYM, "local variables at 0x%" PRIx64 ": no debug info", pc);
    if (frame->kind == SW_FRAME_INLINE)
        rc = sw_dinfo_inline_vars(d, pc - lib->bias, inline_depth(stack, frame_index), &df);
    else
        rc = sw_dinfo_frame_vars(d, pc - lib->bias, &df);
    if (rc == SW_ENOENT)
        return sw_walker_fail(
            w, SW_ENOSYM, "local variables at 0x%" PRIx64 ": no DWARF %s in %s", pc,
            frame->kind == SW_FRAME_INLINE ? "inlined subroutine" : "function", lib->path);
    if (rc < 0)
        return sw_walker_fail(w, rc, "%s", sw_dinfo_errmsg(d));

    struct lv_function *lf = sw_calloc(1, sizeof *lf);
    struct sw_function *fn = lf ? &lf->pub : NULL;
    if (lf == NULL || (lf->module = sw_strdup(lib->path)) == NULL ||
        (df->nvars && (fn->vars = sw_calloc(df->nvars, sizeof fn->vars[0])) == NULL)) {
        sw_dinfo_func_free(df);
        sw_function_free(fn);
        return sw_walker_fail(w, SW_ENOMEM, "local variables: out of memory");
    }
    fn->name = df->name;
    fn->entry = df->entry + lib->bias;
    fn->inlined = frame->kind == SW_FRAME_INLINE;
    lf->bias = lib->bias;
    lf->df = df;
    fn->nvars = df->nvars;
    for (size_t i = 0; i < df->nvars; i++) {
        const struct sw_dinfo_var *v = &df->vars[i];
        fn->vars[i] = (struct sw_local_var){
            .name = v->name,
            .type_name = v->type->name,
            .size = (size_t)v->type->size,
            .kind = v->param ? SW_VAR_PARAM : SW_VAR_LOCAL,
            .fn = fn,
        };
    }
    *out = fn;
    return 0;
}

void
sw_function_free(struct sw_function *fn)
{
    if (fn == NULL)
        return;
    struct lv_function *lf = (struct lv_function *)fn;
    sw_dinfo_func_free(lf->df);
    sw_free(lf->module);
    sw_free(fn->vars);
    sw_free(lf);
}

/* ---- evaluating a location ------------------------------------------------------------- */

/* One location being evaluated: the frame, and the context the evaluator
 * gets (whose ARG is this). */
struct lv_eval {
    struct sw_walker *w;
    const struct arch_desc *arch;
    const struct sw_frame *frame;
    struct sw_expr_ctx ctx;
};

static int
lv_read(void *arg, sw_addr addr, void *buf, size_t len)
{
    struct lv_eval *ev = arg;
    struct sw_proc *p = sw_walker_proc(ev->w);
    return p->ops->read_mem(p, addr, buf, len);
}

static bool
lv_reg(void *arg, unsigned dw, sw_word *val)
{
    struct lv_eval *ev = arg;
    return sw_frame_reg(ev->frame, dw, val);
}

static const struct sw_dinfo_loc *
loc_at(const struct sw_dinfo_loc *locs, size_t n, sw_addr vpc)
{
    for (size_t i = 0; i < n; i++)
        if (vpc >= locs[i].lo && vpc < locs[i].hi)
            return &locs[i];
    return NULL;
}

/* Fill OUT (SIZE bytes) from one piece's NOPS operations OPS.  Returns 0,
 * SW_EOUTOFSCOPE or SW_EUNAVAIL. */
static int
eval_piece(struct lv_eval *ev, const struct sw_expr_op *ops, size_t nops, uint8_t *out, size_t size)
{
    struct sw_expr_result r;

    if (nops == 0)
        return SW_EOUTOFSCOPE; /* an empty piece: optimized out */
    int rc = sw_expr_eval(&ev->ctx, ops, nops, &r);
    if (rc == SW_ENOENT)
        return SW_EOUTOFSCOPE; /* DW_OP_entry_value: gdb's <optimized out> */
    if (rc < 0)
        return SW_EUNAVAIL;
    switch (r.kind) {
    case SW_EXPR_REGISTER:
    case SW_EXPR_VALUE:
        if (size > 8)
            return SW_EUNAVAIL;
        arch_store(ev->arch, out, size, r.value);
        return 0;
    case SW_EXPR_IMPLICIT:
        memset(out, 0, size);
        if (r.len > 0)
            memcpy(out, r.data, r.len < size ? r.len : size);
        return 0;
    case SW_EXPR_ADDRESS:
        break;
    }
    if (lv_read(ev, r.value, out, size) < 0)
        return SW_EUNAVAIL;
    return 0;
}

/* Whether bytes [LO, HI) of a value of type T hold none of its members: the
 * padding of a structure.  A member of unknown size reaches the end. */
static bool
is_padding(const struct sw_dinfo_type *t, size_t lo, size_t hi)
{
    if (t->kind != SW_DT_STRUCT)
        return false;
    for (size_t i = 0; i < t->nmembers; i++) {
        const struct sw_dinfo_member *m = &t->members[i];
        uint64_t end = m->type->size ? m->offset + m->type->size : UINT64_MAX;
        if (m->offset < hi && lo < end)
            return false;
    }
    return true;
}

/* The location OPS (NOPS operations) of a value of type T into OUT (SIZE
 * bytes), split at DW_OP_piece (DWARF 5 section 2.6.1.2).  A piece without
 * a location is optimized out; when all such pieces are padding (GCC leaves
 * the padding of a structure split into registers without one) the value is
 * whole, as gdb prints it; else the whole value is out of scope (gdb would
 * show the members that are there: one level of members is not kept apart
 * here).  DW_OP_bit_piece is not read. */
static int
eval_location(struct lv_eval *ev, const struct sw_dinfo_type *t, const struct sw_expr_op *ops,
              size_t nops, uint8_t *out, size_t size)
{
    size_t start = 0, off = 0;
    bool pieces = false;

    for (size_t i = 0; i < nops; i++) {
        if (ops[i].atom == DW_OP_bit_piece)
            return SW_EUNAVAIL;
        if (ops[i].atom != DW_OP_piece)
            continue;
        uint64_t psize = ops[i].number;
        pieces = true;
        if (psize > size - off)
            return SW_EUNAVAIL;
        if (i == start) {
            if (!is_padding(t, off, off + psize))
                return SW_EOUTOFSCOPE;
        } else {
            int rc = eval_piece(ev, ops + start, i - start, out + off, (size_t)psize);
            if (rc < 0)
                return rc;
        }
        off += psize;
        start = i + 1;
    }
    if (!pieces)
        return eval_piece(ev, ops, nops, out, size);
    return start == nops ? 0 : SW_EUNAVAIL;
}

/* A DW_AT_const_value into OUT (SIZE bytes). */
static int
eval_const(struct lv_eval *ev, const struct sw_dinfo_const *k, uint8_t *out, size_t size)
{
    if (k->data != NULL) {
        memset(out, 0, size);
        memcpy(out, k->data, k->len < size ? k->len : size);
        return 0;
    }
    if (size > 8)
        return SW_EUNAVAIL;
    arch_store(ev->arch, out, size, (uint64_t)k->number);
    return 0;
}

/* Whether frame K of ST (at link-time pc VPC of D) is in FN's scope: the
 * same concrete function, or for an inline frame the same inlined copy. */
static bool
in_function(struct sw_dinfo *d, const struct sw_stack *st, size_t k, sw_addr vpc,
            const struct sw_function *fn)
{
    struct sw_dinfo_name dn[LV_MAX_INLINE];
    size_t n = 0;

    if (fn->inlined != (st->frames[k].kind == SW_FRAME_INLINE))
        return false;
    if (!fn->inlined)
        return sw_dinfo_function(d, vpc, dn) == 0 && dn[0].die == lv_fn(fn)->df->die;
    size_t depth = inline_depth(st, k);
    return sw_dinfo_inline_chain(d, vpc, dn, LV_MAX_INLINE, &n) == 0 && depth < n &&
           dn[depth].die == lv_fn(fn)->df->die;
}

static int
local_value(struct sw_walker *w, const struct sw_stack *stack, size_t frame_index,
            const struct sw_local_var *var, void *buf, size_t size)
{
    const struct sw_function *fn;
    const struct sw_dinfo_var *dv;
    const struct sw_frame *f;
    const struct sw_lib *lib;
    struct sw_dinfo *d;
    sw_addr pc, vpc;

    if (w == NULL || stack == NULL || (dv = lv_var(var)) == NULL || frame_index >= stack->n ||
        (buf == NULL && size > 0))
        return SW_EINVAL;
    fn = var->fn;
    f = &stack->frames[frame_index];
    if (f->kind == SW_FRAME_TAILCALL || f->kind == SW_FRAME_SIGNAL)
        return SW_EOUTOFSCOPE;
    if (size < var->size)
        return SW_EBUFSIZE;
    if (var->size == 0 || var->size > LV_MAX_SIZE)
        return SW_EUNAVAIL;
    /* The frame must be in the variable's function, in the same module. */
    pc = sw_frame_lookup_pc(f);
    if (sw_walker_dinfo_at(w, pc, &lib, &d) < 0 || d == NULL)
        return SW_EUNAVAIL;
    if (strcmp(lib->path, lv_fn(fn)->module) != 0 || lib->bias != lv_fn(fn)->bias)
        return SW_EOUTOFSCOPE;
    vpc = pc - lib->bias;
    if (!in_function(d, stack, frame_index, vpc, fn))
        return SW_EOUTOFSCOPE;
    const struct sw_dinfo_loc *loc = loc_at(dv->locs, dv->nlocs, vpc);
    if (dv->cval == NULL && (loc == NULL || loc->nops == 0))
        return SW_EOUTOFSCOPE;

    /* An inline frame's registers are its physical frame's (virtual.c copies
     * them).  Frame 0 and the CFI frames that carry its registers have only
     * those the walk needed; the others are lazy (walker.c), fetched now,
     * once per stop.  The walker knows those frames by their level in the
     * physical walk, before the inline and tail-call frames were added. */
    size_t phys = physical_of(stack, frame_index);
    struct sw_frame regs = *f;
    regs.level = 0;
    for (size_t i = 0; i < phys && i < stack->n; i++)
        if (stack->frames[i].kind != SW_FRAME_INLINE && stack->frames[i].kind != SW_FRAME_TAILCALL)
            regs.level++;
    if (sw_walker_fill_lazy(w, &regs) < 0)
        return SW_EUNAVAIL;

    struct lv_eval ev = {
        .w = w,
        .arch = sw_walker_proc(w)->arch,
        .frame = &regs,
    };
    ev.ctx = (struct sw_expr_ctx){
        .addr_size = ev.arch->word_size,
        .big_endian = ev.arch->big_endian,
        .reg = lv_reg,
        .read = lv_read,
        .arg = &ev,
        .addr_bias = lib->bias,
    };
    memset(buf, 0, var->size);
    if (dv->cval != NULL)
        return eval_const(&ev, dv->cval, buf, var->size);
    /* DW_OP_call_frame_cfa: the CFA is the SP of the caller at the call, the
     * SP the walk gave the frame after the physical one (inline and
     * tail-call frames carry their physical caller's SP). */
    if (phys + 1 < stack->n) {
        ev.ctx.have_cfa = true;
        ev.ctx.cfa = stack->frames[phys + 1].sp;
    }
    const struct sw_dinfo_loc *base = loc_at(lv_fn(fn)->df->base, lv_fn(fn)->df->nbase, vpc);
    if (base != NULL && base->nops > 0 &&
        sw_expr_eval_word(&ev.ctx, base->ops, base->nops, &ev.ctx.frame_base) == 0)
        ev.ctx.have_frame_base = true;
    return eval_location(&ev, dv->type, loc->ops, loc->nops, buf, var->size);
}

int
sw_local_value(struct sw_walker *w, const struct sw_stack *stack, size_t frame_index,
               const struct sw_local_var *var, void *buf, size_t size)
{
    int rc = local_value(w, stack, frame_index, var, buf, size);
    if (rc < 0 && w != NULL)
        sw_walker_fail(w, rc, "value of %s in frame %zu: %s", var && var->name ? var->name : "?",
                       frame_index, sw_strerror(rc));
    return rc;
}

/* ---- formatting ------------------------------------------------------------------------ */

struct lv_out {
    char *p;
    size_t len, cap;
};

static void outf(struct lv_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
outf(struct lv_out *o, const char *fmt, ...)
{
    va_list ap;
    if (o->len >= o->cap)
        return;
    va_start(ap, fmt);
    int n = vsnprintf(o->p + o->len, o->cap - o->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->len = o->len + (size_t)n < o->cap ? o->len + (size_t)n : o->cap - 1;
}

static void
fmt_char(struct lv_out *o, unsigned c)
{
    static const char esc[] = "\a\b\f\n\r\t\v";
    static const char name[] = "abfnrtv";
    const char *e = c ? strchr(esc, (int)c) : NULL;
    if (c == '\'' || c == '\\')
        outf(o, "'\\%c'", (char)c);
    else if (c >= 0x20 && c < 0x7f)
        outf(o, "'%c'", (char)c);
    else if (e != NULL)
        outf(o, "'\\%c'", name[e - esc]);
    else
        outf(o, "'\\%03o'", c & 0xff);
}

static void fmt_value(struct lv_out *o, const struct arch_desc *a, const struct sw_dinfo_type *t,
                      const uint8_t *p, size_t len, unsigned depth);

static void
fmt_value(struct lv_out *o, const struct arch_desc *a, const struct sw_dinfo_type *t,
          const uint8_t *p, size_t len, unsigned depth)
{
    size_t size = (size_t)t->size;
    bool scalar = size == 1 || size == 2 || size == 4 || size == 8;
    uint64_t u = scalar && size <= len ? arch_load(a, p, size) : 0;
    int64_t s = scalar && size < 8 && (u >> (8 * size - 1)) ? (int64_t)(u | (~0ull << 8 * size))
                                                            : (int64_t)u;

    if (size > len) {
        outf(o, "<unavailable>");
        return;
    }
    switch (t->kind) {
    case SW_DT_SIGNED:
        if (scalar) {
            outf(o, "%" PRId64, s);
            return;
        }
        break;
    case SW_DT_UNSIGNED:
        if (scalar) {
            outf(o, "%" PRIu64, u);
            return;
        }
        break;
    case SW_DT_SCHAR:
    case SW_DT_UCHAR:
        if (size == 1) {
            if (t->kind == SW_DT_SCHAR)
                outf(o, "%" PRId64 " ", s);
            else
                outf(o, "%" PRIu64 " ", u);
            fmt_char(o, (unsigned)u);
            return;
        }
        break;
    case SW_DT_BOOL:
        if (scalar) {
            if (u <= 1)
                outf(o, "%s", u ? "true" : "false");
            else
                outf(o, "%" PRIu64, u);
            return;
        }
        break;
    case SW_DT_FLOAT:
        if (size == 4) {
            uint32_t bits = (uint32_t)u;
            float fv;
            memcpy(&fv, &bits, sizeof fv);
            outf(o, "%.9g", (double)fv);
            return;
        }
        if (size == 8) {
            double dv;
            memcpy(&dv, &u, sizeof dv);
            outf(o, "%.17g", dv);
            return;
        }
        break;
    case SW_DT_POINTER:
        if (scalar) {
            outf(o, "0x%" PRIx64, u);
            return;
        }
        break;
    case SW_DT_ENUM:
        if (scalar) {
            for (size_t i = 0; i < t->nmembers; i++)
                if (t->members[i].name != NULL && (int64_t)t->members[i].offset == s) {
                    outf(o, "%s", t->members[i].name);
                    return;
                }
            outf(o, "%" PRId64, s);
            return;
        }
        break;
    case SW_DT_STRUCT:
        if (depth > 0) {
            outf(o, "{...}");
            return;
        }
        outf(o, "{");
        for (size_t i = 0; i < t->nmembers; i++) {
            const struct sw_dinfo_member *m = &t->members[i];
            outf(o, "%s%s = ", i ? ", " : "", m->name ? m->name : "<anon>");
            if (m->offset <= len)
                fmt_value(o, a, m->type, p + m->offset, len - (size_t)m->offset, depth + 1);
            else
                outf(o, "<unavailable>");
        }
        outf(o, "}");
        return;
    case SW_DT_ARRAY: {
        const struct sw_dinfo_type *el = t->target;
        size_t es = el ? (size_t)el->size : 0;
        if (es == 0 || depth > 0) {
            outf(o, "{...}");
            return;
        }
        outf(o, "{");
        size_t shown = 0;
        for (uint64_t i = 0; i < t->count && shown < LV_MAX_ELEMS;) {
            uint64_t run = 1;
            while (i + run < t->count && memcmp(p + i * es, p + (i + run) * es, es) == 0)
                run++;
            outf(o, "%s", shown ? ", " : "");
            fmt_value(o, a, el, p + i * es, es, depth + 1);
            if (run >= LV_REPEATS) {
                outf(o, " <repeats %" PRIu64 " times>", run);
                i += run;
            } else {
                i++;
            }
            shown++;
            if (shown == LV_MAX_ELEMS && i < t->count)
                outf(o, "...");
        }
        outf(o, "}");
        return;
    }
    default:
        break;
    }
    outf(o, "0x");
    for (size_t i = 0; i < size && i < 64; i++)
        outf(o, "%02x", p[i]);
}

int
sw_local_format(struct sw_walker *w, const struct sw_local_var *var, const void *buf, size_t len,
                char *out, size_t outlen)
{
    const struct sw_dinfo_var *dv = lv_var(var);
    if (w == NULL || dv == NULL || buf == NULL || out == NULL || outlen == 0)
        return SW_EINVAL;
    struct lv_out o = { .p = out, .cap = outlen };
    out[0] = 0;
    fmt_value(&o, sw_walker_proc(w)->arch, dv->type, buf, len, 0);
    return 0;
}
