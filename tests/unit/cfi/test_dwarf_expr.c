/* tests/unit/cfi/test_dwarf_expr.c -- the DWARF expression evaluator.
 *
 * Expressions as CFI uses them (the x86-64 PLT CFA, signal-frame slots),
 * arithmetic at the target's width and byte order, and every way garbage
 * must fail without looping or reading past the end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "cfi/cfi.h"

/* A little memory for DW_OP_deref: BASE..BASE+sizeof bytes. */
struct fake_mem {
    sw_addr base;
    uint8_t bytes[64];
    int fail_code; /* returned for any read outside, default SW_EMEM */
    unsigned reads;
};

static int
mem_read(void *arg, sw_addr addr, void *buf, size_t len)
{
    struct fake_mem *m = arg;
    m->reads++;
    if (addr < m->base || addr - m->base > sizeof m->bytes ||
        len > sizeof m->bytes - (addr - m->base))
        return m->fail_code ? m->fail_code : SW_EMEM;
    memcpy(buf, m->bytes + (addr - m->base), len);
    return 0;
}

struct env {
    struct sw_frame frame;
    struct fake_mem mem;
    struct sw_errbuf err;
    struct sw_expr_ctx ctx;
};

static void
env_init(struct env *e, unsigned addr_size, bool big_endian)
{
    memset(e, 0, sizeof *e);
    sw_frame_init(&e->frame);
    e->mem.base = 0x1000;
    e->ctx = (struct sw_expr_ctx){
        .frame = &e->frame,
        .addr_size = addr_size,
        .big_endian = big_endian,
        .read = mem_read,
        .arg = &e->mem,
        .err = &e->err,
    };
}

static int
run(struct env *e, const uint8_t *expr, size_t len, sw_addr *out)
{
    return sw_dwarf_expr_eval(&e->ctx, expr, len, false, 0, out);
}

/* RUN(&e, &r, bytes...): evaluate the expression BYTES. */
#define RUN(e, out, ...)                                                                           \
    run((e), (const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ }), (out))

static void
test_expr_literals_and_plus(void **state)
{
    (void)state;
    struct env e;
    sw_addr r = 0;
    env_init(&e, 8, false);
    /* lit5 lit7 plus */
    assert_int_equal(RUN(&e, &r, 0x35, 0x37, 0x22), 0);
    assert_int_equal(r, 12);
    /* const1s -1 plus_uconst 3 */
    assert_int_equal(RUN(&e, &r, 0x09, 0xff, 0x23, 0x03), 0);
    assert_int_equal(r, 2);
    /* constu 624485 (the LEB128 example of DWARF 5 section 7.6) */
    assert_int_equal(RUN(&e, &r, 0x10, 0xe5, 0x8e, 0x26), 0);
    assert_int_equal(r, 624485);
    /* consts -123456 */
    assert_int_equal(RUN(&e, &r, 0x11, 0xc0, 0xbb, 0x78), 0);
    assert_int_equal((int64_t)r, -123456);
    /* const8u little-endian */
    assert_int_equal(RUN(&e, &r, 0x0e, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11), 0);
    assert_int_equal(r, 0x1122334455667788ull);
    /* addr (8 bytes on this target) */
    assert_int_equal(RUN(&e, &r, 0x03, 0x10, 0x20, 0, 0, 0, 0, 0, 0), 0);
    assert_int_equal(r, 0x2010);
}

static void
test_expr_x86_64_plt_cfa_before_and_after_the_push(void **state)
{
    (void)state;
    /* binutils' .plt FDE: CFA = rsp + 8 + ((rip & 15) >= 11 ? 8 : 0)
     * DW_OP_breg7 8; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and; DW_OP_lit11;
     * DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus */
    static const uint8_t plt[] = {
        0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22
    };
    struct env e;
    sw_addr r = 0;
    env_init(&e, 8, false);
    sw_frame_set_reg(&e.frame, 7, 0x7ffc0000);

    sw_frame_set_reg(&e.frame, 16, 0x401020); /* jmp *GOT: nothing pushed */
    assert_int_equal(run(&e, plt, sizeof plt, &r), 0);
    assert_int_equal(r, 0x7ffc0008);

    sw_frame_set_reg(&e.frame, 16, 0x40102b); /* after push $index */
    assert_int_equal(run(&e, plt, sizeof plt, &r), 0);
    assert_int_equal(r, 0x7ffc0010);

    sw_frame_set_reg(&e.frame, 16, 0x40102a); /* lit10 variant boundary */
    assert_int_equal(run(&e, plt, sizeof plt, &r), 0);
    assert_int_equal(r, 0x7ffc0008);
}

static void
test_expr_bregx_and_missing_register_is_enoreg(void **state)
{
    (void)state;
    struct env e;
    sw_addr r = 0;
    env_init(&e, 8, false);
    sw_frame_set_reg(&e.frame, 6, 0x5000);
    /* bregx 6, -16 */
    assert_int_equal(RUN(&e, &r, 0x92, 0x06, 0x70), 0);
    assert_int_equal(r, 0x4ff0);
    /* breg3 0: rbx unknown */
    assert_int_equal(RUN(&e, &r, 0x73, 0x00), SW_ENOREG);
    assert_non_null(strstr(e.err.msg, "register 3"));
}

static void
test_expr_reg_is_its_value_and_must_be_last(void **state)
{
    (void)state;
    struct env e;
    sw_addr r = 0;
    env_init(&e, 8, false);
    sw_frame_set_reg(&e.frame, 12, 77);
    assert_int_equal(RUN(&e, &r, 0x5c), 0);
    assert_int_equal(r, 77);
    assert_int_equal(RUN(&e, &r, 0x90, 0x0c), 0);
    assert_int_equal(r, 77);
    assert_int_equal(RUN(&e, &r, 0x5c, 0x30), SW_EPROTO);
}

static void
test_expr_push_cfa_and_call_frame_cfa(void **state)
{
    (void)state;
    struct env e;
    sw_addr r = 0;
    env_init(&e, 8, false);
    /* DW_CFA_expression rules start with the CFA on the stack. */
    static const uint8_t off[] = { 0x23, 0x28 }; /* plus_uconst 40 */
    assert_int_equal(sw_dwarf_expr_eval(&e.ctx, off, sizeof off, true, 0x9000, &r), 0);
    assert_int_equal(r, 0x9028);
    static const uint8_t cfa[] = { 0x9c, 0x38, 0x1c }; /* call_frame_cfa lit8 minus */
    assert_int_equal(sw_dwarf_expr_eval(&e.ctx, cfa, sizeof cfa, true, 0x9000, &r), 0);
    assert_int_equal(r, 0x8ff8);
    /* Computing the CFA itself, DW_OP_call_frame_cfa is circular. */
    assert_int_equal(sw_dwarf_expr_eval(&e.ctx, cfa, sizeof cfa, false, 0, &r), SW_EPROTO);
    assert_non_null(strstr(e.err.msg, "call_frame_cfa"));
}

static void
test_expr_deref_reads_target_words_little_endian(void **state)
{
    (void)state;
    struct env e;
    sw_addr r = 0;
    env_init(&e, 8, false);
    memcpy(e.mem.bytes + 8, "\x11\x22\x33\x44\x55\x66\x77\x88", 8);
    sw_frame_set_reg(&e.frame, 7, 0x1000);
    /* breg7 8; deref */
    assert_int_equal(RUN(&e, &r, 0x77, 0x08, 0x06), 0);
    assert_int_equal(r, 0x8877665544332211ull);
    /* breg7 8; deref_size 2 */
    assert_int_equal(RUN(&e, &r, 0x77, 0x08, 0x94, 0x02), 0);
    assert_int_equal(r, 0x2211);
}

static void
test_expr_big_endian_32_bit_reads_and_wraps(void **state)
{
    (void)state;
    struct env e;
    sw_addr r = 0;
    env_init(&e, 4, true);
    memcpy(e.mem.bytes, "\x12\x34\x56\x78\x9a\xbc\xde\xf0", 8);
    /* const2u 0x1000 (big-endian operand); deref */
    assert_int_equal(RUN(&e, &r, 0x0a, 0x10, 0x00, 0x06), 0);
    assert_int_equal(r, 0x12345678);
    /* const4u 0x1004 deref_size 2 */
    assert_int_equal(RUN(&e, &r, 0x0c, 0x00, 0x00, 0x10, 0x04, 0x94, 0x02), 0);
    assert_int_equal(r, 0x9abc);
    /* deref_size 8 on a 4-byte target is malformed. */
    assert_int_equal(RUN(&e, &r, 0x0a, 0x10, 0x00, 0x94, 0x08), SW_EPROTO);
    /* const4u 0xffffffff plus_uconst 2 wraps at 32 bits */
    assert_int_equal(RUN(&e, &r, 0x0c, 0xff, 0xff, 0xff, 0xff, 0x23, 0x02), 0);
    assert_int_equal(r, 1);
    /* lit0 lit1 minus is 0xffffffff, not 2^64-1 */
    assert_int_equal(RUN(&e, &r, 0x30, 0x31, 0x1c), 0);
    assert_int_equal(r, 0xffffffffu);
    /* shra keeps the 32-bit sign: 0x80000000 >> 4 */
    assert_int_equal(RUN(&e, &r, 0x0c, 0x80, 0, 0, 0, 0x34, 0x26), 0);
    assert_int_equal(r, 0xf8000000u);
    /* lt is signed at the target's width: -1 < 1 */
    assert_int_equal(RUN(&e, &r, 0x0c, 0xff, 0xff, 0xff, 0xff, 0x31, 0x2d), 0);
    assert_int_equal(r, 1);
}

static void
test_expr_unreadable_memory_returns_the_readers_code(void **state)
{
    (void)state;
    struct env e;
    sw_addr r = 0;
    env_init(&e, 8, false);
    assert_int_equal(RUN(&e, &r, 0x0b, 0x00, 0x20, 0x06), SW_EMEM); /* const2s 0x2000 deref */
    assert_non_null(strstr(e.err.msg, "0x2000"));
    e.mem.fail_code = SW_ETIMEDOUT;
    assert_int_equal(RUN(&e, &r, 0x0b, 0x00, 0x20, 0x06), SW_ETIMEDOUT);
}

static void
test_expr_stack_operations(void **state)
{
    (void)state;
    struct env e;
    sw_addr r = 0;
    env_init(&e, 8, false);
    /* lit1 lit2 swap -> 2 1; minus -> 1 */
    assert_int_equal(RUN(&e, &r, 0x31, 0x32, 0x16, 0x1c), 0);
    assert_int_equal(r, 1);
    /* lit1 lit2 over -> 1 2 1; plus plus -> 4 */
    assert_int_equal(RUN(&e, &r, 0x31, 0x32, 0x14, 0x22, 0x22), 0);
    assert_int_equal(r, 4);
    /* lit1 lit2 lit3 rot -> 3 1 2; drop -> 3 1; minus -> 2 */
    assert_int_equal(RUN(&e, &r, 0x31, 0x32, 0x33, 0x17, 0x13, 0x1c), 0);
    assert_int_equal(r, 2);
    /* lit5 lit6 lit7 pick 2 -> 5 */
    assert_int_equal(RUN(&e, &r, 0x35, 0x36, 0x37, 0x15, 0x02), 0);
    assert_int_equal(r, 5);
    /* lit9 dup mul -> 81 */
    assert_int_equal(RUN(&e, &r, 0x39, 0x12, 0x1e), 0);
    assert_int_equal(r, 81);
    /* pick past the bottom */
    assert_int_equal(RUN(&e, &r, 0x31, 0x15, 0x01), SW_EPROTO);
}

static void
test_expr_arithmetic_and_comparisons(void **state)
{
    (void)state;
    struct env e;
    sw_addr r = 0;
    env_init(&e, 8, false);
    /* consts -7 lit2 div -> -3 (signed, truncating) */
    assert_int_equal(RUN(&e, &r, 0x11, 0x79, 0x32, 0x1b), 0);
    assert_int_equal((int64_t)r, -3);
    /* lit17 lit5 mod -> 2 */
    assert_int_equal(RUN(&e, &r, 0x41, 0x35, 0x1d), 0);
    assert_int_equal(r, 2);
    /* consts -5 abs -> 5; lit5 neg -> -5; lit0 not -> ~0 */
    assert_int_equal(RUN(&e, &r, 0x11, 0x7b, 0x19), 0);
    assert_int_equal(r, 5);
    assert_int_equal(RUN(&e, &r, 0x35, 0x1f), 0);
    assert_int_equal((int64_t)r, -5);
    assert_int_equal(RUN(&e, &r, 0x30, 0x20), 0);
    assert_int_equal(r, ~(sw_addr)0);
    /* lit12 lit10 and/or/xor */
    assert_int_equal(RUN(&e, &r, 0x3c, 0x3a, 0x1a), 0);
    assert_int_equal(r, 8);
    assert_int_equal(RUN(&e, &r, 0x3c, 0x3a, 0x21), 0);
    assert_int_equal(r, 14);
    assert_int_equal(RUN(&e, &r, 0x3c, 0x3a, 0x27), 0);
    assert_int_equal(r, 6);
    /* lit1 lit4 shl; consts -16 lit2 shr (logical); consts -16 lit2 shra */
    assert_int_equal(RUN(&e, &r, 0x31, 0x34, 0x24), 0);
    assert_int_equal(r, 16);
    assert_int_equal(RUN(&e, &r, 0x11, 0x70, 0x32, 0x25), 0);
    assert_int_equal(r, 0x3ffffffffffffffcull);
    assert_int_equal(RUN(&e, &r, 0x11, 0x70, 0x32, 0x26), 0);
    assert_int_equal((int64_t)r, -4);
    /* comparisons: eq ne lt gt le ge on 3, 4 */
    const uint8_t cmp_ops[] = { 0x29, 0x2e, 0x2d, 0x2b, 0x2c, 0x2a };
    const sw_addr want[] = { 0, 1, 1, 0, 1, 0 };
    for (size_t i = 0; i < sizeof cmp_ops; i++) {
        uint8_t x[] = { 0x33, 0x34, cmp_ops[i] };
        assert_int_equal(run(&e, x, sizeof x, &r), 0);
        assert_int_equal(r, want[i]);
    }
    /* division by zero */
    assert_int_equal(RUN(&e, &r, 0x31, 0x30, 0x1b), SW_EPROTO);
    assert_int_equal(RUN(&e, &r, 0x31, 0x30, 0x1d), SW_EPROTO);
}

static void
test_expr_skip_and_bra_branch(void **state)
{
    (void)state;
    struct env e;
    sw_addr r = 0;
    env_init(&e, 8, false);
    /* lit1 bra +1; lit7 (skipped); lit9 -> 9 */
    assert_int_equal(RUN(&e, &r, 0x31, 0x28, 0x01, 0x00, 0x37, 0x39), 0);
    assert_int_equal(r, 9);
    /* lit0 bra +1; lit7; -> 7 (not taken) */
    assert_int_equal(RUN(&e, &r, 0x30, 0x28, 0x01, 0x00, 0x37), 0);
    assert_int_equal(r, 7);
    /* skip +1; nop (skipped) ... lit3 nop -> 3 */
    assert_int_equal(RUN(&e, &r, 0x2f, 0x01, 0x00, 0xff, 0x33, 0x96), 0);
    assert_int_equal(r, 3);
    /* skip to past the end */
    assert_int_equal(RUN(&e, &r, 0x31, 0x2f, 0x05, 0x00), SW_EPROTO);
    /* skip before the start */
    assert_int_equal(RUN(&e, &r, 0x2f, 0xf0, 0xff), SW_EPROTO);
}

static void
test_expr_endless_branch_loop_is_bounded(void **state)
{
    (void)state;
    struct env e;
    sw_addr r = 0;
    env_init(&e, 8, false);
    /* lit1 bra -4: jumps back to itself forever */
    assert_int_equal(RUN(&e, &r, 0x31, 0x28, 0xfc, 0xff), SW_EPROTO);
    assert_non_null(strstr(e.err.msg, "operations"));
    /* skip -3: the same without a condition */
    assert_int_equal(RUN(&e, &r, 0x2f, 0xfd, 0xff), SW_EPROTO);
    /* lit1 dup bra: the stack fills before the step limit */
    assert_int_equal(RUN(&e, &r, 0x31, 0x12, 0x12, 0x28, 0xfb, 0xff), SW_EPROTO);
    assert_non_null(strstr(e.err.msg, "overflow"));
}

static void
test_expr_bad_opcode_is_eproto_naming_it(void **state)
{
    (void)state;
    struct env e;
    sw_addr r = 0;
    env_init(&e, 8, false);
    assert_int_equal(RUN(&e, &r, 0x31, 0xe0), SW_EPROTO); /* GNU_push_tls_address */
    assert_non_null(strstr(e.err.msg, "0xe0"));
    assert_non_null(strstr(e.err.msg, "offset 1"));
    assert_int_equal(RUN(&e, &r, 0x93, 0x08), SW_EPROTO); /* piece */
}

static void
test_expr_underflow_truncation_and_empty_fail(void **state)
{
    (void)state;
    struct env e;
    sw_addr r = 0;
    env_init(&e, 8, false);
    assert_int_equal(RUN(&e, &r, 0x22), SW_EPROTO); /* plus on nothing */
    assert_non_null(strstr(e.err.msg, "underflow"));
    assert_int_equal(RUN(&e, &r, 0x31, 0x13, 0x13), SW_EPROTO); /* drop twice */
    assert_int_equal(RUN(&e, &r, 0x06), SW_EPROTO);             /* deref on nothing */
    assert_int_equal(RUN(&e, &r, 0x0e, 0x01, 0x02), SW_EPROTO); /* const8u cut short */
    assert_int_equal(RUN(&e, &r, 0x10, 0x80), SW_EPROTO);       /* LEB128 cut short */
    assert_int_equal(RUN(&e, &r, 0x28, 0x00), SW_EPROTO);       /* bra operand cut short */
    assert_int_equal(run(&e, NULL, 0, &r), SW_EPROTO);          /* nothing at all */
    assert_non_null(strstr(e.err.msg, "no value"));
    /* without an error buffer the code alone comes back */
    e.ctx.err = NULL;
    assert_int_equal(RUN(&e, &r, 0x22), SW_EPROTO);
}

static void
test_expr_every_short_garbage_terminates(void **state)
{
    (void)state;
    /* Every 3-byte expression over a few interesting bytes: must return,
     * never read outside the expression (ASan watches). */
    static const uint8_t alphabet[] = { 0x03, 0x06, 0x0e, 0x10, 0x12, 0x15, 0x17, 0x28, 0x2f,
                                        0x31, 0x77, 0x80, 0x92, 0x94, 0x9c, 0xff, 0x00, 0xfd };
    struct env e;
    sw_addr r;
    env_init(&e, 8, false);
    sw_frame_set_reg(&e.frame, 7, 0x1000);
    const size_t n = sizeof alphabet;
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b < n; b++)
            for (size_t c = 0; c < n; c++) {
                uint8_t *x = malloc(3);
                assert_non_null(x);
                x[0] = alphabet[a];
                x[1] = alphabet[b];
                x[2] = alphabet[c];
                int rc = sw_dwarf_expr_eval(&e.ctx, x, 3, (a & 1) != 0, 0x1000, &r);
                assert_true(rc == 0 || rc == SW_EPROTO || rc == SW_EMEM || rc == SW_ENOREG);
                free(x);
            }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expr_literals_and_plus),
        cmocka_unit_test(test_expr_x86_64_plt_cfa_before_and_after_the_push),
        cmocka_unit_test(test_expr_bregx_and_missing_register_is_enoreg),
        cmocka_unit_test(test_expr_reg_is_its_value_and_must_be_last),
        cmocka_unit_test(test_expr_push_cfa_and_call_frame_cfa),
        cmocka_unit_test(test_expr_deref_reads_target_words_little_endian),
        cmocka_unit_test(test_expr_big_endian_32_bit_reads_and_wraps),
        cmocka_unit_test(test_expr_unreadable_memory_returns_the_readers_code),
        cmocka_unit_test(test_expr_stack_operations),
        cmocka_unit_test(test_expr_arithmetic_and_comparisons),
        cmocka_unit_test(test_expr_skip_and_bra_branch),
        cmocka_unit_test(test_expr_endless_branch_loop_is_bounded),
        cmocka_unit_test(test_expr_bad_opcode_is_eproto_naming_it),
        cmocka_unit_test(test_expr_underflow_truncation_and_empty_fail),
        cmocka_unit_test(test_expr_every_short_garbage_terminates),
    };
    return cmocka_run_group_tests_name("dwarf_expr", tests, NULL, NULL);
}
