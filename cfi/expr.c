/* cfi/expr.c -- the DWARF expression evaluator for CFI rules.
 *
 * A stack machine over target-width values (DWARF 5, section 2.5): enough
 * for DW_CFA_def_cfa_expression, DW_CFA_expression and val_expression rules
 * (the x86-64 PLT CFA, glibc's signal trampolines).  Not a location
 * evaluator: no pieces, no frame base, no TLS, no typed stack.
 */
#include "cfi/cfi.h"

#include <inttypes.h>
#include <string.h>

#include "util/util.h"

/* DWARF 5 section 7.7.1, table 7.9; the operations this evaluator knows. */
enum {
    OP_addr = 0x03,
    OP_deref = 0x06,
    OP_const1u = 0x08,
    OP_const1s = 0x09,
    OP_const2u = 0x0a,
    OP_const2s = 0x0b,
    OP_const4u = 0x0c,
    OP_const4s = 0x0d,
    OP_const8u = 0x0e,
    OP_const8s = 0x0f,
    OP_constu = 0x10,
    OP_consts = 0x11,
    OP_dup = 0x12,
    OP_drop = 0x13,
    OP_over = 0x14,
    OP_pick = 0x15,
    OP_swap = 0x16,
    OP_rot = 0x17,
    OP_abs = 0x19,
    OP_and = 0x1a,
    OP_div = 0x1b,
    OP_minus = 0x1c,
    OP_mod = 0x1d,
    OP_mul = 0x1e,
    OP_neg = 0x1f,
    OP_not = 0x20,
    OP_or = 0x21,
    OP_plus = 0x22,
    OP_plus_uconst = 0x23,
    OP_shl = 0x24,
    OP_shr = 0x25,
    OP_shra = 0x26,
    OP_xor = 0x27,
    OP_bra = 0x28,
    OP_eq = 0x29,
    OP_ge = 0x2a,
    OP_gt = 0x2b,
    OP_le = 0x2c,
    OP_lt = 0x2d,
    OP_ne = 0x2e,
    OP_skip = 0x2f,
    OP_lit0 = 0x30,
    OP_lit31 = 0x4f,
    OP_reg0 = 0x50,
    OP_reg31 = 0x6f,
    OP_breg0 = 0x70,
    OP_breg31 = 0x8f,
    OP_regx = 0x90,
    OP_bregx = 0x92,
    OP_deref_size = 0x94,
    OP_nop = 0x96,
    OP_call_frame_cfa = 0x9c,
    OP_stack_value = 0x9f,
};

/* gdb allows 1 << 10 values on its DWARF stack; CFI expressions need a
 * handful (the PLT CFA: 3).  64 is generous and keeps the stack local. */
#define EXPR_STACK_MAX 64
/* Each executed operation counts, so a backward DW_OP_skip or DW_OP_bra in
 * garbage ends here instead of looping.  Real CFI expressions run fewer
 * than 30 operations. */
#define EXPR_STEPS_MAX 10000

struct expr_state {
    const struct sw_expr_ctx *ctx;
    const uint8_t *expr;
    size_t len, pc;
    sw_word mask;  /* the target's address width */
    unsigned bits; /* 8 * addr_size */
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
        sw_err_prefix(st->ctx->err, "DWARF expression, offset %zu of %zu: ", st->pc, st->len);
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
            return underflow(st, op, (n));                                                         \
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

static int
read_fixed(struct expr_state *st, size_t n, sw_word *out)
{
    if (st->len - st->pc < n)
        return expr_fail(st, SW_EPROTO, "operand of %zu bytes runs past the end", n);
    const uint8_t *p = st->expr + st->pc;
    sw_word v = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = st->ctx->big_endian ? i : n - 1 - i;
        v = v << 8 | p[k];
    }
    st->pc += n;
    *out = v;
    return 0;
}

static int
read_uleb(struct expr_state *st, sw_word *out)
{
    sw_word v = 0;
    unsigned shift = 0;
    for (;;) {
        if (st->pc >= st->len)
            return expr_fail(st, SW_EPROTO, "LEB128 operand runs past the end");
        uint8_t b = st->expr[st->pc++];
        if (shift < 64)
            v |= (sw_word)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80))
            break;
    }
    *out = v;
    return 0;
}

static int
read_sleb(struct expr_state *st, int64_t *out)
{
    sw_word v = 0;
    unsigned shift = 0;
    uint8_t b;
    do {
        if (st->pc >= st->len)
            return expr_fail(st, SW_EPROTO, "LEB128 operand runs past the end");
        b = st->expr[st->pc++];
        if (shift < 64)
            v |= (sw_word)(b & 0x7f) << shift;
        shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40))
        v |= ~(sw_word)0 << shift;
    *out = (int64_t)v;
    return 0;
}

static int
reg_value(struct expr_state *st, unsigned dw, sw_word *val)
{
    if (st->ctx->frame == NULL || !sw_frame_reg(st->ctx->frame, dw, val))
        return expr_fail(st, SW_ENOREG, "register %u is not known in this frame", dw);
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

static int
jump(struct expr_state *st, int64_t off)
{
    /* The offset counts from the byte after the 2-byte operand; the end of
     * the expression is a valid target (it ends the evaluation). */
    int64_t to = (int64_t)st->pc + off;
    if (to < 0 || (uint64_t)to > st->len)
        return expr_fail(st, SW_EPROTO, "branch to %" PRId64 " outside the expression", to);
    st->pc = (size_t)to;
    return 0;
}

/* Binary operations: pop B (top), then A; push A op B. */
static int
binop(struct expr_state *st, uint8_t op)
{
    NEED(2);
    sw_word b = st->stack[--st->depth];
    sw_word a = st->stack[--st->depth];
    int64_t sa = to_signed(st, a), sb = to_signed(st, b);
    sw_word r;

    switch (op) {
    case OP_and:
        r = a & b;
        break;
    case OP_or:
        r = a | b;
        break;
    case OP_xor:
        r = a ^ b;
        break;
    case OP_plus:
        r = a + b;
        break;
    case OP_minus:
        r = a - b;
        break;
    case OP_mul:
        r = a * b;
        break;
    case OP_div:
        /* Signed, as gdb and libunwind do; INT_MIN / -1 wraps like the
         * hardware would rather than trapping here. */
        if (sb == 0)
            return expr_fail(st, SW_EPROTO, "DW_OP_div by zero");
        r = (sb == -1) ? (sw_word)0 - a : (sw_word)(sa / sb);
        break;
    case OP_mod:
        /* Unsigned, as gdb does for the generic type. */
        if (b == 0)
            return expr_fail(st, SW_EPROTO, "DW_OP_mod by zero");
        r = a % b;
        break;
    case OP_shl:
        r = b >= st->bits ? 0 : a << b;
        break;
    case OP_shr:
        r = b >= st->bits ? 0 : a >> b;
        break;
    case OP_shra:
        if (b >= st->bits)
            r = sa < 0 ? ~(sw_word)0 : 0;
        else
            r = sa < 0 ? ~(~(sw_word)sa >> b) : a >> b;
        break;
    /* Comparisons are signed (DWARF 5 section 2.5.1.4). */
    case OP_eq:
        r = a == b;
        break;
    case OP_ne:
        r = a != b;
        break;
    case OP_lt:
        r = sa < sb;
        break;
    case OP_gt:
        r = sa > sb;
        break;
    case OP_le:
        r = sa <= sb;
        break;
    case OP_ge:
        r = sa >= sb;
        break;
    default:
        return expr_fail(st, SW_EPROTO, "internal: DW_OP 0x%02x is not binary", op);
    }
    return push(st, r);
}

/* One operation at st->pc.  Sets *DONE for DW_OP_stack_value and register
 * location descriptions, which end the expression. */
static int
step(struct expr_state *st, bool push_cfa, sw_addr cfa, bool *done)
{
    const struct sw_expr_ctx *ctx = st->ctx;
    uint8_t op = st->expr[st->pc++];
    sw_word u = 0, v = 0;
    int64_t s = 0;
    int rc = 0;

    if (op >= OP_lit0 && op <= OP_lit31)
        return push(st, (sw_word)(op - OP_lit0));
    if (op >= OP_breg0 && op <= OP_breg31) {
        if ((rc = read_sleb(st, &s)) < 0 || (rc = reg_value(st, op - OP_breg0, &v)) < 0)
            return rc;
        return push(st, v + (sw_word)s);
    }
    if (op >= OP_reg0 && op <= OP_reg31) {
        /* A register location: its value is the result (the way a CFI
         * rule can use it); it must be the last operation. */
        if ((rc = reg_value(st, op - OP_reg0, &v)) < 0)
            return rc;
        *done = true;
        return push(st, v);
    }

    switch (op) {
    case OP_addr:
        if ((rc = read_fixed(st, ctx->addr_size, &u)) < 0)
            return rc;
        return push(st, u);
    case OP_const1u:
    case OP_const2u:
    case OP_const4u:
    case OP_const8u:
    case OP_const1s:
    case OP_const2s:
    case OP_const4s:
    case OP_const8s: {
        static const uint8_t sizes[] = { 1, 1, 2, 2, 4, 4, 8, 8 };
        size_t n = sizes[op - OP_const1u];
        if ((rc = read_fixed(st, n, &u)) < 0)
            return rc;
        if (((op - OP_const1u) & 1) && n < 8) {
            sw_word sign = (sw_word)1 << (8 * n - 1);
            u = (u ^ sign) - sign;
        }
        return push(st, u);
    }
    case OP_constu:
        if ((rc = read_uleb(st, &u)) < 0)
            return rc;
        return push(st, u);
    case OP_consts:
        if ((rc = read_sleb(st, &s)) < 0)
            return rc;
        return push(st, (sw_word)s);
    case OP_regx:
        if ((rc = read_uleb(st, &u)) < 0)
            return rc;
        if (u > UINT32_MAX)
            return expr_fail(st, SW_EPROTO, "DW_OP_regx %" PRIu64 ": no such register", u);
        if ((rc = reg_value(st, (unsigned)u, &v)) < 0)
            return rc;
        *done = true;
        return push(st, v);
    case OP_bregx:
        if ((rc = read_uleb(st, &u)) < 0 || (rc = read_sleb(st, &s)) < 0)
            return rc;
        if (u > UINT32_MAX)
            return expr_fail(st, SW_EPROTO, "DW_OP_bregx %" PRIu64 ": no such register", u);
        if ((rc = reg_value(st, (unsigned)u, &v)) < 0)
            return rc;
        return push(st, v + (sw_word)s);
    case OP_dup:
        NEED(1);
        return push(st, st->stack[st->depth - 1]);
    case OP_drop:
        NEED(1);
        st->depth--;
        return 0;
    case OP_over:
        NEED(2);
        return push(st, st->stack[st->depth - 2]);
    case OP_pick:
        if ((rc = read_fixed(st, 1, &u)) < 0)
            return rc;
        if (u >= st->depth)
            return expr_fail(st, SW_EPROTO, "DW_OP_pick %" PRIu64 " with %zu values", u, st->depth);
        return push(st, st->stack[st->depth - 1 - u]);
    case OP_swap:
        NEED(2);
        v = st->stack[st->depth - 1];
        st->stack[st->depth - 1] = st->stack[st->depth - 2];
        st->stack[st->depth - 2] = v;
        return 0;
    case OP_rot:
        /* The top moves to third place; the second and third move up. */
        NEED(3);
        v = st->stack[st->depth - 1];
        st->stack[st->depth - 1] = st->stack[st->depth - 2];
        st->stack[st->depth - 2] = st->stack[st->depth - 3];
        st->stack[st->depth - 3] = v;
        return 0;
    case OP_deref:
        NEED(1);
        return deref(st, ctx->addr_size);
    case OP_deref_size:
        NEED(1);
        if ((rc = read_fixed(st, 1, &u)) < 0)
            return rc;
        if (u == 0 || u > ctx->addr_size)
            return expr_fail(st, SW_EPROTO, "DW_OP_deref_size %" PRIu64 " on a %u-byte target", u,
                             ctx->addr_size);
        return deref(st, (size_t)u);
    case OP_abs:
    case OP_neg:
    case OP_not:
        NEED(1);
        v = st->stack[st->depth - 1];
        if (op == OP_not)
            v = ~v;
        else if (op == OP_neg || to_signed(st, v) < 0)
            v = (sw_word)0 - v;
        st->stack[st->depth - 1] = v & st->mask;
        return 0;
    case OP_plus_uconst:
        NEED(1);
        if ((rc = read_uleb(st, &u)) < 0)
            return rc;
        st->stack[st->depth - 1] = (st->stack[st->depth - 1] + u) & st->mask;
        return 0;
    case OP_and:
    case OP_div:
    case OP_minus:
    case OP_mod:
    case OP_mul:
    case OP_or:
    case OP_plus:
    case OP_shl:
    case OP_shr:
    case OP_shra:
    case OP_xor:
    case OP_eq:
    case OP_ge:
    case OP_gt:
    case OP_le:
    case OP_lt:
    case OP_ne:
        return binop(st, op);
    case OP_skip:
        if ((rc = read_fixed(st, 2, &u)) < 0)
            return rc;
        return jump(st, (int16_t)(uint16_t)u);
    case OP_bra:
        NEED(1);
        if ((rc = read_fixed(st, 2, &u)) < 0)
            return rc;
        if (st->stack[--st->depth] != 0)
            return jump(st, (int16_t)(uint16_t)u);
        return 0;
    case OP_nop:
        return 0;
    case OP_call_frame_cfa:
        /* In a rule the CFA is known; in the CFA's own expression it is
         * what is being computed. */
        if (!push_cfa)
            return expr_fail(st, SW_EPROTO, "DW_OP_call_frame_cfa while computing the CFA");
        return push(st, cfa);
    case OP_stack_value:
        *done = true;
        return 0;
    default:
        st->pc--;
        return expr_fail(st, SW_EPROTO, "unsupported operation DW_OP 0x%02x", op);
    }
}

int
sw_dwarf_expr_eval(const struct sw_expr_ctx *ctx, const uint8_t *expr, size_t len, bool push_cfa,
                   sw_addr cfa, sw_addr *result)
{
    struct expr_state st;
    int rc;

    st.ctx = ctx;
    st.expr = expr;
    st.len = expr ? len : 0;
    st.pc = 0;
    st.depth = 0;
    if (ctx->addr_size != 4 && ctx->addr_size != 8)
        return expr_fail(&st, SW_EINVAL, "address size %u is not 4 or 8", ctx->addr_size);
    st.bits = 8 * ctx->addr_size;
    st.mask = st.bits == 64 ? ~(sw_word)0 : ((sw_word)1 << st.bits) - 1;

    if (push_cfa && (rc = push(&st, cfa)) < 0)
        return rc;
    bool done = false;
    for (unsigned steps = 0; st.pc < st.len && !done; steps++) {
        if (steps == EXPR_STEPS_MAX)
            return expr_fail(&st, SW_EPROTO, "more than %d operations: a loop?", EXPR_STEPS_MAX);
        if ((rc = step(&st, push_cfa, cfa, &done)) < 0)
            return rc;
    }
    if (done && st.pc < st.len)
        return expr_fail(&st, SW_EPROTO, "operations after the end of a value or location");
    if (st.depth == 0)
        return expr_fail(&st, SW_EPROTO, "the expression leaves no value");
    *result = st.stack[st.depth - 1];
    return 0;
}
