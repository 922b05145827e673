/* tests/unit/arch/test_arch_armv7m.c -- the ARMv7-M table: lookups, AADWARF32 numbers, the
 * names QEMU's org.gnu.gdb.arm.m-profile feature gives, and the Thumb bit of return addresses.
 * Exception frames are tests/unit/walker/test_excframe.c's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rspwalk/rspwalk.h"

static void
test_armv7m_is_found_by_elf_tdesc_and_name(void **state)
{
    (void)state;
    assert_ptr_equal(arch_by_elf(40, 1, 1), &arch_armv7m); /* EM_ARM, ELFCLASS32, LSB */
    assert_null(arch_by_elf(40, 1, 2));                    /* BE8: not a target */
    assert_ptr_equal(arch_by_tdesc("arm"), &arch_armv7m);  /* QEMU's <architecture> */
    assert_ptr_equal(arch_by_name("armv7m"), &arch_armv7m);
    bool listed = false;
    for (const struct arch_desc *const *a = arch_all(); *a; a++)
        listed |= *a == &arch_armv7m;
    assert_true(listed);
    assert_int_equal(arch_armv7m.word_size, 4);
    assert_int_equal(arch_armv7m.cs_arch, 0);           /* CS_ARCH_ARM (capstone 4) */
    assert_int_equal(arch_armv7m.cs_mode, 0x10 | 0x20); /* THUMB | MCLASS */
}

static void
test_armv7m_rows_carry_aadwarf32_numbers_and_m_profile_names(void **state)
{
    (void)state;
    const struct arch_desc *a = &arch_armv7m;
    /* org.gnu.gdb.arm.m-profile: r0-r12, sp, lr, pc, xpsr; m-system: msp, psp */
    static const char *const names[] = { "r0", "r1", "r2",   "r3",  "r4",  "r5",  "r6",
                                         "r7", "r8", "r9",   "r10", "r11", "r12", "sp",
                                         "lr", "pc", "xpsr", "msp", "psp" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        assert_non_null(arch_reg_by_name(a, names[i]));
    for (int dw = 0; dw <= 15; dw++)
        assert_int_equal(arch_reg_by_dwarf(a, dw)->gdb, dw);
    assert_string_equal(arch_dwarf_name(a, a->dw_sp), "sp");
    assert_string_equal(arch_dwarf_name(a, a->dw_ra), "lr");
    assert_string_equal(arch_dwarf_name(a, a->dw_pc), "pc");
    assert_string_equal(arch_dwarf_name(a, a->dw_fp), "r7"); /* GCC's Thumb frame pointer */
    assert_true(a->dw_max <= SW_FRAME_MAX_REGS);
    for (size_t i = 0; i < a->nregs; i++) {
        assert_true(a->regs[i].dwarf < a->dw_max);
        /* the pseudo numbers sit in 16-63, which AADWARF32 leaves unassigned */
        assert_true(a->regs[i].dwarf < 64);
    }
}

static void
test_armv7m_return_addresses_lose_the_thumb_bit(void **state)
{
    (void)state;
    assert_int_equal(arch_armv7m.ra_code(0x199), 0x198);
    assert_int_equal(arch_armv7m.ra_code(0x198), 0x198);
    assert_int_equal(arch_armv7m.ra_code(0xfffffff9), 0xfffffff9);
    assert_true(arch_armv7m.exc_return(0xfffffff9));
    assert_false(arch_armv7m.exc_return(0xfffffffe)); /* LR out of reset, less its bit 0 */
    assert_null(arch_x86_64.ra_code);
    assert_null(arch_aarch64.exc_return);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_armv7m_is_found_by_elf_tdesc_and_name),
        cmocka_unit_test(test_armv7m_rows_carry_aadwarf32_numbers_and_m_profile_names),
        cmocka_unit_test(test_armv7m_return_addresses_lose_the_thumb_bit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
