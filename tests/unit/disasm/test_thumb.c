/* tests/unit/disasm/test_thumb.c -- the Thumb-2 classifier (disasm/thumb.c) on GCC's prologue,
 * epilogue and call forms.
 *
 * The bytes were assembled once with arm-none-eabi-as -mcpu=cortex-m4 -mthumb (vpush needs an
 * FPU) and copied from objdump -d; each case names the instruction.  Needs capstone (loaded at
 * run time): without it the test fails, as every analysis test does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rspwalk/rspwalk.h"
#include "disasm/disasm.h"

#define AT 0x1000u

static struct sw_insn
dis(const uint8_t *code, size_t len)
{
    struct sw_disasm *d = sw_disasm_new(&arch_armv7m);
    struct sw_insn i;
    if (d == NULL)
        fail_msg("no Thumb decoder (capstone missing?)");
    memset(&i, 0, sizeof i);
    if (sw_disasm_one(d, code, len, AT, &i) != 0)
        fail_msg("capstone did not decode %02x %02x", code[0], code[1]);
    sw_disasm_free(d);
    return i;
}

#define DIS(...) dis((const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ }))

static void
test_thumb_pushes_and_frame_pointer(void **state)
{
    (void)state;
    struct sw_insn i = DIS(0x80, 0xb5); /* push {r7, lr} */
    assert_int_equal(i.len, 2);
    assert_int_equal(i.sp, SW_SP_ADD);
    assert_int_equal(i.sp_delta, -8);
    assert_int_equal(i.nstores, 2);
    assert_int_equal(i.stores[0].reg, SW_IREG_FP);
    assert_int_equal(i.stores[0].off, 0);
    assert_int_equal(i.stores[1].reg, SW_IREG_LR);
    assert_int_equal(i.stores[1].off, 4);

    i = DIS(0xf0, 0xb5); /* push {r4, r5, r6, r7, lr} */
    assert_int_equal(i.sp_delta, -20);
    assert_int_equal(i.stores[0].off, 12);
    assert_int_equal(i.stores[1].off, 16);

    i = DIS(0x2d, 0xe9, 0xf0, 0x41); /* push.w {r4-r8, lr} (stmdb sp!) */
    assert_int_equal(i.len, 4);
    assert_int_equal(i.sp, SW_SP_ADD);
    assert_int_equal(i.sp_delta, -24);
    assert_int_equal(i.stores[1].reg, SW_IREG_LR);
    assert_int_equal(i.stores[1].off, 20);

    i = DIS(0x84, 0xb0); /* sub sp, #16 */
    assert_int_equal(i.sp, SW_SP_ADD);
    assert_int_equal(i.sp_delta, -16);
    i = DIS(0xad, 0xf5, 0x80, 0x6d); /* sub.w sp, sp, #1024 */
    assert_int_equal(i.sp_delta, -1024);
    i = DIS(0x02, 0xaf); /* add r7, sp, #8 */
    assert_int_equal(i.fp, SW_FP_SET);
    assert_int_equal(i.fp_off, 8);
    i = DIS(0x6f, 0x46); /* mov r7, sp */
    assert_int_equal(i.fp, SW_FP_SET);
    assert_int_equal(i.fp_off, 0);
    i = DIS(0xbd, 0x46); /* mov sp, r7 */
    assert_int_equal(i.sp, SW_SP_FROM_FP);
    assert_int_equal(i.sp_delta, 0);
    i = DIS(0x2d, 0xed, 0x04, 0x8b); /* vpush {d8-d9} */
    assert_int_equal(i.sp_delta, -16);
    i = DIS(0xbd, 0xec, 0x04, 0x8b); /* vpop {d8-d9} */
    assert_int_equal(i.sp_delta, 16);
    i = DIS(0x4d, 0xf8, 0x04, 0xed); /* str.w lr, [sp, #-4]! */
    assert_int_equal(i.sp_delta, -4);
    assert_int_equal(i.stores[0].reg, SW_IREG_LR);
    assert_int_equal(i.stores[0].off, 0);
    i = DIS(0x01, 0x9f); /* ldr r7, [sp, #4] */
    assert_int_equal(i.fp, SW_FP_LOAD);
    assert_int_equal(i.loads[0].off, 4);
}

static void
test_thumb_returns_calls_and_jumps(void **state)
{
    (void)state;
    struct sw_insn i = DIS(0x80, 0xbd); /* pop {r7, pc} */
    assert_int_equal(i.flow, SW_FLOW_RET);
    assert_int_equal(i.sp_delta, 8);
    assert_int_equal(i.loads[0].reg, SW_IREG_FP);
    assert_int_equal(i.loads[0].off, -8);
    i = DIS(0xbd, 0xe8, 0xf0, 0x81); /* ldmia.w sp!, {r4-r8, pc} */
    assert_int_equal(i.flow, SW_FLOW_RET);
    assert_int_equal(i.sp_delta, 24);
    i = DIS(0x90, 0xbc); /* pop {r4, r7} */
    assert_int_equal(i.flow, SW_FLOW_NEXT);
    assert_int_equal(i.fp, SW_FP_LOAD);
    i = DIS(0x70, 0x47); /* bx lr */
    assert_int_equal(i.flow, SW_FLOW_RET);
    i = DIS(0x5d, 0xf8, 0x04, 0xfb); /* ldr.w pc, [sp], #4 */
    assert_int_equal(i.flow, SW_FLOW_RET);
    assert_int_equal(i.sp_delta, 4);
    i = DIS(0x00, 0xf0, 0x7e, 0xf8); /* bl .+0x100 */
    assert_int_equal(i.flow, SW_FLOW_CALL);
    assert_true(i.has_target);
    assert_int_equal(i.target, AT + 0x100);
    assert_true(i.writes[SW_IREG_LR]);
    i = DIS(0x98, 0x47); /* blx r3 */
    assert_int_equal(i.flow, SW_FLOW_CALL);
    assert_false(i.has_target);
    i = DIS(0x0e, 0xe0); /* b.n .+0x20 */
    assert_int_equal(i.flow, SW_FLOW_JUMP);
    assert_int_equal(i.target, AT + 0x20);
    i = DIS(0x0e, 0xd0); /* beq.n .+0x20 */
    assert_int_equal(i.flow, SW_FLOW_CJUMP);
    assert_int_equal(i.cc, SW_CC_EQ);
    assert_int_equal(i.target, AT + 0x20);
    i = DIS(0x30, 0xb1); /* cbz r0, .+0x10 */
    assert_int_equal(i.flow, SW_FLOW_CJUMP);
    assert_int_equal(i.target, AT + 0x10);
    i = DIS(0x18, 0x47); /* bx r3: a tail call */
    assert_int_equal(i.flow, SW_FLOW_JUMP);
    assert_false(i.has_target);
}

static void
test_thumb_it_block_is_a_conditional_jump_past_it(void **state)
{
    (void)state;
    /* it eq; popeq {r4, pc}: the path that skips the block goes on at +4 */
    struct sw_insn i = DIS(0x08, 0xbf, 0x10, 0xbd);
    assert_int_equal(i.flow, SW_FLOW_CJUMP);
    assert_int_equal(i.target, AT + 4);
    /* ite eq; str.w lr, [sp, #-4]!; pop {r7, pc}: 4 + 2 bytes of block */
    i = DIS(0x0c, 0xbf, 0x4d, 0xf8, 0x04, 0xed, 0x80, 0xbd);
    assert_int_equal(i.flow, SW_FLOW_CJUMP);
    assert_int_equal(i.target, AT + 8);
}

static void
test_thumb_constants_and_register_frames(void **state)
{
    (void)state;
    struct sw_insn i = DIS(0x41, 0xf2, 0x34, 0x23); /* movw r3, #0x1234 */
    assert_int_equal(i.k_op, SW_K_SET);
    assert_int_equal(i.k_imm, 0x1234);
    i = DIS(0xc5, 0xf2, 0x78, 0x63); /* movt r3, #0x5678 */
    assert_int_equal(i.k_op, SW_K_INSERT);
    assert_int_equal(i.k_imm, 0x5678);
    assert_int_equal(i.k_shift, 16);
    i = DIS(0xad, 0xeb, 0x03, 0x0d); /* sub.w sp, sp, r3 */
    assert_int_equal(i.sp, SW_SP_ADD_REG);
    assert_true(i.sp_reg_neg);
    i = DIS(0x48, 0x1c); /* adds r0, r1, #1 */
    assert_int_equal(i.sp, SW_SP_KEEP);
    assert_int_equal(i.fp, SW_FP_KEEP);
    assert_int_equal(i.flow, SW_FLOW_NEXT);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thumb_pushes_and_frame_pointer),
        cmocka_unit_test(test_thumb_returns_calls_and_jumps),
        cmocka_unit_test(test_thumb_it_block_is_a_conditional_jump_past_it),
        cmocka_unit_test(test_thumb_constants_and_register_frames),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
