/* tests/unit/arch/test_arch.c -- architecture tables: lookups, roles, byte order, sigframe.
 *
 * Every table is checked on every host.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rspwalk/rspwalk.h"

static void
test_arch_lookups_find_x86_64(void **state)
{
    (void)state;
    assert_ptr_equal(arch_by_elf(62, 2, 1), &arch_x86_64);
    assert_null(arch_by_elf(62, 2, 2)); /* no big-endian x86-64 */
    assert_null(arch_by_elf(62, 1, 1)); /* ELFCLASS32 is not x86-64 */
    assert_ptr_equal(arch_by_tdesc("i386:x86-64"), &arch_x86_64);
    assert_null(arch_by_tdesc("i386:x86-64:intel-not"));
    assert_null(arch_by_tdesc(NULL));
    assert_ptr_equal(arch_by_name("X86_64"), &arch_x86_64);
    assert_ptr_equal(arch_all()[0], &arch_x86_64);
}

static void
test_x86_64_rows_carry_dwarf_and_gdb_numbers(void **state)
{
    (void)state;
    const struct arch_desc *a = &arch_x86_64;
    /* psABI: rdx is DWARF 1 and rbx 3; gdb's g order has rbx 1 and rdx 3. */
    assert_int_equal(arch_reg_by_name(a, "rdx")->dwarf, 1);
    assert_int_equal(arch_reg_by_name(a, "rdx")->gdb, 3);
    assert_int_equal(arch_reg_by_name(a, "RBX")->dwarf, 3);
    assert_int_equal(arch_reg_by_name(a, "rbx")->gdb, 1);
    assert_int_equal(arch_reg_by_dwarf(a, a->dw_pc)->role, ARCH_ROLE_PC);
    assert_string_equal(arch_reg_by_dwarf(a, a->dw_sp)->name, "rsp");
    assert_string_equal(arch_reg_by_dwarf(a, a->dw_fp)->name, "rbp");
    assert_string_equal(arch_reg_by_gdb(a, 16)->name, "rip");
    assert_string_equal(arch_dwarf_name(a, 12), "r12");
    assert_null(arch_dwarf_name(a, 1000));
    assert_null(arch_reg_by_name(a, "xyz"));
    /* Every row's DWARF number is below dw_max and unique. */
    for (size_t i = 0; i < a->nregs; i++) {
        assert_true(a->regs[i].dwarf < a->dw_max);
        for (size_t k = i + 1; k < a->nregs; k++)
            assert_int_not_equal(a->regs[i].dwarf, a->regs[k].dwarf);
    }
}

static void
test_arch_load_and_store_follow_target_byte_order(void **state)
{
    (void)state;
    const uint8_t le[8] = { 0x70, 0x4b, 0xfe, 0xf7, 0xff, 0x7f, 0, 0 };
    assert_int_equal(arch_load(&arch_x86_64, le, 8), 0x7ffff7fe4b70ULL);
    assert_int_equal(arch_load(&arch_x86_64, le, 4), 0xf7fe4b70U);
    struct arch_desc be = arch_x86_64;
    be.big_endian = true;
    assert_int_equal(arch_load(&be, le, 4), 0x704bfef7U);
    uint8_t out[8];
    arch_store(&be, out, 4, 0x11223344);
    assert_memory_equal(out, "\x11\x22\x33\x44", 4);
    arch_store(&arch_x86_64, out, 8, 0x0102030405060708ULL);
    assert_memory_equal(out, "\x08\x07\x06\x05\x04\x03\x02\x01", 8);
}

/* Readers of code pick their decoders by the family: every table names one,
 * and the tables that share encodings name the same. */
static void
test_every_table_names_its_instruction_family(void **state)
{
    (void)state;
    for (const struct arch_desc *const *a = arch_all(); *a; a++)
        assert_int_not_equal((*a)->family, ARCH_FAMILY_NONE);
    assert_int_equal(arch_x86_64.family, ARCH_FAMILY_X86);
    assert_int_equal(arch_i386.family, ARCH_FAMILY_X86);
    assert_int_equal(arch_aarch64.family, ARCH_FAMILY_AARCH64);
    assert_int_equal(arch_ppc32.family, ARCH_FAMILY_PPC);
    assert_int_equal(arch_ppc64.family, ARCH_FAMILY_PPC);
    assert_int_equal(arch_ppc64le.family, ARCH_FAMILY_PPC);
    assert_int_equal(arch_armv7m.family, ARCH_FAMILY_THUMB);
}

/* A 'g' reply recorded from gdbserver 13.1 (x86-64, gdb's default layout
 * for the first 24 registers): rip at offset 128, rsp at 56, rbp at 48. */
/* The breakpoint instruction of each table, read back in the table's own
 * byte order: the words gdb inserts (gdb/i386-tdep.c, aarch64-tdep.c,
 * rs6000-tdep.c) and the fixtures' STOP_NOW() compiles in. */
static void
test_every_table_carries_its_breakpoint_instruction(void **state)
{
    (void)state;
    static const struct {
        const struct arch_desc *a;
        uint64_t word;
        uint8_t len;
    } want[] = {
        { &arch_x86_64, 0xcc, 1 },        { &arch_i386, 0xcc, 1 },
        { &arch_aarch64, 0xd4200000, 4 }, { &arch_ppc32, 0x7fe00008, 4 },
        { &arch_ppc64, 0x7fe00008, 4 },   { &arch_ppc64le, 0x7fe00008, 4 },
        { &arch_armv7m, 0xbe00, 2 },
    };
    size_t n = 0;
    for (const struct arch_desc *const *a = arch_all(); *a; a++, n++) {
        assert_non_null((*a)->break_insn);
        assert_in_range((*a)->break_insn_len, 1, 8);
    }
    assert_int_equal(n, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < n; i++) {
        const struct arch_desc *a = want[i].a;
        assert_int_equal(a->break_insn_len, want[i].len);
        assert_int_equal(arch_load(a, a->break_insn, a->break_insn_len), want[i].word);
    }
    /* In memory: little-endian words on AArch64 and ppc64le, big-endian on
     * ppc and ppc64. */
    assert_memory_equal(arch_aarch64.break_insn, "\x00\x00\x20\xd4", 4);
    assert_memory_equal(arch_ppc64.break_insn, "\x7f\xe0\x00\x08", 4);
    assert_memory_equal(arch_ppc64le.break_insn, "\x08\x00\xe0\x7f", 4);
}

static void
test_x86_64_decodes_a_recorded_g_reply(void **state)
{
    (void)state;
    const char *hex = "0000000000000000"
                      "0000000000000000"
                      "0000000000000000"
                      "0000000000000000"
                      "0000000000000000"
                      "0000000000000000"
                      "10deffffff7f0000"
                      "00deffffff7f0000"
                      "0000000000000000"
                      "0000000000000000"
                      "0000000000000000"
                      "0000000000000000"
                      "0000000000000000"
                      "0000000000000000"
                      "0000000000000000"
                      "0000000000000000"
                      "3611400000000000";
    uint8_t g[17 * 8];
    for (size_t i = 0; i < sizeof g; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        g[i] = (uint8_t)v;
    }
    const struct arch_desc *a = &arch_x86_64;
    size_t off_rip = 0, off_rsp = 0, off_rbp = 0, off = 0;
    for (int n = 0; n <= 16; n++) {
        const struct arch_reg *r = arch_reg_by_gdb(a, n);
        assert_non_null(r);
        if (r->role == ARCH_ROLE_PC)
            off_rip = off;
        if (r->role == ARCH_ROLE_SP)
            off_rsp = off;
        if (r->role == ARCH_ROLE_FP)
            off_rbp = off;
        off += r->size;
    }
    assert_int_equal(arch_load(a, g + off_rip, 8), 0x401136);
    assert_int_equal(arch_load(a, g + off_rsp, 8), 0x7fffffffde00ULL);
    assert_int_equal(arch_load(a, g + off_rbp, 8), 0x7fffffffde10ULL);
}

static void
test_x86_64_sigframe_matches_the_kernel_abi(void **state)
{
    (void)state;
    const struct arch_sigframe *sf = arch_x86_64.sigframe;
    assert_non_null(sf);
    /* uc_flags 8 + uc_link 8 + stack_t 24 = 40; gregs[REG_RIP] is slot 16,
     * so the saved rip sits at 168 bytes into the ucontext (glibc's
     * sys/ucontext.h: REG_RBP 10, REG_RSP 15, REG_RIP 16 put rbp at 120,
     * rsp at 160, rip at 168). */
    assert_int_equal(sf->mcontext_offset, 40);
    for (size_t i = 0; i < sf->ngregs; i++) {
        size_t at = sf->mcontext_offset + i * sf->greg_size;
        if (sf->greg_dwarf[i] == arch_x86_64.dw_pc)
            assert_int_equal(at, 168);
        if (sf->greg_dwarf[i] == arch_x86_64.dw_sp)
            assert_int_equal(at, 160);
        if (sf->greg_dwarf[i] == arch_x86_64.dw_fp)
            assert_int_equal(at, 120);
    }
    assert_int_equal(sf->tramp_len, 9);
    assert_memory_equal(sf->tramp, "\x48\xc7\xc0\x0f\x00\x00\x00\x0f\x05", 9);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arch_lookups_find_x86_64),
        cmocka_unit_test(test_x86_64_rows_carry_dwarf_and_gdb_numbers),
        cmocka_unit_test(test_arch_load_and_store_follow_target_byte_order),
        cmocka_unit_test(test_every_table_names_its_instruction_family),
        cmocka_unit_test(test_every_table_carries_its_breakpoint_instruction),
        cmocka_unit_test(test_x86_64_decodes_a_recorded_g_reply),
        cmocka_unit_test(test_x86_64_sigframe_matches_the_kernel_abi),
    };
    return cmocka_run_group_tests_name("arch", tests, NULL, NULL);
}
