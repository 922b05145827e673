/* expr/expr.c -- the DWARF expression evaluator (expr/expr.h).
 *
 * A stack machine over target-width values (DWARF 5 section 2.5) that runs operations
 * decoded elsewhere: the CFA and register rules of CFI (the x86-64 PLT CFA, glibc's signal
 * trampolines) and the locations of variables (registers, memory, the frame base, stack and
 * implicit values).  Not a decoder, and no typed stack, TLS or DWARF procedure calls.
 */
#include "expr/expr.h"

#include <dwarf.h>
#include <inttypes.h>
#include <string.h>

#include "util/util.h"

/* gdb allows 1 << 10 values on its DWARF stack; CFI expressions need a
 * handful (the PLT CFA: 3), locations fewer.  64 is generous and keeps the
 * stack local. */
#define EXPR_STACK_MAX 64
/* Each executed operation counts, so a backward DW_OP_skip or DW_OP_bra in
 * garbage ends here instead of looping.  Real expressions run fewer than 30
 * operations. */
#define EXPR_STEPS_MAX 10000
/* A ULEB128 of 64 bits takes at most 10 bytes (DWARF 5 section 7.6). */
#define EXPR_LEB_MAX 10

struct expr_state {
    const struct sw_expr_ctx *ctx;
    const struct sw_expr_op *ops;
    size_t nops, i; /* I: the operation being run */
    sw_word mask;   /* the target's address width */
    unsigned bits;  /* 8 * addr_size */
    sw_word stack[EXPR_STACK_MAX];
    size_t depth;
};

static int expr_fail(struct expr_state *st, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
expr_fail(struct expr_state *st, int code, const char *fmt, ...)
{
    if (st->ctx->err) {
        va_list ap;
        va_start(ap, fmt);
        sw_vfail(st->ctx->err, code, fmt, ap);
        va_end(ap);
        if (st->i < st->nops)
            sw_err_prefix(st->ctx->err, "DWARF expression, offset %" PRIu64 ": ",
                          st->ops[st->i].offset);
        else
            sw_err_prefix(st->ctx->err, "DWARF expression: ");
    }
    return code;
}

static int
push(struct expr_state *st, sw_word v)
{
    if (st->depth == EXPR_STACK_MAX)
        return expr_fail(st, SW_EPROTO, "stack overflow (%d values)", EXPR_STACK_MAX);
    st->stack[st->depth++] = v & st->mask;
    return 0;
}

static int
underflow(struct expr_state *st, uint8_t op, size_t n)
{
    return expr_fail(st, SW_EPROTO, "stack underflow: DW_OP 0x%02x needs %zu values, has %zu", op,
                     n, st->depth);
}

/* Every operation that pops checks the depth first, in line, so the
 * compiler sees the bound too. */
#define NEED(n)                                                                                    \
    do {                                                                                           \
        if (st->depth < (n))                                                                       \
            return underflow(st, op->atom, (n));                                                   \
    } while (0)

/* The value as a signed number of the target's width. */
static int64_t
to_signed(const struct expr_state *st, sw_word v)
{
    if (st->bits == 64)
        return (int64_t)v;
    sw_word sign = (sw_word)1 << (st->bits - 1);
    return (int64_t)((v ^ sign) - sign);
}

/* The low N bytes of V, sign-extended: the DW_OP_constNs operand whether or not the
 * decoder extended it (libdw does, as Dwarf_Op documents; the low bytes are the same). */
static sw_word
sign_extend(sw_word v, unsigned n)
{
    if (n >= 8)
        return v;
    sw_word sign = (sw_word)1 << (8 * n - 1);
    v &= ((sw_word)1 << (8 * n)) - 1;
    return (v ^ sign) - sign;
}

static int
reg_value(struct expr_state *st, uint64_t dw, sw_word *val)
{
    if (dw > UINT32_MAX)
        return expr_fail(st, SW_EPROTO, "DWARF register %" PRIu64 ": no such register", dw);
    if (st->ctx->reg == NULL || !st->ctx->reg(st->ctx->arg, (unsigned)dw, val))
        return expr_fail(st, SW_ENOREG, "register %" PRIu64 " is not known in this frame", dw);
    return 0;
}

static int
deref(struct expr_state *st, size_t size)
{
    uint8_t buf[8];
    sw_addr addr = st->stack[st->depth - 1];
    int rc = st->ctx->read ? st->ctx->read(st->ctx->arg, addr, buf, size) : SW_EMEM;
    if (rc < 0)
        return expr_fail(st, rc, "reading %zu bytes at 0x%" PRIx64 ": %s", size, addr,
                         sw_strerror(rc));
    sw_word v = 0;
    for (size_t i = 0; i < size; i++) {
        size_t k = st->ctx->big_endian ? i : size - 1 - i;
        v = v << 8 | buf[k];
    }
    st->stack[st->depth - 1] = v & st->mask;
    return 0;
}

/* DW_OP_skip and DW_OP_bra: the operand counts from the byte after the
 * operation's two-byte operand (DWARF 5 section 2.5.1.5), so the target is
 * the operation at that byte offset.  Sets ST->i to the operation before it
 * (the loop steps on) or, for a target past the last operation, to the last
 * one: branching to the end of the expression ends the evaluation.  The
 * operations do not record where the last one's operands end, so a target
 * inside them counts as the end too. */
static int
jump(struct expr_state *st, const struct sw_expr_op *op)
{
    int64_t to = (int64_t)op->offset + 3 + (int16_t)(uint16_t)op->number;
    if (to < 0)
        return expr_fail(st, SW_EPROTO, "branch to %" PRId64 " before the expression", to);
    size_t lo = 0, hi = st->nops;
    while (lo < hi) { /* the first operation at or after TO */
        size_t mid = lo + (hi - lo) / 2;
        if (st->ops[mid].offset < (uint64_t)to)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == st->nops) {
        st->i = st->nops - 1;
        return 0;
    }
    if (st->ops[lo].offset != (uint64_t)to)
        return expr_fail(st, SW_EPROTO, "branch to %" PRId64 ", inside an operation", to);
    if (lo == 0) {
        st->i = SIZE_MAX; /* the loop's step wraps to 0 */
        return 0;
    }
    st->i = lo - 1;
    return 0;
}

/* Binary operations: pop B (top), then A; push A op B. */
static int
binop(struct expr_state *st, const struct sw_expr_op *op)
{
    NEED(2);
    sw_word b = st->stack[--st->depth];
    sw_word a = st->stack[--st->depth];
    int64_t sa = to_signed(st, a), sb = to_signed(st, b);
    sw_word r;

    switch (op->atom) {
    case DW_OP_and:
        r = a & b;
        break;
    case DW_OP_or:
        r = a | b;
        break;
    case DW_OP_xor:
        r = a ^ b;
        break;
    case DW_OP_plus:
        r = a + b;
        break;
    case DW_OP_minus:
        r = a - b;
        break;
    case DW_OP_mul:
        r = a * b;
        break;
    case DW_OP_div:
        /* Signed, as gdb and libunwind do; INT_MIN / -1 wraps like the
         * hardware would rather than trapping here. */
        if (sb == 0)
            return expr_fail(st, SW_EPROTO, "DW_OP_div by zero");
        r = (sb == -1) ? (sw_word)0 - a : (sw_word)(sa / sb);
        break;
    case DW_OP_mod:
        /* Unsigned, as gdb does for the generic type. */
        if (b == 0)
            return expr_fail(st, SW_EPROTO, "DW_OP_mod by zero");
        r = a % b;
        break;
    case DW_OP_shl:
        r = b >= st->bits ? 0 : a << b;
        break;
    case DW_OP_shr:
        r = b >= st->bits ? 0 : a >> b;
        break;
    case DW_OP_shra:
        if (b >= st->bits)
            r = sa < 0 ? ~(sw_word)0 : 0;
        else
            r = sa < 0 ? ~(~(sw_word)sa >> b) : a >> b;
        break;
    /* Comparisons are signed (DWARF 5 section 2.5.1.4). */
    case DW_OP_eq:
        r = a == b;
        break;
    case DW_OP_ne:
        r = a != b;
        break;
    case DW_OP_lt:
        r = sa < sb;
        break;
    case DW_OP_gt:
        r = sa > sb;
        break;
    case DW_OP_le:
        r = sa <= sb;
        break;
    case DW_OP_ge:
        r = sa >= sb;
        break;
    default:
        return expr_fail(st, SW_EPROTO, "internal: DW_OP 0x%02x is not binary", op->atom);
    }
    return push(st, r);
}

/* DW_OP_implicit_value: NUMBER bytes after the ULEB128 length at NUMBER2. */
static int
implicit_value(struct expr_state *st, const struct sw_expr_op *op, struct sw_expr_result *res)
{
    const uint8_t *p = (const uint8_t *)(uintptr_t)op->number2;
    size_t k = 0;
    if (p == NULL && op->number > 0)
        return expr_fail(st, SW_EPROTO, "DW_OP_implicit_value without its block");
    while (p != NULL && k < EXPR_LEB_MAX && (p[k] & 0x80))
        k++;
    if (k == EXPR_LEB_MAX)
        return expr_fail(st, SW_EPROTO, "DW_OP_implicit_value: its length is not a ULEB128");
    res->kind = SW_EXPR_IMPLICIT;
    res->data = p ? p + k + 1 : NULL;
    res->len = (size_t)op->number;
    return 0;
}

/* Run operation ST->i.  Sets *DONE, and RES's kind, for the operations that
 * end a location description (DWARF 5 section 2.6.1.1.3, .4: a register, a
 * stack value, an implicit value). */
static int
step(struct expr_state *st, bool *done, struct sw_expr_result *res)
{
    const struct sw_expr_ctx *ctx = st->ctx;
    const struct sw_expr_op *op = &st->ops[st->i];
    uint8_t a = op->atom;
    sw_word v = 0;
    int rc = 0;

    if (a >= DW_OP_lit0 && a <= DW_OP_lit31)
        return push(st, (sw_word)(a - DW_OP_lit0));
    if (a >= DW_OP_breg0 && a <= DW_OP_breg31) {
        if ((rc = reg_value(st, a - DW_OP_breg0, &v)) < 0)
            return rc;
        return push(st, v + op->number);
    }
    if ((a >= DW_OP_reg0 && a <= DW_OP_reg31) || a == DW_OP_regx) {
        /* A register location: its contents are the result (the way a CFI
         * rule or a frame base uses it). */
        uint64_t dw = a == DW_OP_regx ? op->number : (uint64_t)(a - DW_OP_reg0);
        if ((rc = reg_value(st, dw, &v)) < 0)
            return rc;
        *done = true;
        res->kind = SW_EXPR_REGISTER;
        res->reg = (unsigned)dw;
        return push(st, v);
    }

    switch (a) {
    case DW_OP_addr:
        return push(st, op->number + ctx->addr_bias);
    case DW_OP_const1u:
    case DW_OP_const2u:
    case DW_OP_const4u:
    case DW_OP_const8u:
    case DW_OP_constu:
    case DW_OP_consts:
    case DW_OP_const8s:
        return push(st, op->number);
    case DW_OP_const1s:
        return push(st, sign_extend(op->number, 1));
    case DW_OP_const2s:
        return push(st, sign_extend(op->number, 2));
    case DW_OP_const4s:
        return push(st, sign_extend(op->number, 4));
    case DW_OP_fbreg:
        if (!ctx->have_frame_base)
            return expr_fail(st, SW_EPROTO, "DW_OP_fbreg without a frame base");
        return push(st, ctx->frame_base + op->number);
    case DW_OP_bregx:
        if ((rc = reg_value(st, op->number, &v)) < 0)
            return rc;
        return push(st, v + op->number2);
    case DW_OP_dup:
        NEED(1);
        return push(st, st->stack[st->depth - 1]);
    case DW_OP_drop:
        NEED(1);
        st->depth--;
        return 0;
    case DW_OP_over:
        NEED(2);
        return push(st, st->stack[st->depth - 2]);
    case DW_OP_pick:
        if (op->number >= st->depth)
            return expr_fail(st, SW_EPROTO, "DW_OP_pick %" PRIu64 " with %zu values", op->number,
                             st->depth);
        return push(st, st->stack[st->depth - 1 - op->number]);
    case DW_OP_swap:
        NEED(2);
        v = st->stack[st->depth - 1];
        st->stack[st->depth - 1] = st->stack[st->depth - 2];
        st->stack[st->depth - 2] = v;
        return 0;
    case DW_OP_rot:
        /* The top moves to third place; the second and third move up. */
        NEED(3);
        v = st->stack[st->depth - 1];
        st->stack[st->depth - 1] = st->stack[st->depth - 2];
        st->stack[st->depth - 2] = st->stack[st->depth - 3];
        st->stack[st->depth - 3] = v;
        return 0;
    case DW_OP_deref:
        NEED(1);
        return deref(st, ctx->addr_size);
    case DW_OP_deref_size:
        NEED(1);
        if (op->number == 0 || op->number > ctx->addr_size)
            return expr_fail(st, SW_EPROTO, "DW_OP_deref_size %" PRIu64 " on a %u-byte target",
                             op->number, ctx->addr_size);
        return deref(st, (size_t)op->number);
    case DW_OP_abs:
    case DW_OP_neg:
    case DW_OP_not:
        NEED(1);
        v = st->stack[st->depth - 1];
        if (a == DW_OP_not)
            v = ~v;
        else if (a == DW_OP_neg || to_signed(st, v) < 0)
            v = (sw_word)0 - v;
        st->stack[st->depth - 1] = v & st->mask;
        return 0;
    case DW_OP_plus_uconst:
        NEED(1);
        st->stack[st->depth - 1] = (st->stack[st->depth - 1] + op->number) & st->mask;
        return 0;
    case DW_OP_and:
    case DW_OP_div:
    case DW_OP_minus:
    case DW_OP_mod:
    case DW_OP_mul:
    case DW_OP_or:
    case DW_OP_plus:
    case DW_OP_shl:
    case DW_OP_shr:
    case DW_OP_shra:
    case DW_OP_xor:
    case DW_OP_eq:
    case DW_OP_ge:
    case DW_OP_gt:
    case DW_OP_le:
    case DW_OP_lt:
    case DW_OP_ne:
        return binop(st, op);
    case DW_OP_skip:
        return jump(st, op);
    case DW_OP_bra:
        NEED(1);
        if (st->stack[--st->depth] != 0)
            return jump(st, op);
        return 0;
    case DW_OP_nop:
        return 0;
    case DW_OP_call_frame_cfa:
        /* In a rule the CFA is known; in the CFA's own expression it is
         * what is being computed. */
        if (!ctx->have_cfa)
            return expr_fail(st, SW_EPROTO, "DW_OP_call_frame_cfa without a CFA");
        return push(st, ctx->cfa);
    case DW_OP_stack_value:
        *done = true;
        res->kind = SW_EXPR_VALUE;
        return 0;
    case DW_OP_implicit_value:
        *done = true;
        return implicit_value(st, op, res);
    case DW_OP_piece:
    case DW_OP_bit_piece:
        return expr_fail(st, SW_EPROTO, "DW_OP 0x%02x in a simple location", a);
    default:
        return expr_fail(st, SW_EPROTO, "unsupported operation DW_OP 0x%02x", a);
    }
}

int
sw_expr_eval(const struct sw_expr_ctx *ctx, const struct sw_expr_op *ops, size_t nops,
             struct sw_expr_result *out)
{
    struct expr_state st;
    struct sw_expr_result res = { .kind = SW_EXPR_ADDRESS };
    int rc;

    st.ctx = ctx;
    st.ops = ops;
    st.nops = ops ? nops : 0;
    st.i = st.nops;
    st.depth = 0;
    if (ctx->addr_size != 4 && ctx->addr_size != 8)
        return expr_fail(&st, SW_EINVAL, "address size %u is not 4 or 8", ctx->addr_size);
    st.bits = 8 * ctx->addr_size;
    st.mask = st.bits == 64 ? ~(sw_word)0 : ((sw_word)1 << st.bits) - 1;

    /* Said first, whatever else the frame lacks: the answer is the same for
     * every frame. */
    for (st.i = 0; st.i < st.nops; st.i++)
        if (ops[st.i].atom == DW_OP_entry_value || ops[st.i].atom == DW_OP_GNU_entry_value)
            return expr_fail(&st, SW_ENOENT,
                             "DW_OP_entry_value: the value at entry is known "
                             "only to the caller's call sites");

    if (ctx->have_cfa && ctx->push_cfa && (rc = push(&st, ctx->cfa)) < 0)
        return rc;
    bool done = false;
    unsigned steps = 0;
    for (st.i = 0; st.i < st.nops && !done; st.i++) {
        if (steps++ == EXPR_STEPS_MAX)
            return expr_fail(&st, SW_EPROTO, "more than %d operations: a loop?", EXPR_STEPS_MAX);
        if ((rc = step(&st, &done, &res)) < 0)
            return rc;
    }
    if (done && st.i < st.nops)
        return expr_fail(&st, SW_EPROTO, "operations after the end of a value or location");
    if (res.kind == SW_EXPR_IMPLICIT) {
        *out = res;
        return 0;
    }
    if (st.depth == 0)
        return expr_fail(&st, SW_EPROTO, "the expression leaves no value");
    res.value = st.stack[st.depth - 1];
    *out = res;
    return 0;
}

int
sw_expr_eval_word(const struct sw_expr_ctx *ctx, const struct sw_expr_op *ops, size_t nops,
                  sw_word *out)
{
    struct sw_expr_result res;
    int rc = sw_expr_eval(ctx, ops, nops, &res);
    if (rc < 0)
        return rc;
    if (res.kind == SW_EXPR_IMPLICIT) {
        if (ctx->err)
            sw_fail(ctx->err, SW_EPROTO,
                    "DWARF expression: DW_OP_implicit_value where a number is needed");
        return SW_EPROTO;
    }
    *out = res.value;
    return 0;
}
