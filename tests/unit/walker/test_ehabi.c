/* tests/unit/walker/test_ehabi.c -- the EHABI index and unwind opcodes on recorded tables.
 *
 * The .ARM.exidx and .ARM.extab bytes below are build/fixtures/cortexm/mps2-an385-O2-exidx.elf's
 * (arm-none-eabi-gcc 12.2 -O2 -funwind-tables, GNU ld 2.40, which merged the entries of
 * functions with the same opcodes and ended the table with EXIDX_CANTUNWIND); the stack words
 * are made up.  Opcodes the fixture has none of are checked one by one against IHI0038 10.3.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "walker/steppers/ehabi_table.h"

#define EXIDX_ADDR 0x1bcu
#define EXTAB_ADDR 0x174u

static const uint8_t exidx[] = {
    0xa8, 0xfe, 0xff, 0x7f, 0xb0, 0xb0, 0xb0, 0x80, 0xac, 0xfe, 0xff, 0x7f, 0xac, 0xff, 0xff,
    0x7f, 0xb8, 0xfe, 0xff, 0x7f, 0xb0, 0xff, 0xff, 0x7f, 0xc4, 0xfe, 0xff, 0x7f, 0xb0, 0xb0,
    0xb0, 0x80, 0xec, 0xfe, 0xff, 0x7f, 0xac, 0xff, 0xff, 0x7f, 0xf4, 0xfe, 0xff, 0x7f, 0xb0,
    0xff, 0xff, 0x7f, 0x00, 0xff, 0xff, 0x7f, 0xb0, 0xb0, 0xb0, 0x80, 0x28, 0xff, 0xff, 0x7f,
    0xac, 0xff, 0xff, 0x7f, 0x34, 0xff, 0xff, 0x7f, 0xb0, 0xff, 0xff, 0x7f, 0x40, 0xff, 0xff,
    0x7f, 0xb0, 0xb0, 0xa8, 0x80, 0x60, 0xff, 0xff, 0x7f, 0x01, 0x00, 0x00, 0x00,
};
static const uint8_t extab[] = {
    0x08, 0xb1, 0x01, 0x81, 0xb0, 0xb0, 0x00, 0x84, 0x00, 0x00, 0x00, 0x00, 0x08, 0xb1, 0x01,
    0x81, 0xb0, 0xb0, 0x00, 0x84, 0x00, 0x00, 0x00, 0x00, 0x08, 0xb1, 0x01, 0x81, 0xb0, 0xb0,
    0x00, 0x84, 0x00, 0x00, 0x00, 0x00, 0x08, 0xb1, 0x01, 0x81, 0xb0, 0xb0, 0x00, 0x84, 0x00,
    0x00, 0x00, 0x00, 0x08, 0xb1, 0x01, 0x81, 0xb0, 0xb0, 0x00, 0x84, 0x00, 0x00, 0x00, 0x00,
    0x08, 0xb1, 0x01, 0x81, 0xb0, 0xb0, 0x00, 0x84, 0x00, 0x00, 0x00, 0x00,
};

/* A file image: BYTES at link-time address BASE. */
struct image {
    const uint8_t *bytes;
    size_t len;
    sw_addr base;
};

static int
image_read(void *arg, sw_addr vaddr, void *buf, size_t len)
{
    const struct image *im = arg;
    if (vaddr < im->base || vaddr - im->base + len > im->len)
        return SW_EMEM;
    memcpy(buf, im->bytes + (vaddr - im->base), len);
    return 0;
}

static struct image fixture_extab = { extab, sizeof extab, EXTAB_ADDR };

static struct sw_ehabi_table
fixture_table(void)
{
    return (struct sw_ehabi_table){ .exidx = exidx,
                                    .exidx_len = sizeof exidx,
                                    .exidx_addr = EXIDX_ADDR,
                                    .read = image_read,
                                    .arg = &fixture_extab };
}

/* A stack of 32 words at STACK_BASE; a word outside it cannot be read. */
#define STACK_BASE 0x20000f00u
static uint32_t stack[32];

static int
stack_read(void *arg, sw_addr addr, uint32_t *val)
{
    (void)arg;
    if (addr < STACK_BASE || addr + 4 > STACK_BASE + sizeof stack || (addr & 3) != 0)
        return SW_EMEM;
    *val = stack[(addr - STACK_BASE) / 4];
    return 0;
}

static struct sw_ehabi_vrs
vrs_at(uint32_t sp, uint32_t lr)
{
    struct sw_ehabi_vrs v;
    memset(&v, 0, sizeof v);
    v.r[13] = sp;
    v.r[14] = lr;
    v.known = 1u << 13 | 1u << 14;
    return v;
}

static void
test_lookup_finds_inline_and_extab_entries(void **state)
{
    (void)state;
    struct sw_ehabi_table t = fixture_table();
    struct sw_ehabi_entry e;
    struct sw_errbuf err;

    /* p_leaf (0x64): inline su16, "finish" three times. */
    assert_int_equal(sw_ehabi_lookup(&t, 0x66, &e, &err), 0);
    assert_int_equal(e.fn_start, 0x64);
    assert_int_equal(e.fn_end, 0x70);
    assert_false(e.cantunwind);
    assert_int_equal(e.personality, 0);
    assert_int_equal(e.nops, 3);
    assert_memory_equal(e.ops, ((uint8_t[]){ 0xb0, 0xb0, 0xb0 }), 3);

    /* p1 (0x70): lu16 in .ARM.extab with one more word: pop {r3}, pop {r14}, finish. */
    assert_int_equal(sw_ehabi_lookup(&t, 0x75, &e, &err), 0);
    assert_int_equal(e.fn_start, 0x70);
    assert_int_equal(e.personality, 1);
    assert_int_equal(e.nops, 6);
    assert_memory_equal(e.ops, ((uint8_t[]){ 0xb1, 0x08, 0x84, 0x00, 0xb0, 0xb0 }), 6);

    /* h_pend (0xa8) has no entry of its own: h_leaf's (0x98), merged by the linker. */
    assert_int_equal(sw_ehabi_lookup(&t, 0xb3, &e, &err), 0);
    assert_int_equal(e.fn_start, 0x98);
    assert_int_equal(e.fn_end, 0xc8);

    /* main (0x144): inline pop {r4, r14}; its end is EXIDX_CANTUNWIND, the table's last. */
    assert_int_equal(sw_ehabi_lookup(&t, 0x163, &e, &err), 0);
    assert_int_equal(e.fn_start, 0x144);
    assert_memory_equal(e.ops, ((uint8_t[]){ 0xa8, 0xb0, 0xb0 }), 3);
    assert_int_equal(sw_ehabi_lookup(&t, 0x16c, &e, &err), 0);
    assert_true(e.cantunwind);
    assert_int_equal(e.fn_end, SW_ADDR_MAX);

    /* Reset_Handler and spin_odd (assembly, below the first entry): none. */
    assert_int_equal(sw_ehabi_lookup(&t, 0x50, &e, &err), SW_ENOCFI);
}

static void
test_lookup_refuses_malformed_tables(void **state)
{
    (void)state;
    struct sw_ehabi_table t = fixture_table();
    struct sw_ehabi_entry e;
    struct sw_errbuf err;
    uint8_t bad[16];

    /* A function offset with bit 31 set. */
    memcpy(bad, exidx, sizeof bad);
    bad[11] = 0xff;
    t.exidx = bad;
    t.exidx_len = sizeof bad;
    assert_int_equal(sw_ehabi_lookup(&t, 0x80, &e, &err), SW_EBADELF);
    assert_non_null(strstr(err.msg, "bit 31"));

    /* An .ARM.extab entry outside the file. */
    memcpy(bad, exidx, sizeof bad);
    bad[12] = 0x00, bad[13] = 0x00, bad[14] = 0x10, bad[15] = 0x00;
    assert_int_equal(sw_ehabi_lookup(&t, 0x80, &e, &err), SW_EBADELF);
    assert_non_null(strstr(err.msg, "not in the file"));

    /* An inline word that is not personality routine 0. */
    memcpy(bad, exidx, sizeof bad);
    bad[15] = 0x81;
    assert_int_equal(sw_ehabi_lookup(&t, 0x80, &e, &err), SW_EBADELF);
    /* A compact model index past ARM's three. */
    uint8_t ext[8] = { 0xb0, 0xb0, 0x00, 0x83, 0, 0, 0, 0 };
    struct image im = { ext, sizeof ext, 0x1000 };
    uint8_t one[8] = { 0, 0, 0, 0 };
    /* fn at 0x100 from 0x2000: prel31 -0x1f00; extab at 0x1000 from 0x2004: -0x1004. */
    uint32_t w0 = (uint32_t)(0x100 - 0x2000) & 0x7fffffffu,
             w1 = (uint32_t)(0x1000 - 0x2004) & 0x7fffffffu;
    for (int i = 0; i < 4; i++)
        one[i] = (uint8_t)(w0 >> (8 * i)), one[4 + i] = (uint8_t)(w1 >> (8 * i));
    t = (struct sw_ehabi_table){
        .exidx = one, .exidx_len = 8, .exidx_addr = 0x2000, .read = image_read, .arg = &im
    };
    assert_int_equal(sw_ehabi_lookup(&t, 0x104, &e, &err), SW_EBADELF);
    assert_non_null(strstr(err.msg, "index 3"));
}

static void
test_lookup_reads_the_generic_model_as_gcc_writes_it(void **state)
{
    (void)state;
    /* A personality routine's address (prel31, bit 31 clear), then the word count in bits
     * 31-24 and three opcodes, then one more word: vsp = r7, pop {r4-r7, r14}, finish. */
    uint8_t ext[12] = { 0x00, 0x10, 0x00, 0x00, 0xb0, 0xab, 0x97, 0x01, 0xb0, 0xb0, 0xb0, 0xb0 };
    struct image im = { ext, sizeof ext, 0x1000 };
    uint8_t one[8];
    uint32_t w0 = (uint32_t)(0x100 - 0x2000) & 0x7fffffffu,
             w1 = (uint32_t)(0x1000 - 0x2004) & 0x7fffffffu;
    for (int i = 0; i < 4; i++)
        one[i] = (uint8_t)(w0 >> (8 * i)), one[4 + i] = (uint8_t)(w1 >> (8 * i));
    struct sw_ehabi_table t = {
        .exidx = one, .exidx_len = 8, .exidx_addr = 0x2000, .read = image_read, .arg = &im
    };
    struct sw_ehabi_entry e;
    struct sw_errbuf err;
    assert_int_equal(sw_ehabi_lookup(&t, 0x104, &e, &err), 0);
    assert_int_equal(e.personality, 3);
    assert_int_equal(e.nops, 7);
    assert_memory_equal(e.ops, ((uint8_t[]){ 0x97, 0xab, 0xb0, 0xb0, 0xb0, 0xb0, 0xb0 }), 7);
}

static void
test_execute_o2_frame_pops_r3_and_lr(void **state)
{
    (void)state;
    /* p1 at -O2: push {r3, lr} (r3 only keeps the stack 8-byte aligned). */
    static const uint8_t ops[] = { 0xb1, 0x08, 0x84, 0x00, 0xb0, 0xb0 };
    struct sw_ehabi_vrs v = vrs_at(STACK_BASE + 0x78, 0x65);
    struct sw_errbuf err;
    stack[0x78 / 4] = 0x1234;
    stack[0x7c / 4] = 0x8b;
    assert_int_equal(sw_ehabi_execute(ops, sizeof ops, &v, stack_read, NULL, &err), 0);
    assert_int_equal(v.r[13], STACK_BASE + 0x80);
    assert_int_equal(v.r[15], 0x8b);
    assert_int_equal(v.r[3], 0x1234);
    assert_true(v.popped & (1u << 15));
    assert_int_equal(v.addr[15], STACK_BASE + 0x7c);
}

static void
test_execute_o0_frame_restores_vsp_from_r7(void **state)
{
    (void)state;
    /* p1 at -O0: push {r7, lr}; add r7, sp, #0: vsp = r7; pop {r7, r14}. */
    static const uint8_t ops[] = { 0x97, 0x84, 0x08 };
    struct sw_ehabi_vrs v = vrs_at(STACK_BASE + 0x10, 0x99);
    struct sw_errbuf err;
    /* r7 not known yet: the stepper fills it in and runs again. */
    assert_int_equal(sw_ehabi_execute(ops, sizeof ops, &v, stack_read, NULL, &err), SW_ENOCFI);
    assert_non_null(strstr(err.msg, "r7"));
    v = vrs_at(STACK_BASE + 0x10, 0x99);
    v.r[7] = STACK_BASE + 0x20;
    v.known |= 1u << 7;
    stack[0x20 / 4] = STACK_BASE + 0x40;
    stack[0x24 / 4] = 0xc9;
    assert_int_equal(sw_ehabi_execute(ops, sizeof ops, &v, stack_read, NULL, &err), 0);
    assert_int_equal(v.r[13], STACK_BASE + 0x28);
    assert_int_equal(v.r[7], STACK_BASE + 0x40);
    assert_int_equal(v.r[15], 0xc9);
    /* A leaf: no opcodes at all, the caller is at LR with the same SP. */
    v = vrs_at(STACK_BASE, 0x77);
    assert_int_equal(sw_ehabi_execute(ops, 0, &v, stack_read, NULL, &err), 0);
    assert_int_equal(v.r[15], 0x77);
    assert_int_equal(v.r[13], STACK_BASE);
    assert_false(v.popped & (1u << 15));
}

static void
test_execute_every_vsp_and_vfp_form(void **state)
{
    (void)state;
    struct sw_errbuf err;
    static const struct {
        uint8_t ops[4];
        size_t n;
        uint32_t delta;
    } forms[] = {
        { { 0x3f }, 1, 0x100 },                           /* vsp += 0xfc + 4 */
        { { 0x41 }, 1, (uint32_t)-8 },                    /* vsp -= 8 */
        { { 0xb2, 0x81, 0x01 }, 3, 0x204 + (0x81 << 2) }, /* uleb128 0x81 */
        { { 0xb3, 0x12 }, 2, 8 * 3 + 4 },                 /* D1-D3 by FSTMFDX */
        { { 0xba }, 1, 8 * 3 + 4 },                       /* D8-D10 by FSTMFDX */
        { { 0xc2 }, 1, 8 * 3 },                           /* wR10-wR12 */
        { { 0xc6, 0x01 }, 2, 8 * 2 },                     /* wR0-wR1 */
        { { 0xc7, 0x05 }, 2, 4 * 2 },                     /* wCGR0, wCGR2 */
        { { 0xc8, 0x01 }, 2, 8 * 2 },                     /* D16-D17 by VPUSH */
        { { 0xc9, 0x23 }, 2, 8 * 4 },                     /* D2-D5 by VPUSH */
        { { 0xd7 }, 1, 8 * 8 },                           /* D8-D15 by VPUSH */
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        struct sw_ehabi_vrs v = vrs_at(STACK_BASE + 0x40, 0x101);
        assert_int_equal(sw_ehabi_execute(forms[i].ops, forms[i].n, &v, stack_read, NULL, &err), 0);
        assert_int_equal(v.r[13], (uint32_t)(STACK_BASE + 0x40 + forms[i].delta));
        assert_int_equal(v.r[15], 0x101);
    }
}

static void
test_execute_pops_under_masks(void **state)
{
    (void)state;
    struct sw_errbuf err;
    for (unsigned i = 0; i < 32; i++)
        stack[i] = 0x1000 + i;
    /* pop {r4-r6, r14} (0xaa), then {r0, r2} (0xb1 0x05), then {r8, r15} (0x88 0x10). */
    static const uint8_t ops[] = { 0xaa, 0xb1, 0x05, 0x88, 0x10 };
    struct sw_ehabi_vrs v = vrs_at(STACK_BASE, 0x1);
    assert_int_equal(sw_ehabi_execute(ops, sizeof ops, &v, stack_read, NULL, &err), 0);
    assert_int_equal(v.r[4], 0x1000);
    assert_int_equal(v.r[6], 0x1002);
    assert_int_equal(v.r[14], 0x1003);
    assert_int_equal(v.r[0], 0x1004);
    assert_int_equal(v.r[2], 0x1005);
    assert_int_equal(v.r[8], 0x1006);
    assert_int_equal(v.r[15], 0x1007); /* popped: not LR */
    assert_int_equal(v.r[13], STACK_BASE + 32);
    /* SP in the mask: the popped value is the vsp after the pop. */
    static const uint8_t sp_ops[] = { 0x80, 0x60 };  /* pop {r9, r10}... */
    static const uint8_t sp_ops2[] = { 0x82, 0x01 }; /* pop {r4, r13} */
    v = vrs_at(STACK_BASE, 0x1);
    assert_int_equal(sw_ehabi_execute(sp_ops, sizeof sp_ops, &v, stack_read, NULL, &err), 0);
    assert_int_equal(v.r[13], STACK_BASE + 8);
    stack[1] = STACK_BASE + 0x60;
    v = vrs_at(STACK_BASE, 0x1);
    assert_int_equal(sw_ehabi_execute(sp_ops2, sizeof sp_ops2, &v, stack_read, NULL, &err), 0);
    assert_int_equal(v.r[4], 0x1000);
    assert_int_equal(v.r[13], STACK_BASE + 0x60);
}

static void
test_execute_refuses_what_it_must(void **state)
{
    (void)state;
    struct sw_errbuf err;
    static const struct {
        uint8_t ops[3];
        size_t n;
        const char *why;
    } bad[] = {
        { { 0x80, 0x00 }, 2, "refuse to unwind" },
        { { 0x9d }, 1, "reserved" },
        { { 0x9f }, 1, "reserved" },
        { { 0xb1, 0x00 }, 2, "spare" },
        { { 0xb1, 0x10 }, 2, "spare" },
        { { 0xb4 }, 1, "spare" },
        { { 0xc7, 0x00 }, 2, "spare" },
        { { 0xca }, 1, "spare" },
        { { 0xd8 }, 1, "spare" },
        { { 0xff }, 1, "spare" },
        { { 0x84 }, 1, "missing" },
        { { 0xb2, 0x80 }, 2, "truncated" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct sw_ehabi_vrs v = vrs_at(STACK_BASE, 0x1);
        assert_int_equal(sw_ehabi_execute(bad[i].ops, bad[i].n, &v, stack_read, NULL, &err),
                         SW_ENOCFI);
        assert_non_null(strstr(err.msg, bad[i].why));
    }
    /* A popped word that cannot be read: the read's code, the address named. */
    static const uint8_t pop[] = { 0xa8 };
    struct sw_ehabi_vrs v = vrs_at(0x10, 0x1);
    assert_int_equal(sw_ehabi_execute(pop, sizeof pop, &v, stack_read, NULL, &err), SW_EMEM);
    assert_non_null(strstr(err.msg, "0x10"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup_finds_inline_and_extab_entries),
        cmocka_unit_test(test_lookup_refuses_malformed_tables),
        cmocka_unit_test(test_lookup_reads_the_generic_model_as_gcc_writes_it),
        cmocka_unit_test(test_execute_o2_frame_pops_r3_and_lr),
        cmocka_unit_test(test_execute_o0_frame_restores_vsp_from_r7),
        cmocka_unit_test(test_execute_every_vsp_and_vfp_form),
        cmocka_unit_test(test_execute_pops_under_masks),
        cmocka_unit_test(test_execute_refuses_what_it_must),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
