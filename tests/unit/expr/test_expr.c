/* tests/unit/expr/test_expr.c -- the DWARF expression evaluator (expr/expr.h).
 *
 * Operations as libdw and libdwarf decode them: expressions as CFI uses them (the x86-64
 * PLT CFA, signal-frame slots), locations as variables use them (registers, the frame base,
 * stack and implicit values), arithmetic at the target's width and byte order, branches by
 * byte offset, and every way garbage must fail without looping.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "expr/expr.h"

/* DWARF 5 section 7.7.1, the operations these tests use. */
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
    OP_reg0 = 0x50,
    OP_breg0 = 0x70,
    OP_regx = 0x90,
    OP_fbreg = 0x91,
    OP_bregx = 0x92,
    OP_piece = 0x93,
    OP_deref_size = 0x94,
    OP_nop = 0x96,
    OP_call_frame_cfa = 0x9c,
    OP_implicit_value = 0x9e,
    OP_stack_value = 0x9f,
    OP_entry_value = 0xa3,
    OP_GNU_push_tls_address = 0xe0,
    OP_GNU_entry_value = 0xf3,
};

#define LIT(n) ((uint8_t)(OP_lit0 + (n)))
/* O(atom[, number[, number2[, offset]]]): one operation, the fields it leaves out 0. */
#define O(...) O_(__VA_ARGS__, 0, 0, 0, 0)
#define O_(a, n, n2, off, ...)                                                                     \
    {                                                                                              \
        (a), (n), (n2), (off)                                                                      \
    }
#define NEG(n) ((uint64_t)(int64_t)(n)) /* a signed operand as libdw stores it */

/* A little memory for DW_OP_deref: BASE..BASE+sizeof bytes. */
struct fake_mem {
    sw_addr base;
    uint8_t bytes[64];
    int fail_code; /* returned for any read outside, default SW_EMEM */
    unsigned reads;
};

/* Registers by DWARF number, and the memory. */
struct env {
    sw_word regs[32];
    uint32_t known; /* bit N: register N is known */
    struct fake_mem mem;
    struct sw_errbuf err;
    struct sw_expr_ctx ctx;
};

static bool
env_reg(void *arg, unsigned dw, sw_word *val)
{
    struct env *e = arg;
    if (dw >= 32 || !(e->known >> dw & 1))
        return false;
    *val = e->regs[dw];
    return true;
}

static int
env_read(void *arg, sw_addr addr, void *buf, size_t len)
{
    struct fake_mem *m = &((struct env *)arg)->mem;
    m->reads++;
    if (addr < m->base || addr - m->base > sizeof m->bytes ||
        len > sizeof m->bytes - (addr - m->base))
        return m->fail_code ? m->fail_code : SW_EMEM;
    memcpy(buf, m->bytes + (addr - m->base), len);
    return 0;
}

static void
set_reg(struct env *e, unsigned dw, sw_word v)
{
    e->regs[dw] = v;
    e->known |= 1u << dw;
}

static void
env_init(struct env *e, unsigned addr_size, bool big_endian)
{
    memset(e, 0, sizeof *e);
    e->mem.base = 0x1000;
    e->ctx = (struct sw_expr_ctx){
        .addr_size = addr_size,
        .big_endian = big_endian,
        .reg = env_reg,
        .read = env_read,
        .arg = e,
        .err = &e->err,
    };
}

/* Give OPS the byte offsets of their encoding: each operation's own size in SIZES (opcode
 * and operands), so that branches find their targets. */
static void
lay_out(struct sw_expr_op *ops, size_t n, const uint8_t *sizes)
{
    uint64_t off = 0;
    for (size_t i = 0; i < n; i++) {
        ops[i].offset = off;
        off += sizes[i];
    }
}

static int
run(struct env *e, const struct sw_expr_op *ops, size_t n, sw_word *out)
{
    return sw_expr_eval_word(&e->ctx, ops, n, out);
}

/* RUN(&e, &r, {op}, {op}...): evaluate those operations to a number (offsets 0: no
 * branches). */
#define OPS(...)         ((const struct sw_expr_op[]){ __VA_ARGS__ })
#define NOPS(...)        (sizeof OPS(__VA_ARGS__) / sizeof(struct sw_expr_op))
#define RUN(e, out, ...) run((e), OPS(__VA_ARGS__), NOPS(__VA_ARGS__), (out))

static void
test_expr_literals_and_constants(void **state)
{
    (void)state;
    struct env e;
    sw_word r = 0;
    env_init(&e, 8, false);
    assert_int_equal(RUN(&e, &r, O(LIT(5)), O(LIT(7)), O(OP_plus)), 0);
    assert_int_equal(r, 12);
    /* const1s -1, as libdw gives it (sign-extended) and as the low byte alone */
    assert_int_equal(RUN(&e, &r, O(OP_const1s, NEG(-1)), O(OP_plus_uconst, 3)), 0);
    assert_int_equal(r, 2);
    assert_int_equal(RUN(&e, &r, O(OP_const1s, 0xff), O(OP_plus_uconst, 3)), 0);
    assert_int_equal(r, 2);
    assert_int_equal(RUN(&e, &r, O(OP_const2s, 0x8000)), 0);
    assert_int_equal((int64_t)r, -32768);
    assert_int_equal(RUN(&e, &r, O(OP_const4s, 0xfffffffe)), 0);
    assert_int_equal((int64_t)r, -2);
    assert_int_equal(RUN(&e, &r, O(OP_const1u, 0xff)), 0);
    assert_int_equal(r, 255);
    assert_int_equal(RUN(&e, &r, O(OP_constu, 624485)), 0);
    assert_int_equal(r, 624485);
    assert_int_equal(RUN(&e, &r, O(OP_consts, NEG(-123456))), 0);
    assert_int_equal((int64_t)r, -123456);
    assert_int_equal(RUN(&e, &r, O(OP_const8u, 0x1122334455667788ull)), 0);
    assert_int_equal(r, 0x1122334455667788ull);
    /* DW_OP_addr is relocated by the module's bias. */
    assert_int_equal(RUN(&e, &r, O(OP_addr, 0x2010)), 0);
    assert_int_equal(r, 0x2010);
    e.ctx.addr_bias = 0x555500000000ull;
    assert_int_equal(RUN(&e, &r, O(OP_addr, 0x2010)), 0);
    assert_int_equal(r, 0x555500002010ull);
}

static void
test_expr_x86_64_plt_cfa_before_and_after_the_push(void **state)
{
    (void)state;
    /* binutils' .plt FDE: CFA = rsp + 8 + ((rip & 15) >= 11 ? 8 : 0)
     * DW_OP_breg7 8; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and; DW_OP_lit11;
     * DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus */
    static const struct sw_expr_op plt[] = {
        O(OP_breg0 + 7, 8, 0, 0), O(OP_breg0 + 16, 0, 0, 2), O(LIT(15), 0, 0, 4),
        O(OP_and, 0, 0, 5),       O(LIT(11), 0, 0, 6),       O(OP_ge, 0, 0, 7),
        O(LIT(3), 0, 0, 8),       O(OP_shl, 0, 0, 9),        O(OP_plus, 0, 0, 10),
    };
    struct env e;
    sw_word r = 0;
    env_init(&e, 8, false);
    set_reg(&e, 7, 0x7ffc0000);

    set_reg(&e, 16, 0x401020); /* jmp *GOT: nothing pushed */
    assert_int_equal(run(&e, plt, 9, &r), 0);
    assert_int_equal(r, 0x7ffc0008);

    set_reg(&e, 16, 0x40102b); /* after push $index */
    assert_int_equal(run(&e, plt, 9, &r), 0);
    assert_int_equal(r, 0x7ffc0010);

    set_reg(&e, 16, 0x40102a); /* lit10 variant boundary */
    assert_int_equal(run(&e, plt, 9, &r), 0);
    assert_int_equal(r, 0x7ffc0008);
}

static void
test_expr_bregx_and_missing_register_is_enoreg(void **state)
{
    (void)state;
    struct env e;
    sw_word r = 0;
    env_init(&e, 8, false);
    set_reg(&e, 6, 0x5000);
    assert_int_equal(RUN(&e, &r, O(OP_bregx, 6, NEG(-16))), 0);
    assert_int_equal(r, 0x4ff0);
    /* breg3 0: rbx unknown */
    assert_int_equal(RUN(&e, &r, O(OP_breg0 + 3, 0)), SW_ENOREG);
    assert_non_null(strstr(e.err.msg, "register 3"));
    /* a register number no target has */
    assert_int_equal(RUN(&e, &r, O(OP_bregx, 1ull << 40, 0)), SW_EPROTO);
    assert_int_equal(RUN(&e, &r, O(OP_regx, 1ull << 40)), SW_EPROTO);
}

static void
test_expr_register_location_is_its_contents_and_must_be_last(void **state)
{
    (void)state;
    struct env e;
    struct sw_expr_result res;
    sw_word r = 0;
    env_init(&e, 8, false);
    set_reg(&e, 12, 77);
    assert_int_equal(sw_expr_eval(&e.ctx, OPS(O(OP_reg0 + 12)), 1, &res), 0);
    assert_int_equal(res.kind, SW_EXPR_REGISTER);
    assert_int_equal(res.reg, 12);
    assert_int_equal(res.value, 77);
    assert_int_equal(sw_expr_eval(&e.ctx, OPS(O(OP_regx, 12)), 1, &res), 0);
    assert_int_equal(res.kind, SW_EXPR_REGISTER);
    assert_int_equal(res.value, 77);
    assert_int_equal(RUN(&e, &r, O(OP_reg0 + 12)), 0);
    assert_int_equal(r, 77);
    assert_int_equal(RUN(&e, &r, O(OP_reg0 + 12), O(LIT(0), 0, 0, 1)), SW_EPROTO);
    assert_non_null(strstr(e.err.msg, "after the end"));
    assert_int_equal(RUN(&e, &r, O(OP_reg0 + 13)), SW_ENOREG);
}

static void
test_expr_memory_location_and_stack_value(void **state)
{
    (void)state;
    struct env e;
    struct sw_expr_result res;
    env_init(&e, 8, false);
    set_reg(&e, 3, 0x100);
    /* breg3 8: the value is in memory there */
    assert_int_equal(sw_expr_eval(&e.ctx, OPS(O(OP_breg0 + 3, 8)), 1, &res), 0);
    assert_int_equal(res.kind, SW_EXPR_ADDRESS);
    assert_int_equal(res.value, 0x108);
    /* breg3 5; stack_value: the value itself */
    assert_int_equal(
        sw_expr_eval(&e.ctx, OPS(O(OP_breg0 + 3, 5), O(OP_stack_value, 0, 0, 2)), 2, &res), 0);
    assert_int_equal(res.kind, SW_EXPR_VALUE);
    assert_int_equal(res.value, 0x105);
    /* nothing may follow it, and it needs a value */
    assert_int_equal(sw_expr_eval(&e.ctx, OPS(O(LIT(1)), O(OP_stack_value), O(OP_nop)), 3, &res),
                     SW_EPROTO);
    assert_int_equal(sw_expr_eval(&e.ctx, OPS(O(OP_stack_value)), 1, &res), SW_EPROTO);
    assert_non_null(strstr(e.err.msg, "no value"));
}

static void
test_expr_implicit_value_is_its_block_and_no_number(void **state)
{
    (void)state;
    /* libdw's form: NUMBER2 points at the ULEB128 length, then the bytes. */
    static const uint8_t block[] = { 0x04, 0x2a, 0x00, 0x00, 0x00 };
    static const uint8_t long_block[] = { 0x81, 0x01, 0xaa }; /* length 129 as 2 bytes */
    static const uint8_t no_end[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80 };
    struct env e;
    struct sw_expr_result res;
    sw_word r;
    env_init(&e, 8, false);
    const struct sw_expr_op iv[] = { O(OP_implicit_value, 4, (uintptr_t)block, 0) };
    assert_int_equal(sw_expr_eval(&e.ctx, iv, 1, &res), 0);
    assert_int_equal(res.kind, SW_EXPR_IMPLICIT);
    assert_int_equal(res.len, 4);
    assert_ptr_equal(res.data, block + 1);
    const struct sw_expr_op lv[] = { O(OP_implicit_value, 129, (uintptr_t)long_block, 0) };
    assert_int_equal(sw_expr_eval(&e.ctx, lv, 1, &res), 0);
    assert_ptr_equal(res.data, long_block + 2);
    /* A CFI rule or a frame base needs a number. */
    assert_int_equal(sw_expr_eval_word(&e.ctx, iv, 1, &r), SW_EPROTO);
    assert_non_null(strstr(e.err.msg, "implicit_value"));
    /* A block that is not there, a length that does not end. */
    const struct sw_expr_op none[] = { O(OP_implicit_value, 4, 0, 0) };
    assert_int_equal(sw_expr_eval(&e.ctx, none, 1, &res), SW_EPROTO);
    const struct sw_expr_op bad[] = { O(OP_implicit_value, 4, (uintptr_t)no_end, 0) };
    assert_int_equal(sw_expr_eval(&e.ctx, bad, 1, &res), SW_EPROTO);
}

static void
test_expr_entry_value_is_enoent_whatever_else_fails(void **state)
{
    (void)state;
    struct env e;
    struct sw_expr_result res;
    env_init(&e, 8, false);
    /* breg3 (unknown) entry_value(reg5) plus stack_value: the entry value decides. */
    const struct sw_expr_op ops[] = { O(OP_breg0 + 3, 0, 0, 0), O(OP_entry_value, 1, 0, 2),
                                      O(OP_plus, 0, 0, 5), O(OP_stack_value, 0, 0, 6) };
    assert_int_equal(sw_expr_eval(&e.ctx, ops, 4, &res), SW_ENOENT);
    assert_non_null(strstr(e.err.msg, "entry_value"));
    assert_int_equal(sw_expr_eval(&e.ctx, OPS(O(OP_GNU_entry_value, 1)), 1, &res), SW_ENOENT);
}

static void
test_expr_push_cfa_and_call_frame_cfa(void **state)
{
    (void)state;
    struct env e;
    sw_word r = 0;
    env_init(&e, 8, false);
    /* DW_CFA_expression rules start with the CFA on the stack. */
    e.ctx.have_cfa = e.ctx.push_cfa = true;
    e.ctx.cfa = 0x9000;
    assert_int_equal(RUN(&e, &r, O(OP_plus_uconst, 40)), 0);
    assert_int_equal(r, 0x9028);
    assert_int_equal(RUN(&e, &r, O(OP_call_frame_cfa), O(LIT(8)), O(OP_minus)), 0);
    assert_int_equal(r, 0x8ff8);
    /* A location knows the CFA without starting from it. */
    e.ctx.push_cfa = false;
    assert_int_equal(RUN(&e, &r, O(OP_plus_uconst, 40)), SW_EPROTO);
    assert_int_equal(RUN(&e, &r, O(OP_call_frame_cfa), O(OP_consts, NEG(-40)), O(OP_plus)), 0);
    assert_int_equal(r, 0x9000 - 40);
    /* Computing the CFA itself, DW_OP_call_frame_cfa is circular. */
    e.ctx.have_cfa = false;
    assert_int_equal(RUN(&e, &r, O(OP_call_frame_cfa)), SW_EPROTO);
    assert_non_null(strstr(e.err.msg, "call_frame_cfa"));
    /* PUSH_CFA means nothing without the CFA. */
    e.ctx.push_cfa = true;
    assert_int_equal(RUN(&e, &r, O(OP_plus_uconst, 40)), SW_EPROTO);
}

static void
test_expr_fbreg_needs_the_frame_base(void **state)
{
    (void)state;
    struct env e;
    sw_word r = 0;
    env_init(&e, 8, false);
    assert_int_equal(RUN(&e, &r, O(OP_fbreg, NEG(-20))), SW_EPROTO);
    assert_non_null(strstr(e.err.msg, "frame base"));
    e.ctx.have_frame_base = true;
    e.ctx.frame_base = 0x7ffd0000;
    assert_int_equal(RUN(&e, &r, O(OP_fbreg, NEG(-20))), 0);
    assert_int_equal(r, 0x7ffd0000 - 20);
}

static void
test_expr_deref_reads_target_words_little_endian(void **state)
{
    (void)state;
    struct env e;
    sw_word r = 0;
    env_init(&e, 8, false);
    memcpy(e.mem.bytes + 8, "\x11\x22\x33\x44\x55\x66\x77\x88", 8);
    set_reg(&e, 7, 0x1000);
    assert_int_equal(RUN(&e, &r, O(OP_breg0 + 7, 8), O(OP_deref)), 0);
    assert_int_equal(r, 0x8877665544332211ull);
    assert_int_equal(RUN(&e, &r, O(OP_breg0 + 7, 8), O(OP_deref_size, 2)), 0);
    assert_int_equal(r, 0x2211);
    assert_int_equal(RUN(&e, &r, O(OP_breg0 + 7, 8), O(OP_deref_size, 0)), SW_EPROTO);
}

static void
test_expr_big_endian_32_bit_reads_and_wraps(void **state)
{
    (void)state;
    struct env e;
    sw_word r = 0;
    env_init(&e, 4, true);
    memcpy(e.mem.bytes, "\x12\x34\x56\x78\x9a\xbc\xde\xf0", 8);
    assert_int_equal(RUN(&e, &r, O(OP_const2u, 0x1000), O(OP_deref)), 0);
    assert_int_equal(r, 0x12345678);
    assert_int_equal(RUN(&e, &r, O(OP_const4u, 0x1004), O(OP_deref_size, 2)), 0);
    assert_int_equal(r, 0x9abc);
    /* deref_size 8 on a 4-byte target is malformed. */
    assert_int_equal(RUN(&e, &r, O(OP_const2u, 0x1000), O(OP_deref_size, 8)), SW_EPROTO);
    /* const4u 0xffffffff plus_uconst 2 wraps at 32 bits */
    assert_int_equal(RUN(&e, &r, O(OP_const4u, 0xffffffff), O(OP_plus_uconst, 2)), 0);
    assert_int_equal(r, 1);
    /* lit0 lit1 minus is 0xffffffff, not 2^64-1 */
    assert_int_equal(RUN(&e, &r, O(LIT(0)), O(LIT(1)), O(OP_minus)), 0);
    assert_int_equal(r, 0xffffffffu);
    /* a 64-bit constant is cut to the target's width */
    assert_int_equal(RUN(&e, &r, O(OP_consts, NEG(-1))), 0);
    assert_int_equal(r, 0xffffffffu);
    /* shra keeps the 32-bit sign: 0x80000000 >> 4 */
    assert_int_equal(RUN(&e, &r, O(OP_const4u, 0x80000000), O(LIT(4)), O(OP_shra)), 0);
    assert_int_equal(r, 0xf8000000u);
    /* lt is signed at the target's width: -1 < 1 */
    assert_int_equal(RUN(&e, &r, O(OP_const4u, 0xffffffff), O(LIT(1)), O(OP_lt)), 0);
    assert_int_equal(r, 1);
}

static void
test_expr_unreadable_memory_is_emem_and_a_link_error_passes_up(void **state)
{
    (void)state;
    struct env e;
    sw_word r = 0;
    env_init(&e, 8, false);
    /* Memory that cannot be read: SW_EMEM, "not this frame's" for a stepper. */
    assert_int_equal(RUN(&e, &r, O(OP_const2u, 0x2000), O(OP_deref)), SW_EMEM);
    assert_non_null(strstr(e.err.msg, "0x2000"));
    /* A dead link: the reader's code, unchanged. */
    e.mem.fail_code = SW_ETIMEDOUT;
    assert_int_equal(RUN(&e, &r, O(OP_const2u, 0x2000), O(OP_deref)), SW_ETIMEDOUT);
    e.mem.fail_code = SW_ECONN;
    assert_int_equal(RUN(&e, &r, O(OP_const2u, 0x2000), O(OP_deref_size, 4)), SW_ECONN);
    /* No reader at all: nothing is readable. */
    e.ctx.read = NULL;
    assert_int_equal(RUN(&e, &r, O(OP_const2u, 0x1000), O(OP_deref)), SW_EMEM);
}

static void
test_expr_stack_operations(void **state)
{
    (void)state;
    struct env e;
    sw_word r = 0;
    env_init(&e, 8, false);
    /* lit1 lit2 swap -> 2 1; minus -> 1 */
    assert_int_equal(RUN(&e, &r, O(LIT(1)), O(LIT(2)), O(OP_swap), O(OP_minus)), 0);
    assert_int_equal(r, 1);
    /* lit1 lit2 over -> 1 2 1; plus plus -> 4 */
    assert_int_equal(RUN(&e, &r, O(LIT(1)), O(LIT(2)), O(OP_over), O(OP_plus), O(OP_plus)), 0);
    assert_int_equal(r, 4);
    /* lit1 lit2 lit3 rot -> 3 1 2; drop -> 3 1; minus -> 2 */
    assert_int_equal(
        RUN(&e, &r, O(LIT(1)), O(LIT(2)), O(LIT(3)), O(OP_rot), O(OP_drop), O(OP_minus)), 0);
    assert_int_equal(r, 2);
    /* lit5 lit6 lit7 pick 2 -> 5 */
    assert_int_equal(RUN(&e, &r, O(LIT(5)), O(LIT(6)), O(LIT(7)), O(OP_pick, 2)), 0);
    assert_int_equal(r, 5);
    /* lit9 dup mul -> 81 */
    assert_int_equal(RUN(&e, &r, O(LIT(9)), O(OP_dup), O(OP_mul)), 0);
    assert_int_equal(r, 81);
    /* pick past the bottom */
    assert_int_equal(RUN(&e, &r, O(LIT(1)), O(OP_pick, 1)), SW_EPROTO);
}

static void
test_expr_arithmetic_and_comparisons(void **state)
{
    (void)state;
    struct env e;
    sw_word r = 0;
    env_init(&e, 8, false);
    /* consts -7 lit2 div -> -3 (signed, truncating) */
    assert_int_equal(RUN(&e, &r, O(OP_consts, NEG(-7)), O(LIT(2)), O(OP_div)), 0);
    assert_int_equal((int64_t)r, -3);
    /* INT64_MIN / -1 wraps */
    assert_int_equal(RUN(&e, &r, O(OP_const8u, 1ull << 63), O(OP_consts, NEG(-1)), O(OP_div)), 0);
    assert_int_equal(r, 1ull << 63);
    /* lit17 lit5 mod -> 2 */
    assert_int_equal(RUN(&e, &r, O(LIT(17)), O(LIT(5)), O(OP_mod)), 0);
    assert_int_equal(r, 2);
    /* consts -5 abs -> 5; lit5 neg -> -5; lit0 not -> ~0 */
    assert_int_equal(RUN(&e, &r, O(OP_consts, NEG(-5)), O(OP_abs)), 0);
    assert_int_equal(r, 5);
    assert_int_equal(RUN(&e, &r, O(LIT(5)), O(OP_neg)), 0);
    assert_int_equal((int64_t)r, -5);
    assert_int_equal(RUN(&e, &r, O(LIT(0)), O(OP_not)), 0);
    assert_int_equal(r, ~(sw_word)0);
    /* lit12 lit10 and/or/xor */
    assert_int_equal(RUN(&e, &r, O(LIT(12)), O(LIT(10)), O(OP_and)), 0);
    assert_int_equal(r, 8);
    assert_int_equal(RUN(&e, &r, O(LIT(12)), O(LIT(10)), O(OP_or)), 0);
    assert_int_equal(r, 14);
    assert_int_equal(RUN(&e, &r, O(LIT(12)), O(LIT(10)), O(OP_xor)), 0);
    assert_int_equal(r, 6);
    /* lit1 lit4 shl; consts -16 lit2 shr (logical); consts -16 lit2 shra; shifts past the
     * width */
    assert_int_equal(RUN(&e, &r, O(LIT(1)), O(LIT(4)), O(OP_shl)), 0);
    assert_int_equal(r, 16);
    assert_int_equal(RUN(&e, &r, O(OP_consts, NEG(-16)), O(LIT(2)), O(OP_shr)), 0);
    assert_int_equal(r, 0x3ffffffffffffffcull);
    assert_int_equal(RUN(&e, &r, O(OP_consts, NEG(-16)), O(LIT(2)), O(OP_shra)), 0);
    assert_int_equal((int64_t)r, -4);
    assert_int_equal(RUN(&e, &r, O(LIT(1)), O(OP_constu, 64), O(OP_shl)), 0);
    assert_int_equal(r, 0);
    assert_int_equal(RUN(&e, &r, O(OP_consts, NEG(-16)), O(OP_constu, 70), O(OP_shra)), 0);
    assert_int_equal(r, ~(sw_word)0);
    /* comparisons: eq ne lt gt le ge on 3, 4 */
    const uint8_t cmp_ops[] = { OP_eq, OP_ne, OP_lt, OP_gt, OP_le, OP_ge };
    const sw_word want[] = { 0, 1, 1, 0, 1, 0 };
    for (size_t i = 0; i < sizeof cmp_ops; i++) {
        const struct sw_expr_op x[] = { O(LIT(3), 0, 0, 0), O(LIT(4), 0, 0, 1),
                                        O(cmp_ops[i], 0, 0, 2) };
        assert_int_equal(run(&e, x, 3, &r), 0);
        assert_int_equal(r, want[i]);
    }
}

static void
test_expr_division_by_zero_is_eproto(void **state)
{
    (void)state;
    struct env e;
    sw_word r = 0;
    env_init(&e, 8, false);
    assert_int_equal(RUN(&e, &r, O(LIT(1)), O(LIT(0)), O(OP_div)), SW_EPROTO);
    assert_non_null(strstr(e.err.msg, "DW_OP_div by zero"));
    assert_int_equal(RUN(&e, &r, O(LIT(1)), O(LIT(0)), O(OP_mod)), SW_EPROTO);
    assert_non_null(strstr(e.err.msg, "DW_OP_mod by zero"));
}

static void
test_expr_skip_and_bra_go_to_the_operation_at_the_byte_offset(void **state)
{
    (void)state;
    struct env e;
    sw_word r = 0;
    env_init(&e, 8, false);
    /* lit1; bra +1; lit7 (skipped); lit9 -> 9.  Bytes: 0 lit1, 1 bra (3), 4 lit7, 5 lit9. */
    struct sw_expr_op taken[] = { O(LIT(1)), O(OP_bra, 1), O(LIT(7)), O(LIT(9)) };
    lay_out(taken, 4, (const uint8_t[]){ 1, 3, 1, 1 });
    assert_int_equal(run(&e, taken, 4, &r), 0);
    assert_int_equal(r, 9);
    /* lit0; bra +1; lit7 -> 7 (not taken) */
    struct sw_expr_op not_taken[] = { O(LIT(0)), O(OP_bra, 1), O(LIT(7)) };
    lay_out(not_taken, 3, (const uint8_t[]){ 1, 3, 1 });
    assert_int_equal(run(&e, not_taken, 3, &r), 0);
    assert_int_equal(r, 7);
    /* skip +2 over constu 300 (2 bytes of ULEB128 operand: 3 in all): lit3 -> 3 */
    struct sw_expr_op skip[] = { O(LIT(5)), O(OP_skip, 3), O(OP_constu, 300), O(LIT(3)) };
    lay_out(skip, 4, (const uint8_t[]){ 1, 3, 3, 1 });
    assert_int_equal(run(&e, skip, 4, &r), 0);
    assert_int_equal(r, 3);
    /* A count down: lit3; (1) lit1 minus dup bra -5 ... at 1: loops three times -> 0.
     * Bytes: 0 lit3, 1 lit1, 2 minus, 3 dup, 4 bra (to 7 - 6 = 1), 7 end. */
    struct sw_expr_op loop[] = { O(LIT(3)), O(LIT(1)), O(OP_minus), O(OP_dup),
                                 O(OP_bra, (uint16_t)-6) };
    lay_out(loop, 5, (const uint8_t[]){ 1, 1, 1, 1, 3 });
    assert_int_equal(run(&e, loop, 5, &r), 0);
    assert_int_equal(r, 0);
    /* Back to the first operation: lit0 at 0; lit1; skip... guarded by a bra. */
    struct sw_expr_op first[] = { O(OP_constu, 0), O(OP_dup), O(OP_bra, 3), O(LIT(1)),
                                  O(OP_skip, (uint16_t)-9) };
    lay_out(first, 5, (const uint8_t[]){ 2, 1, 3, 1, 3 });
    /* constu 0; dup; bra (0: falls); lit1; skip to 0 -> constu 0 dup: 0 1 0 0 ... runs away */
    assert_int_equal(run(&e, first, 5, &r), SW_EPROTO);
}

static void
test_expr_branch_to_the_end_ends_and_elsewhere_is_eproto(void **state)
{
    (void)state;
    struct env e;
    sw_word r = 0;
    env_init(&e, 8, false);
    /* lit1; skip +1; lit7 -> the end, 1 */
    struct sw_expr_op end[] = { O(LIT(1)), O(OP_skip, 1), O(LIT(7)) };
    lay_out(end, 3, (const uint8_t[]){ 1, 3, 1 });
    assert_int_equal(run(&e, end, 3, &r), 0);
    assert_int_equal(r, 1);
    /* skip before the start */
    struct sw_expr_op before[] = { O(OP_skip, (uint16_t)-16), O(LIT(1)) };
    lay_out(before, 2, (const uint8_t[]){ 3, 1 });
    assert_int_equal(run(&e, before, 2, &r), SW_EPROTO);
    assert_non_null(strstr(e.err.msg, "before the expression"));
    /* into the operand of constu 300 (bytes 4..5) */
    struct sw_expr_op inside[] = { O(LIT(1)), O(OP_skip, 1), O(OP_constu, 300), O(LIT(2)) };
    lay_out(inside, 4, (const uint8_t[]){ 1, 3, 3, 1 });
    assert_int_equal(run(&e, inside, 4, &r), SW_EPROTO);
    assert_non_null(strstr(e.err.msg, "inside an operation"));
    /* bra with nothing to test */
    struct sw_expr_op empty[] = { O(OP_bra, 0) };
    assert_int_equal(run(&e, empty, 1, &r), SW_EPROTO);
    assert_non_null(strstr(e.err.msg, "underflow"));
}

static void
test_expr_endless_branch_loop_is_bounded(void **state)
{
    (void)state;
    struct env e;
    sw_word r = 0;
    env_init(&e, 8, false);
    /* lit1; bra -4: jumps back to lit1 forever */
    struct sw_expr_op self[] = { O(LIT(1)), O(OP_bra, (uint16_t)-4) };
    lay_out(self, 2, (const uint8_t[]){ 1, 3 });
    assert_int_equal(run(&e, self, 2, &r), SW_EPROTO);
    assert_non_null(strstr(e.err.msg, "operations"));
    /* skip -3: the same without a condition */
    struct sw_expr_op skip[] = { O(OP_skip, (uint16_t)-3) };
    assert_int_equal(run(&e, skip, 1, &r), SW_EPROTO);
    /* lit1; dup; dup; bra -5 (to 1): the stack fills before the step limit */
    struct sw_expr_op fill[] = { O(LIT(1)), O(OP_dup), O(OP_dup), O(OP_bra, (uint16_t)-5) };
    lay_out(fill, 4, (const uint8_t[]){ 1, 1, 1, 3 });
    assert_int_equal(run(&e, fill, 4, &r), SW_EPROTO);
    assert_non_null(strstr(e.err.msg, "overflow"));
}

static void
test_expr_bad_operation_is_eproto_naming_it(void **state)
{
    (void)state;
    struct env e;
    sw_word r = 0;
    env_init(&e, 8, false);
    assert_int_equal(RUN(&e, &r, O(LIT(1)), O(OP_GNU_push_tls_address, 0, 0, 1)), SW_EPROTO);
    assert_non_null(strstr(e.err.msg, "0xe0"));
    assert_non_null(strstr(e.err.msg, "offset 1"));
    /* A composite location is the caller's to split. */
    assert_int_equal(RUN(&e, &r, O(OP_reg0), O(OP_piece, 8)), SW_ENOREG);
    set_reg(&e, 0, 1);
    assert_int_equal(RUN(&e, &r, O(LIT(1)), O(OP_piece, 8)), SW_EPROTO);
    assert_non_null(strstr(e.err.msg, "0x93"));
}

static void
test_expr_underflow_empty_and_bad_width_fail(void **state)
{
    (void)state;
    struct env e;
    sw_word r = 0;
    env_init(&e, 8, false);
    assert_int_equal(RUN(&e, &r, O(OP_plus)), SW_EPROTO); /* plus on nothing */
    assert_non_null(strstr(e.err.msg, "underflow"));
    assert_int_equal(RUN(&e, &r, O(LIT(1)), O(OP_drop), O(OP_drop)), SW_EPROTO);
    assert_int_equal(RUN(&e, &r, O(OP_deref)), SW_EPROTO);
    assert_int_equal(RUN(&e, &r, O(OP_abs)), SW_EPROTO);
    assert_int_equal(RUN(&e, &r, O(LIT(1)), O(OP_swap)), SW_EPROTO);
    assert_int_equal(RUN(&e, &r, O(LIT(1)), O(LIT(2)), O(OP_rot)), SW_EPROTO);
    assert_int_equal(RUN(&e, &r, O(OP_plus_uconst, 1)), SW_EPROTO);
    assert_int_equal(run(&e, NULL, 0, &r), SW_EPROTO); /* nothing at all */
    assert_non_null(strstr(e.err.msg, "no value"));
    assert_int_equal(RUN(&e, &r, O(OP_nop)), SW_EPROTO);
    /* without an error buffer the code alone comes back */
    e.ctx.err = NULL;
    assert_int_equal(RUN(&e, &r, O(OP_plus)), SW_EPROTO);
    assert_int_equal(sw_expr_eval_word(&e.ctx, OPS(O(OP_implicit_value)), 1, &r), SW_EPROTO);
    /* a target that is neither 32 nor 64 bits wide */
    e.ctx.err = &e.err;
    e.ctx.addr_size = 2;
    assert_int_equal(RUN(&e, &r, O(LIT(1))), SW_EINVAL);
}

static void
test_expr_every_short_garbage_terminates(void **state)
{
    (void)state;
    /* Every 3-operation expression over a few interesting operations and operands: must
     * return one of the documented codes, never loop, never read outside the array
     * (ASan watches). */
    static const uint8_t atoms[] = {
        OP_addr,        OP_deref, OP_const1s, OP_constu,     OP_dup,
        OP_pick,        OP_rot,   OP_bra,     OP_skip,       LIT(1),
        0x77,           OP_regx,  OP_bregx,   OP_deref_size, OP_call_frame_cfa,
        OP_stack_value, OP_fbreg, OP_piece,   0xff,          0x00
    };
    static const uint64_t numbers[] = { 0, 1, 8, 0xfffd, 1ull << 63 };
    struct env e;
    sw_word r;
    env_init(&e, 8, false);
    set_reg(&e, 7, 0x1000);
    const size_t na = sizeof atoms, nn = sizeof numbers / sizeof numbers[0];
    for (size_t a = 0; a < na; a++)
        for (size_t b = 0; b < na; b++)
            for (size_t c = 0; c < na; c++)
                for (size_t k = 0; k < nn; k++) {
                    struct sw_expr_op *x = malloc(3 * sizeof *x);
                    assert_non_null(x);
                    x[0] = (struct sw_expr_op)O(atoms[a], numbers[k], numbers[k], 0);
                    x[1] = (struct sw_expr_op)O(atoms[b], numbers[(k + 1) % nn], 0, 3);
                    x[2] = (struct sw_expr_op)O(atoms[c], numbers[(k + 2) % nn], 0, 6);
                    e.ctx.have_cfa = e.ctx.push_cfa = (a & 1) != 0;
                    e.ctx.cfa = 0x1000;
                    int rc = run(&e, x, 3, &r);
                    assert_true(rc == 0 || rc == SW_EPROTO || rc == SW_EMEM || rc == SW_ENOREG);
                    free(x);
                }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expr_literals_and_constants),
        cmocka_unit_test(test_expr_x86_64_plt_cfa_before_and_after_the_push),
        cmocka_unit_test(test_expr_bregx_and_missing_register_is_enoreg),
        cmocka_unit_test(test_expr_register_location_is_its_contents_and_must_be_last),
        cmocka_unit_test(test_expr_memory_location_and_stack_value),
        cmocka_unit_test(test_expr_implicit_value_is_its_block_and_no_number),
        cmocka_unit_test(test_expr_entry_value_is_enoent_whatever_else_fails),
        cmocka_unit_test(test_expr_push_cfa_and_call_frame_cfa),
        cmocka_unit_test(test_expr_fbreg_needs_the_frame_base),
        cmocka_unit_test(test_expr_deref_reads_target_words_little_endian),
        cmocka_unit_test(test_expr_big_endian_32_bit_reads_and_wraps),
        cmocka_unit_test(test_expr_unreadable_memory_is_emem_and_a_link_error_passes_up),
        cmocka_unit_test(test_expr_stack_operations),
        cmocka_unit_test(test_expr_arithmetic_and_comparisons),
        cmocka_unit_test(test_expr_division_by_zero_is_eproto),
        cmocka_unit_test(test_expr_skip_and_bra_go_to_the_operation_at_the_byte_offset),
        cmocka_unit_test(test_expr_branch_to_the_end_ends_and_elsewhere_is_eproto),
        cmocka_unit_test(test_expr_endless_branch_loop_is_bounded),
        cmocka_unit_test(test_expr_bad_operation_is_eproto_naming_it),
        cmocka_unit_test(test_expr_underflow_empty_and_bad_width_fail),
        cmocka_unit_test(test_expr_every_short_garbage_terminates),
    };
    return cmocka_run_group_tests_name("expr", tests, NULL, NULL);
}
