/* tests/unit/walker/test_frame_func_ppc.c -- the analysis and the FrameFuncHelper on PowerPC code.
 *
 * tests/unit/data/ppc_frames.S (ppc32 SysV), ppc64_frames.S (big-endian ELFv1, function
 * symbols on .opd descriptors) and ppc64le_frames.S (the same code little-endian, ELFv2),
 * assembled by the Debian cross compilers and linked static; the expected height and pair
 * are beside each instruction there.  Frames are walked on a stack built in a fake process.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "arch/ppc_regs.h"
#include "tests/unit/walker/test_frame_func.h"

#define ELF32   SW_TEST_DATA "/ppc_frames.elf"
#define ELF64   SW_TEST_DATA "/ppc64_frames.elf"
#define ELF64LE SW_TEST_DATA "/ppc64le_frames.elf"

#define S 0x7fff0400u /* SP of frame 0 */

#define STD    SW_FRAME_STANDARD
#define SAVEFP SW_FRAME_SAVEFP_ONLY
#define NOFR   SW_FRAME_NO_FRAME
#define UNSET  SW_FRAME_UNSET
#define HALF   SW_FRAME_HALFSET
#define SET    SW_FRAME_SET
#define LIVE   SW_AN_RA_LIVE
#define SLOT   SW_AN_RA_SLOT

static const struct ff_row rows64[] = {
    { "outer", 0, 0, LIVE, STD, UNSET },     { "outer", 4, 0, LIVE, STD, UNSET },
    { "outer", 8, 0, SLOT, STD, HALF },      { "outer", 12, 0, SLOT, STD, HALF },
    { "outer", 16, 128, SLOT, STD, SET },    { "outer", 20, 128, SLOT, STD, SET },
    { "outer", 24, 128, SLOT, STD, SET },    { "outer", 28, 128, SLOT, STD, SET },
    { "outer", 32, 0, SLOT, STD, HALF },     { "outer", 36, 0, SLOT, STD, HALF },
    { "outer", 40, 0, LIVE, STD, UNSET },    { "outer", 44, 0, LIVE, STD, UNSET },
    { "multi", 0, 0, LIVE, STD, UNSET },     { "multi", 4, 0, LIVE, STD, UNSET },
    { "multi", 8, 0, LIVE, STD, UNSET },     { "multi", 12, 0, LIVE, STD, UNSET },
    { "multi", 16, 0, SLOT, STD, HALF },     { "multi", 20, 64, SLOT, STD, SET },
    { "multi", 24, 96, SLOT, STD, SET },     { "multi", 28, 96, SLOT, STD, SET },
    { "multi", 32, 96, SLOT, STD, SET },     { "multi", 36, 0, SLOT, STD, HALF },
    { "multi", 40, 0, SLOT, STD, HALF },     { "multi", 44, 0, LIVE, STD, UNSET },
    { "leaf", 0, 0, LIVE, NOFR, UNSET },     { "leaf", 4, 0, LIVE, NOFR, UNSET },
    { "savefp", 0, 0, LIVE, SAVEFP, UNSET }, { "savefp", 4, 48, LIVE, SAVEFP, SET },
    { "savefp", 8, 48, LIVE, SAVEFP, SET },  { "savefp", 12, 48, LIVE, SAVEFP, SET },
    { "savefp", 16, 48, LIVE, SAVEFP, SET }, { "savefp", 20, 0, LIVE, SAVEFP, UNSET },
    { "switchy", 0, 0, LIVE, STD, UNSET },   { "switchy", 4, 0, LIVE, STD, UNSET },
    { "switchy", 8, 0, SLOT, STD, HALF },    { "switchy", 12, 112, SLOT, STD, SET },
    { "switchy", 16, 112, SLOT, STD, SET },
};

static void
test_ppc64_heights_and_pairs_at_every_pc(void **state)
{
    (void)state;
    struct ff_fixture fx;
    ff_open(&fx, &arch_ppc64, ELF64, FF_ALONE);
    ff_check_rows(&fx, rows64, sizeof rows64 / sizeof rows64[0]);
    ff_close(&fx);
}

static void
test_ppc64le_heights_and_pairs_at_every_pc(void **state)
{
    (void)state;
    struct ff_fixture fx;
    ff_open(&fx, &arch_ppc64le, ELF64LE, FF_ALONE);
    ff_check_rows(&fx, rows64, sizeof rows64 / sizeof rows64[0]);
    ff_close(&fx);
}

static void
test_ppc32_heights_and_pairs_at_every_pc(void **state)
{
    (void)state;
    static const struct ff_row rows[] = {
        { "outer32", 0, 0, LIVE, STD, UNSET },     { "outer32", 4, 32, LIVE, STD, HALF },
        { "outer32", 8, 32, LIVE, STD, HALF },     { "outer32", 12, 32, SLOT, STD, SET },
        { "outer32", 16, 32, SLOT, STD, SET },     { "outer32", 20, 32, SLOT, STD, SET },
        { "outer32", 24, 32, SLOT, STD, SET },     { "outer32", 28, 32, SLOT, STD, SET },
        { "outer32", 32, 32, SLOT, STD, SET },     { "outer32", 36, 32, SLOT, STD, SET },
        { "outer32", 40, 32, SLOT, STD, SET },     { "multi32", 0, 0, LIVE, STD, UNSET },
        { "multi32", 4, 0, LIVE, STD, UNSET },     { "multi32", 8, 0, LIVE, STD, UNSET },
        { "multi32", 12, 0, LIVE, STD, UNSET },    { "multi32", 16, 16, LIVE, STD, HALF },
        { "multi32", 20, 16, SLOT, STD, SET },     { "multi32", 24, 32, SLOT, STD, SET },
        { "multi32", 28, 32, SLOT, STD, SET },     { "multi32", 32, 16, SLOT, STD, SET },
        { "multi32", 36, 16, SLOT, STD, SET },     { "multi32", 40, 0, SLOT, STD, HALF },
        { "multi32", 44, 0, LIVE, STD, UNSET },    { "leaf32", 0, 0, LIVE, NOFR, UNSET },
        { "leaf32", 4, 0, LIVE, NOFR, UNSET },     { "switchy32", 0, 0, LIVE, SAVEFP, UNSET },
        { "switchy32", 4, 16, LIVE, SAVEFP, SET }, { "switchy32", 8, 16, LIVE, SAVEFP, SET },
    };
    struct ff_fixture fx;
    ff_open(&fx, &arch_ppc32, ELF32, FF_ALONE);
    ff_check_rows(&fx, rows, sizeof rows / sizeof rows[0]);

    /* outer32's blr after `mr r1,r11`: the analysis does not follow r11 (SP unknown), the
     * exit scan says the frame is gone and the LR live */
    struct sw_an_pc at;
    struct sw_frame_alloc fa;
    const sw_addr blr = ff_sym(&fx, "outer32") + 44;
    assert_int_equal(sw_analysis_at(fx.w, blr, true, &at), 0);
    assert_false(at.sp_known);
    assert_int_equal(sw_frame_func_alloc(fx.w, blr, true, &fa), 0);
    assert_int_equal(fa.type, STD);
    assert_int_equal(fa.state, UNSET);
    /* r31 saved after the allocation: CFA - 4; the LR in the header at CFA + 4 */
    assert_int_equal(sw_analysis_at(fx.w, ff_sym(&fx, "outer32") + 24, false, &at), 0);
    assert_int_equal(at.fp_save_off, -4);
    assert_int_equal(at.ra_off, 4);
    ff_close(&fx);
}

/* ---- failure paths -------------------------------------------------------- */

static void
check_failures(const struct arch_desc *a, const char *elf, const char *switchy, unsigned gap_off,
               unsigned unreached, unsigned scanned)
{
    struct ff_fixture fx;
    struct sw_frame_alloc fa;
    struct sw_an_pc at;
    struct sw_an_func fn;
    ff_open(&fx, a, elf, FF_ALONE);
    const sw_addr sw = ff_sym(&fx, switchy), gap = sw + gap_off;
    /* outside any function: unknown, unknown */
    assert_int_equal(sw_frame_func_alloc(fx.w, gap, true, &fa), SW_ENOSYM);
    assert_int_equal(fa.type, SW_FRAME_UNKNOWN_T);
    assert_int_equal(fa.state, SW_FRAME_UNKNOWN_S);
    assert_int_equal(sw_frame_func_alloc(fx.w, 0x10, false, &fa), SW_ENOSYM);
    /* not reached, a branch before any return: the function's type, no state */
    assert_int_equal(sw_analysis_func(fx.w, sw + unreached, true, &fn, &at), SW_EINVAL);
    assert_int_equal(fn.start, sw);
    assert_int_equal(sw_frame_func_alloc(fx.w, sw + unreached, true, &fa), SW_EINVAL);
    assert_int_not_equal(fa.type, SW_FRAME_UNKNOWN_T);
    assert_int_equal(fa.state, SW_FRAME_UNKNOWN_S);
    /* not reached, a return follows: the frame is allocated and being freed */
    assert_int_equal(sw_frame_func_alloc(fx.w, sw + scanned, true, &fa), 0);
    assert_int_equal(fa.state, SET);
    /* the stepper at the gap: addi r1,r1,32; blr */
    struct sw_frame caller;
    fake_proc_put_word(fx.p, S, S + 32);                /* the back chain */
    const sw_addr start_ra = ff_sym(&fx, "_start") + 8; /* after bl */
    ff_regs(&fx, gap, S, 0x3131, start_ra);
    ff_step(&fx, &caller);
    assert_int_equal(caller.ra, start_ra);
    assert_int_equal(caller.sp, S + 32);
    assert_int_equal(caller.fp, 0x3131);
    ff_close(&fx);
}

static void
test_ppc_pcs_outside_functions_and_not_reached(void **state)
{
    (void)state;
    check_failures(&arch_ppc64, ELF64, "switchy", 48, 28, 32);
    check_failures(&arch_ppc64le, ELF64LE, "switchy", 48, 28, 32);
    check_failures(&arch_ppc32, ELF32, "switchy32", 24, 12, 16);
}

/* ---- walks ----------------------------------------------------------------- */

/* ppc64: leaf <- multi (after bl leaf: 96 bytes in two allocations) <- outer (128) <-
 * _start, frame 0's SP = S.  multi's second back chain points at its first frame, not at
 * its caller: the caller's SP is SP + height.  outer saved r31 at its CFA - 8. */
static void
walk64(const struct arch_desc *a, const char *elf, enum ff_steppers which)
{
    struct ff_fixture fx;
    ff_open(&fx, a, elf, which);
    const sw_addr c_multi = S + 96, c_outer = c_multi + 128;
    fake_proc_put_word(fx.p, S, S + 32);        /* multi's second back chain */
    fake_proc_put_word(fx.p, S + 32, c_multi);  /* its first */
    fake_proc_put_word(fx.p, c_multi, c_outer); /* outer's */
    fake_proc_put_word(fx.p, c_multi + 16, ff_sym(&fx, "outer") + 24);
    fake_proc_put_word(fx.p, c_outer - 8, 0x3131); /* _start's r31, saved by outer */
    fake_proc_put_word(fx.p, c_outer + 16, ff_sym(&fx, "_start") + 8);
    ff_regs(&fx, ff_sym(&fx, "leaf"), S, c_multi - 128, ff_sym(&fx, "multi") + 28);
    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    const struct sw_frame *f = fx.st.frames;
    assert_true(fx.st.n >= 4);
    assert_int_equal(f[1].ra, ff_sym(&fx, "multi") + 28); /* the live LR */
    assert_int_equal(f[1].sp, S);
    assert_int_equal(f[1].ra_loc.kind, SW_LOC_REGISTER);
    assert_int_equal(f[2].ra, ff_sym(&fx, "outer") + 24); /* outer's header */
    assert_int_equal(f[2].sp, c_multi);
    assert_int_equal(f[2].ra_loc.addr, c_multi + 16);
    assert_int_equal(f[3].ra, ff_sym(&fx, "_start") + 8);
    assert_int_equal(f[3].sp, c_outer);
    assert_int_equal(f[3].fp, 0x3131);
    assert_int_equal(f[3].fp_loc.addr, c_outer - 8);
    for (size_t i = 1; i < 4; i++)
        assert_string_equal(f[i].stepper->ops->name, "frame-func");
    if (which == FF_DEFAULTS) {
        assert_int_equal(fx.st.n, 4);
        assert_int_equal(fx.st.end, SW_END_BOTTOM);
        assert_int_equal(sw_analysis_count(fx.w), 3); /* leaf, multi, outer */
    }
    ff_close(&fx);
}

static void
test_ppc64_walks_leaf_multi_outer_to_start(void **state)
{
    (void)state;
    walk64(&arch_ppc64, ELF64, FF_DEFAULTS);
    walk64(&arch_ppc64, ELF64, FF_ALONE);
    walk64(&arch_ppc64le, ELF64LE, FF_DEFAULTS);
}

static void
test_ppc32_walks_leaf_multi_outer_to_start(void **state)
{
    (void)state;
    struct ff_fixture fx;
    ff_open(&fx, &arch_ppc32, ELF32, FF_DEFAULTS);
    /* leaf32 <- multi32 (32 bytes at its call) <- outer32 (32) <- _start */
    const sw_addr c_multi = S + 32, c_outer = c_multi + 32;
    fake_proc_put_word(fx.p, S, S + 16);
    fake_proc_put_word(fx.p, S + 16, c_multi);
    fake_proc_put_word(fx.p, c_multi + 4, ff_sym(&fx, "outer32") + 24);
    fake_proc_put_word(fx.p, c_multi, c_outer);
    fake_proc_put_word(fx.p, c_outer - 4, 0x3131);
    fake_proc_put_word(fx.p, c_outer + 4, ff_sym(&fx, "_start") + 8);
    ff_regs(&fx, ff_sym(&fx, "leaf32") + 4, S, c_multi - 32, ff_sym(&fx, "multi32") + 28);
    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    const struct sw_frame *f = fx.st.frames;
    assert_int_equal(fx.st.n, 4);
    assert_int_equal(f[1].ra, ff_sym(&fx, "multi32") + 28);
    assert_int_equal(f[1].sp, S);
    assert_int_equal(f[2].ra, ff_sym(&fx, "outer32") + 24);
    assert_int_equal(f[2].sp, c_multi);
    assert_int_equal(f[3].ra, ff_sym(&fx, "_start") + 8);
    assert_int_equal(f[3].sp, c_outer);
    assert_int_equal(f[3].fp, 0x3131);
    assert_int_equal(fx.st.end, SW_END_BOTTOM);
    ff_close(&fx);
}

/* Frame 0 in FN+OFF with SP and LR; FN's CFA is C, its LR saved in the header at C + SLOT,
 * r31 (when saved) holds 0x3131.  The caller must be RA at C. */
static void
check_top(const struct arch_desc *a, const char *elf, const char *fn, unsigned off, sw_addr sp,
          bool lr_live, int64_t slot)
{
    const sw_addr c = S + 0x200;
    struct ff_fixture fx;
    struct sw_frame caller;
    ff_open(&fx, a, elf, FF_ALONE);
    const sw_addr ra = ff_sym(&fx, "_start") + 8; /* after bl: a return address walks believe */
    fake_proc_put_word(fx.p, c + (sw_addr)slot, ra);
    if (sp != c)
        fake_proc_put_word(fx.p, sp, c); /* the back chain */
    ff_regs(&fx, ff_sym(&fx, fn) + off, sp, 0x999, lr_live ? ra : 0xdead);
    ff_step(&fx, &caller);
    if (caller.ra != ra || caller.sp != c)
        fail_msg("%s+%u: caller %#lx at %#lx, want %#lx at %#lx", fn, off, (unsigned long)caller.ra,
                 (unsigned long)caller.sp, (unsigned long)ra, (unsigned long)c);
    assert_int_equal(caller.ra_loc.kind, lr_live ? SW_LOC_REGISTER : SW_LOC_ADDRESS);
    sw_word lr = 0;
    assert_true(sw_frame_reg(&caller, PPC_DW_LR, &lr));
    assert_int_equal(lr, ra);
    ff_close(&fx);
}

static void
test_ppc_frame_0_in_prologues_and_epilogues(void **state)
{
    (void)state;
    const sw_addr c = S + 0x200;
    const struct arch_desc *a64[] = { &arch_ppc64, &arch_ppc64le };
    const char *elf64[] = { ELF64, ELF64LE };
    for (size_t k = 0; k < 2; k++) {
        check_top(a64[k], elf64[k], "outer", 0, c, true, 16);
        check_top(a64[k], elf64[k], "outer", 4, c, true, 16);         /* the LR in r0 too */
        check_top(a64[k], elf64[k], "outer", 8, c, false, 16);        /* saved, no frame */
        check_top(a64[k], elf64[k], "outer", 16, c - 128, false, 16); /* set */
        check_top(a64[k], elf64[k], "outer", 32, c, false, 16);       /* popped, LR ahead */
        check_top(a64[k], elf64[k], "outer", 40, c, true, 16);        /* after mtlr */
        check_top(a64[k], elf64[k], "outer", 44, c, true, 16);        /* blr */
        check_top(a64[k], elf64[k], "multi", 4, c, true, 16);         /* the first exit */
        check_top(a64[k], elf64[k], "multi", 24, c - 96, false, 16);  /* two allocations */
        check_top(a64[k], elf64[k], "savefp", 12, c - 48, true, 16);  /* a leaf with a frame */
    }
    check_top(&arch_ppc32, ELF32, "outer32", 4, c - 32, true, 4);
    check_top(&arch_ppc32, ELF32, "outer32", 36, c - 32, false, 4);
    check_top(&arch_ppc32, ELF32, "outer32", 40, c - 32, false, 4); /* mr r1,r11 ahead */
    check_top(&arch_ppc32, ELF32, "outer32", 44, c, true, 4);       /* the exit scan */
    check_top(&arch_ppc32, ELF32, "multi32", 16, c - 16, true, 4);
    check_top(&arch_ppc32, ELF32, "multi32", 36, c - 16, false, 4);
    check_top(&arch_ppc32, ELF32, "multi32", 40, c, false, 4);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ppc64_heights_and_pairs_at_every_pc),
        cmocka_unit_test(test_ppc64le_heights_and_pairs_at_every_pc),
        cmocka_unit_test(test_ppc32_heights_and_pairs_at_every_pc),
        cmocka_unit_test(test_ppc_pcs_outside_functions_and_not_reached),
        cmocka_unit_test(test_ppc64_walks_leaf_multi_outer_to_start),
        cmocka_unit_test(test_ppc32_walks_leaf_multi_outer_to_start),
        cmocka_unit_test(test_ppc_frame_0_in_prologues_and_epilogues),
    };
    return cmocka_run_group_tests_name("frame_func_ppc", tests, NULL, NULL);
}
