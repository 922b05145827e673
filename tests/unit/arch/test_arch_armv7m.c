/* tests/unit/arch/test_arch_armv7m.c -- the ARMv7-M table: lookups, AADWARF32 numbers, the
 * names QEMU's org.gnu.gdb.arm.m-profile feature gives, a recorded QEMU 7.2 g reply decoded
 * through its target.xml, and the Thumb bit of return addresses.
 * Exception frames are tests/unit/walker/test_excframe.c's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rspwalk/rsp.h"
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
    /* org.gnu.gdb.arm.m-profile: r0-r12, sp, lr, pc, xpsr; m-system: msp, psp; secext:
     * the ARMv8-M Security Extension's banked stack pointers */
    static const char *const names[] = { "r0",  "r1",     "r2",     "r3",    "r4",   "r5",
                                         "r6",  "r7",     "r8",     "r9",    "r10",  "r11",
                                         "r12", "sp",     "lr",     "pc",    "xpsr", "msp",
                                         "psp", "msp_ns", "psp_ns", "msp_s", "psp_s" };
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

/* qemu-system-arm 7.2 -M mps2-an385, build/fixtures/cortexm/mps2-an385.elf stopped at p_leaf
 * (PendSV over SysTick): target.xml, the annexes it includes and the g reply, as sent. */
static const char qemu72_target_xml[] =
    "<?xml version=\"1.0\"?><!DOCTYPE target SYSTEM \"gdb-target.dtd\"><target>"
    "<architecture>arm</architecture><xi:include href=\"arm-m-profile.xml\"/>"
    "<xi:include href=\"system-registers.xml\"/></target>";
static const char qemu72_m_profile_xml[] =
    "<?xml version=\"1.0\"?>\n<!DOCTYPE feature SYSTEM \"gdb-target.dtd\">\n"
    "<feature name=\"org.gnu.gdb.arm.m-profile\">\n"
    "<reg name=\"r0\" bitsize=\"32\"/><reg name=\"r1\" bitsize=\"32\"/>"
    "<reg name=\"r2\" bitsize=\"32\"/><reg name=\"r3\" bitsize=\"32\"/>"
    "<reg name=\"r4\" bitsize=\"32\"/><reg name=\"r5\" bitsize=\"32\"/>"
    "<reg name=\"r6\" bitsize=\"32\"/><reg name=\"r7\" bitsize=\"32\"/>"
    "<reg name=\"r8\" bitsize=\"32\"/><reg name=\"r9\" bitsize=\"32\"/>"
    "<reg name=\"r10\" bitsize=\"32\"/><reg name=\"r11\" bitsize=\"32\"/>"
    "<reg name=\"r12\" bitsize=\"32\"/><reg name=\"sp\" bitsize=\"32\" type=\"data_ptr\"/>"
    "<reg name=\"lr\" bitsize=\"32\"/><reg name=\"pc\" bitsize=\"32\" type=\"code_ptr\"/>"
    "<reg name=\"xpsr\" bitsize=\"32\" regnum=\"25\"/>\n</feature>\n";
/* QEMU 7.2 sends the M-profile system registers' feature empty: no msp, no psp. */
static const char qemu72_sysregs_xml[] =
    "<?xml version=\"1.0\"?><!DOCTYPE feature SYSTEM \"gdb-target.dtd\">"
    "<feature name=\"org.qemu.gdb.arm.sys.regs\"></feature>";
static const char qemu72_g[] = "64f00100000000000000001004ed00e0001000200000000000000000640f0020"
                               "0000000000000000000000000000000000000000640f0020a90000008e000000"
                               "0e000001";

static int
qemu72_annex(void *arg, const char *annex, char **data, size_t *len)
{
    (void)arg;
    const char *src = strcmp(annex, "arm-m-profile.xml") == 0      ? qemu72_m_profile_xml
                      : strcmp(annex, "system-registers.xml") == 0 ? qemu72_sysregs_xml
                                                                   : NULL;
    if (src == NULL)
        return SW_ENOENT;
    *len = strlen(src);
    *data = malloc(*len + 1);
    if (*data == NULL)
        return SW_ENOMEM;
    memcpy(*data, src, *len + 1);
    return 0;
}

static void
test_armv7m_decodes_a_recorded_qemu_g_reply_through_its_target_xml(void **state)
{
    (void)state;
    const struct arch_desc *a = &arch_armv7m;
    struct rsp_tdesc *td = NULL;
    struct sw_errbuf err = { 0 };
    assert_int_equal(rsp_tdesc_parse(qemu72_target_xml, strlen(qemu72_target_xml), qemu72_annex,
                                     NULL, &td, &err),
                     0);
    assert_ptr_equal(arch_by_tdesc(td->arch), a);
    uint8_t g[68];
    assert_int_equal(strlen(qemu72_g), 2 * sizeof g);
    for (size_t i = 0; i < sizeof g; i++) {
        unsigned v;
        assert_int_equal(sscanf(qemu72_g + 2 * i, "%2x", &v), 1);
        g[i] = (uint8_t)v;
    }
    /* xpsr is regnum 25 but follows pc in the reply: QEMU sends nothing for 16-24. */
    static const struct {
        const char *name;
        uint64_t v;
    } want[] = {
        { "pc", 0x8e },                               /* p_leaf+4 */
        { "sp", 0x20000f64 }, { "lr", 0xa9 },         /* into p1, with the Thumb bit */
        { "r7", 0x20000f64 }, { "xpsr", 0x0100000e }, /* Thumb, exception 14: PendSV */
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        const struct rsp_treg *r = NULL;
        for (size_t i = 0; i < td->nregs; i++)
            if (strcmp(td->regs[i].name, want[k].name) == 0)
                r = &td->regs[i];
        assert_non_null(r);
        assert_non_null(arch_reg_by_name(a, want[k].name));
        assert_true(r->offset + 4 <= sizeof g);
        assert_int_equal(arch_load(a, g + r->offset, 4), want[k].v);
    }
    for (size_t i = 0; i < td->nregs; i++) {
        assert_string_not_equal(td->regs[i].name, "psp");
        assert_string_not_equal(td->regs[i].name, "msp");
    }
    rsp_tdesc_free(td);
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
        cmocka_unit_test(test_armv7m_decodes_a_recorded_qemu_g_reply_through_its_target_xml),
        cmocka_unit_test(test_armv7m_return_addresses_lose_the_thumb_bit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
