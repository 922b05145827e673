/* tests/unit/walker/test_wanderer_thumb.c -- the wanderer's Thumb-2 jump encodings
 * (walker/steppers/wanderer_thumb.c) on halfwords copied from objdump -d of
 * build/fixtures/cortexm/mps2-an385-O2.elf and of arm-none-eabi-as output.  The calls before
 * return addresses and EXC_RETURN values are walked in tests/integration/run-cortexm.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rspwalk/rspwalk.h"
#include "walker/steppers/wanderer_internal.h"

static void
test_thumb_jumps_decode_with_their_destinations(void **state)
{
    (void)state;
    const struct sw_wand_family *f = &sw_wand_thumb;
    sw_addr dest = 0;
    /* ca: f7ff bfe1  b.w 90 <h_leaf> (h1's tail call) */
    static const uint8_t bw[] = { 0xff, 0xf7, 0xe1, 0xbf };
    assert_true(f->jump_at(&arch_armv7m, bw, sizeof bw, 0xca, &dest));
    assert_int_equal(dest, 0x90);
    /* 36: e00e  b.n 56 */
    static const uint8_t bn[] = { 0x0e, 0xe0 };
    assert_true(f->jump_at(&arch_armv7m, bn, sizeof bn, 0x36, &dest));
    assert_int_equal(dest, 0x56);
    /* a backward b.n: 5a: e7fd  b.n 58 */
    static const uint8_t back[] = { 0xfd, 0xe7 };
    assert_true(f->jump_at(&arch_armv7m, back, sizeof back, 0x5a, &dest));
    assert_int_equal(dest, 0x58);
    /* not jumps: bl (c2: f7ff ffed, a call), bx lr, push {r3, lr}, half of a b.w */
    static const uint8_t bl[] = { 0xff, 0xf7, 0xed, 0xff };
    static const uint8_t bxlr[] = { 0x70, 0x47 };
    static const uint8_t push[] = { 0x08, 0xb5 };
    dest = 0;
    assert_false(f->jump_at(&arch_armv7m, bl, sizeof bl, 0xc2, &dest));
    assert_false(f->jump_at(&arch_armv7m, bxlr, sizeof bxlr, 0, &dest));
    assert_false(f->jump_at(&arch_armv7m, push, sizeof push, 0, &dest));
    assert_false(f->jump_at(&arch_armv7m, bw, 2, 0xca, &dest));
    assert_int_equal(dest, 0);
    assert_int_equal(f->insn_align, 2);
    assert_int_equal(f->sp_align, 8);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thumb_jumps_decode_with_their_destinations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
