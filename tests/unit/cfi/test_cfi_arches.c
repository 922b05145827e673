/* tests/unit/cfi/test_cfi_arches.c -- the debug stepper's register rules on every ABI.
 *
 * Rows of glibc's abort in the Debian cross libcs (aarch64, i386, ppc32,
 * ppc64le) read through libdwarf, and applied by sw_debug_apply_row to a
 * fake process of that arch at the function's entry and after its prologue:
 * where each ABI keeps the return address (aarch64 x30 and ppc LR in a
 * register at entry, i386 on the stack), that the caller's SP is the CFA
 * (equal to the callee's SP in a RISC function that has not allocated yet),
 * that callee-saved registers come from their slots or stay the same, and
 * that a return address moved to another register (ppc's mflr r0) is found
 * there; AArch64 return-address signing (DW_CFA_AARCH64_negate_ra_state) on
 * a hand-written FDE.  x86-64 has its own tests (test_cfi.c, test_step_debug.c,
 * test_cfi_asm.c), ppc64 big-endian its rows (test_cfi_ppc64.c).  A missing
 * cross libc fails the test naming the package; it is never skipped.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "arch/aarch64_regs.h"
#include "arch/i386_regs.h"
#include "arch/ppc_regs.h"
#include "rspwalk/rspwalk.h"
#include "tests/tools/fake_proc.h"
#include "util/util.h"
#include "cfi/cfi.h"
#include "elf/elf.h"
#include "walker/steppers/debug_internal.h"

#define AARCH64_LIBC "/usr/aarch64-linux-gnu/lib/libc.so.6"
#define I386_LIBC    "/usr/i686-linux-gnu/lib/libc.so.6"
#define PPC_LIBC     "/usr/powerpc-linux-gnu/lib/libc.so.6"
#define PPC64LE_LIBC "/usr/powerpc64le-linux-gnu/lib/libc.so.6"

#define STACK 0x7f000000ull
#define LR0   0x12345670ull /* the return address in the link register */
#define RA1   0x23456780ull /* a return address saved on the stack */

struct fx {
    const struct arch_desc *a;
    struct sw_proc *p;
    struct sw_cfi *cfi;
    sw_addr abort; /* link-time entry of abort */
    struct sw_frame in, out;
    struct sw_cfi_row row;
    struct sw_errbuf err;
};

static void
fx_open(struct fx *fx, const struct arch_desc *a, const char *libc, const char *package)
{
    struct sw_elfcache *c;
    struct sw_elf *e;
    struct sw_elfsym sym;

    memset(fx, 0, sizeof *fx);
    if (access(libc, R_OK) != 0)
        fail_msg("%s is missing: install %s (apt-get install %s)", libc, package, package);
    fx->a = a;
    fx->p = fake_proc_new(a);
    assert_non_null(fx->p);
    fake_proc_add_mem(fx->p, STACK - 0x1000, NULL, 0x2000);
    if (sw_cfi_open(libc, NULL, a->word_size, &fx->cfi, &fx->err) != 0)
        fail_msg("CFI of %s: %s", libc, fx->err.msg);
    c = sw_elfcache_new(NULL);
    assert_non_null(c);
    if (sw_elfcache_open(c, libc, &e, &fx->err) != 0)
        fail_msg("%s", fx->err.msg);
    if (sw_elf_symbol_by_name(e, "abort", &sym) != 0)
        fail_msg("%s: no symbol abort", libc);
    fx->abort = sym.value;
    sw_elfcache_free(c);
}

static void
fx_close(struct fx *fx)
{
    sw_cfi_close(fx->cfi);
    sw_proc_free(fx->p);
}

/* Frame 0 at PC (link-time: the library sits at bias 0) with SP and FP. */
static void
top(struct fx *fx, sw_addr pc, sw_addr sp, sw_addr fp)
{
    const struct arch_desc *a = fx->a;
    sw_frame_init(&fx->in);
    fx->in.top = true;
    fx->in.thread = 1;
    fx->in.ra = pc;
    fx->in.sp = sp;
    fx->in.fp = fp;
    sw_frame_set_reg(&fx->in, (unsigned)a->dw_pc, pc);
    sw_frame_set_reg(&fx->in, (unsigned)a->dw_sp, sp);
    sw_frame_set_reg(&fx->in, (unsigned)a->dw_fp, fp);
    sw_frame_init(&fx->out);
    fx->out.ra = 0xdead;
}

/* The row at PC, then the caller by it. */
static enum sw_gcf
step_at(struct fx *fx, sw_addr pc)
{
    if (sw_cfi_row_at(fx->cfi, pc, &fx->row, &fx->err) != 0)
        fail_msg("row at 0x%llx: %s", (unsigned long long)pc, fx->err.msg);
    return sw_debug_apply_row(fx->a, fx->p, &fx->row, &fx->in, &fx->out, &fx->err);
}

static sw_word
reg_of(const struct sw_frame *f, unsigned dw)
{
    sw_word v = 0;
    if (!sw_frame_reg(f, dw, &v))
        fail_msg("the caller has no DWARF register %u", dw);
    return v;
}

/* ---- aarch64: RA column x30, CFA on sp (31) ------------------------------ */

static void
test_cfi_aarch64_entry_returns_to_x30_with_the_same_sp(void **state)
{
    (void)state;
    struct fx fx;
    fx_open(&fx, &arch_aarch64, AARCH64_LIBC, "libc6-arm64-cross");
    top(&fx, fx.abort, STACK, STACK + 0x100);
    sw_frame_set_reg(&fx.in, AARCH64_DW_X30, LR0);
    sw_frame_set_reg(&fx.in, 19, 0x1919);
    assert_int_equal(step_at(&fx, fx.abort), SW_GCF_SUCCESS);
    assert_int_equal(fx.row.ra_column, AARCH64_DW_X30);
    assert_int_equal(fx.row.cfa_reg, AARCH64_DW_SP);
    assert_int_equal(fx.row.cfa_offset, 0);
    assert_int_equal(fx.row.rules[AARCH64_DW_X30].kind, SW_CFI_SAME);
    assert_int_equal(fx.out.ra, LR0);
    assert_int_equal(fx.out.ra_loc.kind, SW_LOC_REGISTER);
    assert_int_equal(fx.out.ra_loc.reg, AARCH64_DW_X30);
    assert_int_equal(fx.out.sp, STACK); /* nothing allocated: CFA == SP */
    assert_int_equal(fx.out.fp, STACK + 0x100);
    assert_int_equal(reg_of(&fx.out, AARCH64_DW_PC), LR0);
    assert_int_equal(reg_of(&fx.out, 19), 0x1919); /* callee-saved, untouched */
    fx_close(&fx);
}

static void
test_cfi_aarch64_after_stp_x29_x30_reads_the_frame_record(void **state)
{
    (void)state;
    struct fx fx;
    fx_open(&fx, &arch_aarch64, AARCH64_LIBC, "libc6-arm64-cross");
    /* abort: stp x29, x30, [sp, #-208]!; the frame record at the new sp. */
    sw_addr cfa = STACK, sp = cfa - 208;
    fake_proc_put_word(fx.p, sp, STACK + 0x300);
    fake_proc_put_word(fx.p, sp + 8, RA1);
    top(&fx, fx.abort + 4, sp, sp);
    sw_frame_set_reg(&fx.in, AARCH64_DW_X30, LR0); /* stale: the slot wins */
    assert_int_equal(step_at(&fx, fx.abort + 4), SW_GCF_SUCCESS);
    assert_int_equal(fx.row.cfa_offset, 208);
    assert_int_equal(fx.row.rules[AARCH64_DW_X30].kind, SW_CFI_OFFSET);
    assert_int_equal(fx.row.rules[AARCH64_DW_X30].offset, -200);
    assert_int_equal(fx.out.ra, RA1);
    assert_int_equal(fx.out.ra_loc.addr, sp + 8);
    assert_int_equal(fx.out.sp, cfa);
    assert_int_equal(fx.out.fp, STACK + 0x300);
    assert_int_equal(fx.out.fp_loc.addr, sp);
    assert_int_equal(reg_of(&fx.out, AARCH64_DW_X30), RA1);
    fx_close(&fx);
}

/* Return-address signing (tests/unit/data/aarch64_pac_cfi.S): x30 carries a
 * pointer authentication code from `paciasp` to `autiasp`. */
#define PAC_ELF   SW_TEST_DATA "/aarch64_pac_cfi.elf"
#define SIGNED_RA 0x0035000000401234ull /* a code in bits 48-54, user half */
#define STRIPPED  0x0000000000401234ull

static void
pac_open(struct fx *fx)
{
    struct sw_elfcache *c = sw_elfcache_new(NULL);
    struct sw_elf *e;
    struct sw_elfsym sym;

    memset(fx, 0, sizeof *fx);
    fx->a = &arch_aarch64;
    fx->p = fake_proc_new(&arch_aarch64);
    fake_proc_add_mem(fx->p, STACK - 0x1000, NULL, 0x2000);
    if (sw_cfi_open(PAC_ELF, NULL, 8, &fx->cfi, &fx->err) != 0)
        fail_msg("CFI of %s: %s", PAC_ELF, fx->err.msg);
    assert_int_equal(sw_elfcache_open(c, PAC_ELF, &e, &fx->err), 0);
    assert_int_equal(sw_elf_symbol_by_name(e, "pac_fn", &sym), 0);
    fx->abort = sym.value; /* the function under test */
    sw_elfcache_free(c);
}

static void
test_cfi_aarch64_negate_ra_state_toggles_and_remember_restore_keep_it(void **state)
{
    (void)state;
    static const bool want[] = { false, true, true, true, true, false, true };
    struct fx fx;
    pac_open(&fx);
    for (unsigned i = 0; i < sizeof want / sizeof want[0]; i++) {
        assert_int_equal(sw_cfi_row_at(fx.cfi, fx.abort + 4 * i, &fx.row, &fx.err), 0);
        if (fx.row.ra_signed != want[i])
            fail_msg("pac_fn+%u: ra_signed %d, expected %d", 4 * i, fx.row.ra_signed, want[i]);
    }
    assert_int_equal(fx.row.cfa_offset, 16); /* +24: the remembered frame */
    fx_close(&fx);
}

static void
test_cfi_aarch64_signed_return_address_is_stripped_for_the_pc_only(void **state)
{
    (void)state;
    struct fx fx;
    pac_open(&fx);
    /* Signed, still in x30. */
    top(&fx, fx.abort + 4, STACK, STACK + 0x100);
    sw_frame_set_reg(&fx.in, AARCH64_DW_X30, SIGNED_RA);
    assert_int_equal(step_at(&fx, fx.abort + 4), SW_GCF_SUCCESS);
    assert_int_equal(fx.out.ra, STRIPPED);
    assert_int_equal(reg_of(&fx.out, AARCH64_DW_PC), STRIPPED);
    assert_int_equal(reg_of(&fx.out, AARCH64_DW_X30), SIGNED_RA); /* as saved */

    /* Signed, saved in the frame record. */
    fake_proc_put_word(fx.p, STACK - 16, STACK + 0x300);
    fake_proc_put_word(fx.p, STACK - 8, SIGNED_RA);
    top(&fx, fx.abort + 8, STACK - 16, STACK - 16);
    assert_int_equal(step_at(&fx, fx.abort + 8), SW_GCF_SUCCESS);
    assert_int_equal(fx.out.ra, STRIPPED);
    assert_int_equal(fx.out.ra_loc.addr, STACK - 8);
    assert_int_equal(fx.out.sp, STACK);

    /* After autiasp x30 is a plain address: left as it is. */
    top(&fx, fx.abort + 20, STACK, STACK);
    sw_frame_set_reg(&fx.in, AARCH64_DW_X30, 0x401238);
    assert_int_equal(step_at(&fx, fx.abort + 20), SW_GCF_SUCCESS);
    assert_int_equal(fx.out.ra, 0x401238);
    fx_close(&fx);
}

/* ---- i386: RA column eip (8), CFA on esp (4) ------------------------------ */

static void
test_cfi_i386_entry_pops_the_pushed_return_address(void **state)
{
    (void)state;
    struct fx fx;
    fx_open(&fx, &arch_i386, I386_LIBC, "libc6-i386-cross");
    fake_proc_put_word(fx.p, STACK, RA1);
    top(&fx, fx.abort, STACK, STACK + 0x80);
    sw_frame_set_reg(&fx.in, I386_DW_EBX, 0xb0b0);
    assert_int_equal(step_at(&fx, fx.abort), SW_GCF_SUCCESS);
    assert_int_equal(fx.row.ra_column, I386_DW_EIP);
    assert_int_equal(fx.row.cfa_reg, I386_DW_ESP);
    assert_int_equal(fx.row.cfa_offset, 4);
    assert_int_equal(fx.out.ra, RA1);
    assert_int_equal(fx.out.ra_loc.addr, STACK);
    assert_int_equal(fx.out.sp, STACK + 4);
    assert_int_equal(fx.out.fp, STACK + 0x80);
    assert_int_equal(reg_of(&fx.out, I386_DW_EBX), 0xb0b0);
    fx_close(&fx);
}

static void
test_cfi_i386_after_push_ebp_reads_ebp_from_its_slot(void **state)
{
    (void)state;
    struct fx fx;
    fx_open(&fx, &arch_i386, I386_LIBC, "libc6-i386-cross");
    sw_addr sp = STACK - 4;
    fake_proc_put_word(fx.p, sp, STACK + 0x200); /* the pushed ebp */
    fake_proc_put_word(fx.p, sp + 4, RA1);
    top(&fx, fx.abort + 1, sp, 0x5555);
    assert_int_equal(step_at(&fx, fx.abort + 1), SW_GCF_SUCCESS);
    assert_int_equal(fx.row.cfa_offset, 8);
    assert_int_equal(fx.row.rules[I386_DW_EBP].kind, SW_CFI_OFFSET);
    assert_int_equal(fx.out.ra, RA1);
    assert_int_equal(fx.out.sp, STACK + 4);
    assert_int_equal(fx.out.fp, STACK + 0x200);
    assert_int_equal(fx.out.fp_loc.addr, sp);
    fx_close(&fx);
}

static void
test_cfi_i386_a_row_outward_of_4_gib_is_not_taken(void **state)
{
    (void)state;
    struct fx fx;
    fx_open(&fx, &arch_i386, I386_LIBC, "libc6-i386-cross");
    /* An SP near the top of the 32-bit space: CFA = esp + 4 wraps to 0,
     * which is not outward of the callee: not a frame. */
    fake_proc_add_mem(fx.p, 0xfffff000ull, NULL, 0x1000);
    fake_proc_put_word(fx.p, 0xfffffffcull, RA1);
    top(&fx, fx.abort, 0xfffffffcull, 0);
    assert_int_equal(step_at(&fx, fx.abort), SW_GCF_NOT_ME);
    assert_non_null(strstr(fx.err.msg, "not outward"));
    assert_int_equal(fx.out.ra, 0xdead);
    fx_close(&fx);
}

/* ---- ppc32: RA column LR (65), CFA on r1 ---------------------------------- */

static void
test_cfi_ppc32_entry_returns_to_lr(void **state)
{
    (void)state;
    struct fx fx;
    fx_open(&fx, &arch_ppc32, PPC_LIBC, "libc6-powerpc-cross");
    top(&fx, fx.abort, STACK, STACK);
    sw_frame_set_reg(&fx.in, PPC_DW_LR, LR0);
    assert_int_equal(step_at(&fx, fx.abort), SW_GCF_SUCCESS);
    assert_int_equal(fx.row.ra_column, PPC_DW_LR);
    assert_int_equal(fx.row.cfa_reg, PPC_DW_R1);
    assert_int_equal(fx.row.cfa_offset, 0);
    assert_int_equal(fx.out.ra, LR0);
    assert_int_equal(fx.out.ra_loc.kind, SW_LOC_REGISTER);
    assert_int_equal(fx.out.ra_loc.reg, PPC_DW_LR);
    assert_int_equal(fx.out.sp, STACK);
    assert_int_equal(reg_of(&fx.out, PPC_DW_LR), LR0);
    fx_close(&fx);
}

static void
test_cfi_ppc32_lr_moved_to_r0_then_saved_in_the_callers_frame(void **state)
{
    (void)state;
    struct fx fx;
    fx_open(&fx, &arch_ppc32, PPC_LIBC, "libc6-powerpc-cross");
    /* stwu r1,-176(r1); mflr r0: the return address is in r0 now. */
    sw_addr sp = STACK - 176;
    top(&fx, fx.abort + 8, sp, sp);
    sw_frame_set_reg(&fx.in, PPC_DW_R0, LR0);
    sw_frame_set_reg(&fx.in, PPC_DW_LR, 0x999); /* about to be clobbered */
    assert_int_equal(step_at(&fx, fx.abort + 8), SW_GCF_SUCCESS);
    assert_int_equal(fx.row.rules[PPC_DW_LR].kind, SW_CFI_REGISTER);
    assert_int_equal(fx.row.rules[PPC_DW_LR].reg, PPC_DW_R0);
    assert_int_equal(fx.out.ra, LR0);
    assert_int_equal(fx.out.ra_loc.reg, PPC_DW_R0);
    assert_int_equal(fx.out.sp, STACK);

    /* Once stored: stw r0,180(r1), the LR save word of the caller's frame
     * (CFA + 4), and r29-r31 below the CFA. */
    sw_addr pc = fx.abort + 0x1c;
    fake_proc_put_word(fx.p, STACK + 4, RA1);
    fake_proc_put_word(fx.p, STACK - 4, 0x3131);
    top(&fx, pc, sp, sp);
    assert_int_equal(step_at(&fx, pc), SW_GCF_SUCCESS);
    assert_int_equal(fx.row.rules[PPC_DW_LR].kind, SW_CFI_OFFSET);
    assert_int_equal(fx.row.rules[PPC_DW_LR].offset, 4);
    assert_int_equal(fx.out.ra, RA1);
    assert_int_equal(fx.out.ra_loc.addr, STACK + 4);
    assert_int_equal(fx.out.sp, STACK);
    assert_int_equal(fx.out.fp, 0x3131); /* r31, the frame-pointer convention */
    fx_close(&fx);
}

/* ---- ppc64le (ELFv2): LR saved at CFA + 16 -------------------------------- */

static void
test_cfi_ppc64le_entry_and_saved_lr(void **state)
{
    (void)state;
    struct fx fx;
    fx_open(&fx, &arch_ppc64le, PPC64LE_LIBC, "libc6-ppc64el-cross");
    top(&fx, fx.abort, STACK, STACK);
    sw_frame_set_reg(&fx.in, PPC_DW_LR, LR0);
    assert_int_equal(step_at(&fx, fx.abort), SW_GCF_SUCCESS);
    assert_int_equal(fx.out.ra, LR0);
    assert_int_equal(fx.out.sp, STACK);

    /* The first row that has LR in its slot. */
    sw_addr pc = fx.row.hi;
    for (int i = 0; i < 8; i++) {
        assert_int_equal(sw_cfi_row_at(fx.cfi, pc, &fx.row, &fx.err), 0);
        if (fx.row.rules[PPC_DW_LR].kind == SW_CFI_OFFSET)
            break;
        pc = fx.row.hi;
    }
    assert_int_equal(fx.row.rules[PPC_DW_LR].offset, 16);
    sw_addr sp = STACK - (sw_addr)fx.row.cfa_offset;
    fake_proc_put_word(fx.p, STACK + 16, RA1);
    top(&fx, pc, sp, sp);
    assert_int_equal(step_at(&fx, pc), SW_GCF_SUCCESS);
    assert_int_equal(fx.out.ra, RA1);
    assert_int_equal(fx.out.sp, STACK);
    fx_close(&fx);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cfi_aarch64_entry_returns_to_x30_with_the_same_sp),
        cmocka_unit_test(test_cfi_aarch64_after_stp_x29_x30_reads_the_frame_record),
        cmocka_unit_test(test_cfi_aarch64_negate_ra_state_toggles_and_remember_restore_keep_it),
        cmocka_unit_test(test_cfi_aarch64_signed_return_address_is_stripped_for_the_pc_only),
        cmocka_unit_test(test_cfi_i386_entry_pops_the_pushed_return_address),
        cmocka_unit_test(test_cfi_i386_after_push_ebp_reads_ebp_from_its_slot),
        cmocka_unit_test(test_cfi_i386_a_row_outward_of_4_gib_is_not_taken),
        cmocka_unit_test(test_cfi_ppc32_entry_returns_to_lr),
        cmocka_unit_test(test_cfi_ppc32_lr_moved_to_r0_then_saved_in_the_callers_frame),
        cmocka_unit_test(test_cfi_ppc64le_entry_and_saved_lr),
    };
    return cmocka_run_group_tests_name("cfi_arches", tests, NULL, NULL);
}
