/* tests/unit/walker/test_frame_func.c -- the analysis and the FrameFuncHelper on AArch64 code.
 *
 * tests/unit/data/aarch64_frames.S, assembled by aarch64-linux-gnu-gcc, linked static (so
 * link-time addresses are the run-time ones); the expected height and pair are beside each
 * instruction there.  Frames are walked on a stack built in a fake process.  Also: the
 * analysis cache (each function analysed once per walker).  PowerPC is
 * test_frame_func_ppc.c; x86 is test_analysis.c and test_steppers.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/walker/test_frame_func.h"

#define ELF SW_TEST_DATA "/aarch64_frames.elf"

#define S 0x7fff0400u /* SP of frame 0 */

#define STD    SW_FRAME_STANDARD
#define SAVEFP SW_FRAME_SAVEFP_ONLY
#define NOFR   SW_FRAME_NO_FRAME
#define UNSET  SW_FRAME_UNSET
#define HALF   SW_FRAME_HALFSET
#define SET    SW_FRAME_SET
#define LIVE   SW_AN_RA_LIVE
#define SLOT   SW_AN_RA_SLOT

static void
test_aarch64_heights_and_pairs_at_every_pc(void **state)
{
    (void)state;
    static const struct ff_row rows[] = {
        { "outer", 0, 0, LIVE, STD, UNSET },      { "outer", 4, 32, SLOT, STD, HALF },
        { "outer", 8, 32, SLOT, STD, SET },       { "outer", 12, 32, SLOT, STD, SET },
        { "outer", 16, 32, SLOT, STD, SET },      { "outer", 20, 32, SLOT, STD, SET },
        { "outer", 24, 0, LIVE, STD, UNSET },     { "multi", 0, 0, LIVE, STD, UNSET },
        { "multi", 4, 64, LIVE, STD, UNSET },     { "multi", 8, 64, SLOT, STD, HALF },
        { "multi", 12, 64, SLOT, STD, SET },      { "multi", 16, 64, SLOT, STD, SET },
        { "multi", 20, 64, LIVE, STD, UNSET },    { "multi", 24, 0, LIVE, STD, UNSET },
        { "multi", 28, 64, SLOT, STD, SET },      { "multi", 32, 96, SLOT, STD, SET },
        { "multi", 36, 96, SLOT, STD, SET },      { "multi", 40, 64, SLOT, STD, SET },
        { "multi", 44, 64, LIVE, STD, UNSET },    { "multi", 48, 0, LIVE, STD, UNSET },
        { "leaf", 0, 0, LIVE, NOFR, UNSET },      { "leaf", 4, 16, LIVE, NOFR, UNSET },
        { "leaf", 8, 16, LIVE, NOFR, UNSET },     { "leaf", 12, 0, LIVE, NOFR, UNSET },
        { "savefp", 0, 0, LIVE, SAVEFP, UNSET },  { "savefp", 4, 16, SLOT, SAVEFP, HALF },
        { "savefp", 8, 16, SLOT, SAVEFP, HALF },  { "savefp", 12, 16, SLOT, SAVEFP, HALF },
        { "savefp", 16, 0, LIVE, SAVEFP, UNSET }, { "omitfp", 0, 0, LIVE, NOFR, UNSET },
        { "omitfp", 4, 16, SLOT, NOFR, SET },     { "omitfp", 8, 16, SLOT, NOFR, SET },
        { "omitfp", 12, 0, LIVE, NOFR, UNSET },   { "pacfn", 0, 0, LIVE, STD, UNSET },
        { "pacfn", 4, 0, LIVE, STD, UNSET },      { "pacfn", 8, 16, SLOT, STD, HALF },
        { "pacfn", 12, 16, SLOT, STD, SET },      { "pacfn", 16, 16, SLOT, STD, SET },
        { "pacfn", 20, 0, LIVE, STD, UNSET },     { "pacfn", 24, 0, LIVE, STD, UNSET },
        { "switchy", 0, 0, LIVE, STD, UNSET },    { "switchy", 4, 32, SLOT, STD, HALF },
        { "switchy", 8, 32, SLOT, STD, SET },     { "switchy", 12, 32, SLOT, STD, SET },
    };
    struct ff_fixture fx;
    ff_open(&fx, &arch_aarch64, ELF, FF_ALONE);
    ff_check_rows(&fx, rows, sizeof rows / sizeof rows[0]);
    ff_close(&fx);
}

static void
test_aarch64_slots_are_cfa_relative_and_after_a_call(void **state)
{
    (void)state;
    struct ff_fixture fx;
    struct sw_an_pc at;
    struct sw_an_func fn;
    ff_open(&fx, &arch_aarch64, ELF, FF_ALONE);
    /* outer: stp x29, x30, [sp, #-32]!: x29 at CFA - 32, x30 at CFA - 24; mov x29, sp */
    assert_int_equal(sw_analysis_at(fx.w, ff_sym(&fx, "outer") + 8, true, &at), 0);
    assert_int_equal(at.ra_off, -24);
    assert_true(at.fp_pushed);
    assert_int_equal(at.fp_save_off, -32);
    assert_true(at.fp_cfa);
    assert_int_equal(at.fp_off, -32);
    assert_int_equal(at.caller_fp, SW_AN_FP_SAVED);
    /* a return address into multi (after bl leaf): the facts after the call */
    assert_int_equal(sw_analysis_func(fx.w, ff_sym(&fx, "multi") + 36, false, &fn, &at), 0);
    assert_int_equal(at.height, 96);
    assert_int_equal(at.ra_off, -8);
    assert_int_equal(at.fp_save_off, -16);
    assert_int_equal(at.fp_off, -16);
    assert_true(fn.saves_fp && fn.sets_fp && fn.saves_ra && fn.allocates && !fn.signs_ra);
    assert_int_equal(fn.start, ff_sym(&fx, "multi"));
    assert_int_equal(fn.size, 52);
    /* the same seen by the helper */
    struct sw_frame_alloc fa;
    assert_int_equal(sw_frame_func_alloc(fx.w, ff_sym(&fx, "multi") + 36, false, &fa), 0);
    assert_int_equal(fa.type, STD);
    assert_int_equal(fa.state, SET);
    assert_int_equal(sw_analysis_func(fx.w, ff_sym(&fx, "pacfn") + 16, false, &fn, &at), 0);
    assert_true(fn.signs_ra);
    assert_int_equal(sw_analysis_func(fx.w, ff_sym(&fx, "leaf"), true, &fn, &at), 0);
    assert_true(!fn.saves_fp && !fn.saves_ra && fn.allocates);
    ff_close(&fx);
}

/* ---- failure paths -------------------------------------------------------- */

static void
test_aarch64_pc_outside_any_function_is_unknown(void **state)
{
    (void)state;
    struct ff_fixture fx;
    struct sw_frame_alloc fa = { STD, SET };
    struct sw_an_pc at;
    ff_open(&fx, &arch_aarch64, ELF, FF_ALONE);
    const sw_addr gap = ff_sym(&fx, "switchy") + 32; /* the tail no symbol covers */
    assert_int_equal(sw_frame_func_alloc(fx.w, gap, true, &fa), SW_ENOSYM);
    assert_int_equal(fa.type, SW_FRAME_UNKNOWN_T);
    assert_int_equal(fa.state, SW_FRAME_UNKNOWN_S);
    assert_int_equal(sw_analysis_at(fx.w, gap, true, &at), SW_ENOSYM);
    assert_int_equal(sw_frame_func_alloc(fx.w, 0x10, true, &fa), SW_ENOSYM);
    assert_int_equal(fa.type, SW_FRAME_UNKNOWN_T);
    /* but the exit scan reads the tail: add sp, sp, #16; ret */
    assert_int_equal(sw_analysis_exit(fx.w, gap, &at), 0);
    assert_true(at.sp_known);
    assert_int_equal(at.height, 16);
    assert_int_equal(at.ra, LIVE);
    assert_int_equal(sw_analysis_exit(fx.w, gap + 4, &at), 0);
    assert_int_equal(at.height, 0);
    /* ...and the stepper walks through it */
    ff_regs(&fx, gap, S, 0x1234, ff_sym(&fx, "outer") + 16);
    struct sw_frame caller;
    ff_step(&fx, &caller);
    assert_int_equal(caller.ra, ff_sym(&fx, "outer") + 16);
    assert_int_equal(caller.sp, S + 16);
    assert_int_equal(caller.fp, 0x1234);
    assert_int_equal(caller.ra_loc.kind, SW_LOC_REGISTER);
    /* no code at all there: nothing to scan */
    assert_int_equal(sw_analysis_exit(fx.w, 0x10, &at), SW_EMEM);
    ff_close(&fx);
}

static void
test_aarch64_pc_the_analysis_does_not_reach(void **state)
{
    (void)state;
    struct ff_fixture fx;
    struct sw_frame_alloc fa;
    struct sw_an_pc at;
    struct sw_an_func fn;
    ff_open(&fx, &arch_aarch64, ELF, FF_ALONE);
    const sw_addr sw = ff_sym(&fx, "switchy");
    /* after br x16: not reached, and a branch before any return */
    assert_int_equal(sw_analysis_at(fx.w, sw + 20, true, &at), SW_EINVAL);
    assert_int_equal(sw_analysis_func(fx.w, sw + 20, true, &fn, &at), SW_EINVAL);
    assert_int_equal(fn.start, sw);
    assert_true(fn.saves_fp && fn.sets_fp);
    assert_int_equal(sw_frame_func_alloc(fx.w, sw + 20, true, &fa), SW_EINVAL);
    assert_int_equal(fa.type, STD); /* the function's type is still known */
    assert_int_equal(fa.state, SW_FRAME_UNKNOWN_S);
    assert_int_equal(sw_frame_func_alloc(fx.w, sw + 16, true, &fa), SW_EINVAL);
    /* a return after the call into switchy+16 is not reached either */
    assert_int_equal(sw_analysis_at(fx.w, sw + 20, false, &at), SW_EINVAL);
    /* not on an instruction boundary */
    assert_int_equal(sw_analysis_at(fx.w, ff_sym(&fx, "outer") + 2, true, &at), SW_EINVAL);
    /* not reached, but a return follows: the exit scan says the record is still on the
     * stack, 32 bytes of it */
    assert_int_equal(sw_frame_func_alloc(fx.w, sw + 24, true, &fa), 0);
    assert_int_equal(fa.type, STD);
    assert_int_equal(fa.state, HALF);

    /* Frame-func mid-stack in the unreached body: the record at x29 (Dyninst's rule). */
    const sw_addr rec = S + 0x40;
    fake_proc_put_word(fx.p, rec, 0x5555);
    fake_proc_put_word(fx.p, rec + 8, ff_sym(&fx, "outer") + 16);
    ff_regs(&fx, ff_sym(&fx, "leaf"), S, rec, sw + 20);
    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    assert_true(fx.st.n >= 3);
    assert_int_equal(fx.st.frames[1].ra, sw + 20);
    assert_int_equal(fx.st.frames[2].ra, ff_sym(&fx, "outer") + 16);
    assert_int_equal(fx.st.frames[2].sp, rec + 16);
    assert_int_equal(fx.st.frames[2].fp, 0x5555);
    assert_int_equal(fx.st.frames[2].trust, SW_TRUST_FP);
    ff_close(&fx);
}

/* ---- walks ----------------------------------------------------------------- */

/* leaf+4 <- multi (after bl leaf, 96 bytes) <- outer (32) <- _start, frame 0's SP = S:
 *   multi's CFA S + 112, its record at S + 96; outer's CFA S + 144, its record at S + 112. */
static void
put_chain(struct ff_fixture *fx)
{
    fake_proc_put_word(fx->p, S + 96, S + 112); /* multi's record: outer's x29 */
    fake_proc_put_word(fx->p, S + 104, ff_sym(fx, "outer") + 16);
    fake_proc_put_word(fx->p, S + 112, 0); /* outer's record: _start cleared x29 */
    fake_proc_put_word(fx->p, S + 120, ff_sym(fx, "_start") + 8);
}

static void
check_chain(struct ff_fixture *fx)
{
    const struct sw_stack *st = &fx->st;
    assert_int_equal(st->n, 4);
    /* multi: x30, SP above leaf's 16 bytes, x29 untouched */
    assert_int_equal(st->frames[1].ra, ff_sym(fx, "multi") + 36);
    assert_int_equal(st->frames[1].sp, S + 16);
    assert_int_equal(st->frames[1].fp, S + 96);
    assert_int_equal(st->frames[1].ra_loc.kind, SW_LOC_REGISTER);
    /* outer: multi's record at x29 = CFA - 16 */
    assert_int_equal(st->frames[2].ra, ff_sym(fx, "outer") + 16);
    assert_int_equal(st->frames[2].sp, S + 112);
    assert_int_equal(st->frames[2].fp, S + 112);
    assert_int_equal(st->frames[2].ra_loc.addr, S + 104);
    /* _start: outer's record at x29 = CFA - 32 */
    assert_int_equal(st->frames[3].ra, ff_sym(fx, "_start") + 8);
    assert_int_equal(st->frames[3].sp, S + 144);
    assert_int_equal(st->frames[3].fp, 0);
    for (size_t i = 1; i < 4; i++) {
        assert_string_equal(st->frames[i].stepper->ops->name, "frame-func");
        assert_int_equal(st->frames[i].trust, SW_TRUST_FP);
    }
}

static void
test_aarch64_walks_leaf_multi_outer_to_start(void **state)
{
    (void)state;
    struct ff_fixture fx;
    ff_open(&fx, &arch_aarch64, ELF, FF_DEFAULTS);
    put_chain(&fx);
    ff_regs(&fx, ff_sym(&fx, "leaf") + 4, S, S + 96, ff_sym(&fx, "multi") + 36);
    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    check_chain(&fx);
    assert_int_equal(fx.st.end, SW_END_BOTTOM);
    ff_close(&fx);
}

/* Frame 0 in multi at PC with SP, x29 and x30; multi's CFA is C, its record (once stored)
 * holds 0x7777 and outer+16.  The caller must be outer+16 at C. */
static void
check_multi_top(unsigned off, sw_addr sp, sw_addr x29, bool x30_live)
{
    const sw_addr c = S + 0x200;
    struct ff_fixture fx;
    struct sw_frame caller;
    ff_open(&fx, &arch_aarch64, ELF, FF_ALONE);
    const sw_addr ra = ff_sym(&fx, "outer") + 16;
    fake_proc_put_word(fx.p, c - 16, 0x7777);
    fake_proc_put_word(fx.p, c - 8, ra);
    ff_regs(&fx, ff_sym(&fx, "multi") + off, sp, x29, x30_live ? ra : 0xdead);
    ff_step(&fx, &caller);
    if (caller.ra != ra || caller.sp != c)
        fail_msg("multi+%u: caller %#lx at %#lx, want %#lx at %#lx", off, (unsigned long)caller.ra,
                 (unsigned long)caller.sp, (unsigned long)ra, (unsigned long)c);
    assert_int_equal(caller.ra_loc.kind, x30_live ? SW_LOC_REGISTER : SW_LOC_ADDRESS);
    /* the caller's x29: the saved 0x7777 once the record is stored, else x29 itself */
    bool saved = off >= 8 && off != 20 && off != 24 && off != 44 && off != 48;
    assert_int_equal(caller.fp, saved ? 0x7777 : x29);
    sw_word x30 = 0;
    assert_true(sw_frame_reg(&caller, 30, &x30));
    assert_int_equal(x30, ra);
    ff_close(&fx);
}

static void
test_aarch64_frame_0_in_prologue_epilogues_and_sp_arithmetic(void **state)
{
    (void)state;
    const sw_addr c = S + 0x200;
    check_multi_top(0, c, 0x4444, true);        /* entry */
    check_multi_top(4, c - 64, 0x4444, true);   /* locals, no record yet */
    check_multi_top(8, c - 64, 0x4444, false);  /* record stored, x29 not set */
    check_multi_top(12, c - 64, c - 16, false); /* set */
    check_multi_top(16, c - 64, c - 16, false); /* first exit: the record ahead */
    check_multi_top(20, c - 64, 0x4444, true);  /* reloaded, 64 bytes to free */
    check_multi_top(24, c, 0x4444, true);       /* ret */
    check_multi_top(32, c - 96, c - 16, false); /* more locals: the call */
    check_multi_top(40, c - 64, c - 16, false); /* second exit */
    check_multi_top(44, c - 64, 0x4444, true);
    check_multi_top(48, c, 0x4444, true);
}

static void
test_aarch64_mid_stack_savefp_omitfp_and_signed_frames(void **state)
{
    (void)state;
    struct ff_fixture fx;
    struct sw_frame caller;
    ff_open(&fx, &arch_aarch64, ELF, FF_ALONE);
    const sw_addr ra = ff_sym(&fx, "outer") + 16;
    /* leaf at entry, returning into savefp (x29 saved with x30, no frame pointer): the
     * record found from SP, 16 bytes above */
    fake_proc_put_word(fx.p, S, 0x6666);
    fake_proc_put_word(fx.p, S + 8, ra);
    ff_regs(&fx, ff_sym(&fx, "leaf"), S, 0x1234, ff_sym(&fx, "savefp") + 12);
    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    assert_true(fx.st.n >= 3);
    assert_int_equal(fx.st.frames[2].ra, ra);
    assert_int_equal(fx.st.frames[2].sp, S + 16);
    assert_int_equal(fx.st.frames[2].fp, 0x6666);
    assert_int_equal(fx.st.frames[2].trust, SW_TRUST_ANALYSIS);
    sw_stack_fini(&fx.st);
    /* ...into omitfp (x30 alone at SP; a return address a walk believes: in
     * the module, after a call) */
    const sw_addr start_ra = ff_sym(&fx, "_start") + 8;
    fake_proc_put_word(fx.p, S, start_ra);
    ff_regs(&fx, ff_sym(&fx, "leaf"), S, 0x1234, ff_sym(&fx, "omitfp") + 8);
    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    assert_true(fx.st.n >= 3);
    assert_int_equal(fx.st.frames[2].ra, start_ra); /* x30's slot is SP + 0 */
    assert_int_equal(fx.st.frames[2].sp, S + 16);
    assert_int_equal(fx.st.frames[2].fp, 0x1234);
    sw_stack_fini(&fx.st);
    /* frame 0 in pacfn, set: the saved x30 carries a PAC in bits 54:48 */
    fake_proc_put_word(fx.p, S + 8, 0x002a000000000000ull | ra);
    ff_regs(&fx, ff_sym(&fx, "pacfn") + 16, S, S, 0);
    ff_step(&fx, &caller);
    assert_int_equal(caller.ra, ra);
    assert_int_equal(caller.sp, S + 16);
    ff_close(&fx);
}

/* ---- the cache ------------------------------------------------------------- */

static void
check_cached_once(enum ff_steppers which, unsigned functions)
{
    struct ff_fixture fx;
    struct sw_frame_alloc fa;
    ff_open(&fx, &arch_aarch64, ELF, which);
    put_chain(&fx);
    ff_regs(&fx, ff_sym(&fx, "leaf") + 4, S, S + 96, ff_sym(&fx, "multi") + 36);
    assert_int_equal(sw_analysis_count(fx.w), 0);
    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    assert_true(fx.st.n >= 4);
    assert_int_equal(sw_analysis_count(fx.w), functions);
    sw_stack_fini(&fx.st);
    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    for (unsigned off = 0; off <= 48; off += 4)
        assert_int_equal(sw_frame_func_alloc(fx.w, ff_sym(&fx, "multi") + off, true, &fa), 0);
    assert_int_equal(sw_analysis_count(fx.w), functions);
    ff_close(&fx);
}

static void
test_each_function_is_analysed_once_per_walker(void **state)
{
    (void)state;
    /* leaf, multi and outer; _start is the stack bottom's */
    check_cached_once(FF_DEFAULTS, 3); /* the analysis stepper's cache, shared */
    /* ...and _start, which frame-func alone asks about (it has no caller) */
    check_cached_once(FF_ALONE, 4); /* frame-func's own */
}

static void
test_without_a_cache_every_query_analyses_again(void **state)
{
    (void)state;
    struct ff_fixture fx;
    struct sw_frame_alloc fa;
    ff_open(&fx, &arch_aarch64, ELF, FF_NONE);
    assert_int_equal(sw_frame_func_alloc(fx.w, ff_sym(&fx, "multi") + 12, true, &fa), 0);
    assert_int_equal(fa.state, SET);
    assert_int_equal(sw_analysis_count(fx.w), 0);
    ff_close(&fx);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_aarch64_heights_and_pairs_at_every_pc),
        cmocka_unit_test(test_aarch64_slots_are_cfa_relative_and_after_a_call),
        cmocka_unit_test(test_aarch64_pc_outside_any_function_is_unknown),
        cmocka_unit_test(test_aarch64_pc_the_analysis_does_not_reach),
        cmocka_unit_test(test_aarch64_walks_leaf_multi_outer_to_start),
        cmocka_unit_test(test_aarch64_frame_0_in_prologue_epilogues_and_sp_arithmetic),
        cmocka_unit_test(test_aarch64_mid_stack_savefp_omitfp_and_signed_frames),
        cmocka_unit_test(test_each_function_is_analysed_once_per_walker),
        cmocka_unit_test(test_without_a_cache_every_query_analyses_again),
    };
    return cmocka_run_group_tests_name("frame_func", tests, NULL, NULL);
}
