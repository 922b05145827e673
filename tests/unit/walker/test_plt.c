/* tests/unit/walker/test_plt.c -- frame 0 in a linker stub no symbol or CFI covers.
 *
 * tests/unit/data/aarch64_plt.S (a .plt as GNU ld lays it out: PLT0, then 16-byte entries)
 * and ppc64_plt.S / ppc64le_plt.S (a plt_call stub in .text after its sizeless symbol),
 * linked static; each walked on a fake stack where the stub's caller, main, has built its
 * frame: x29 (PowerPC: the back chain at r1) leads to main's own record, older than the
 * return address the link register holds.  The walk must be stub -> main -> outer -> _start,
 * never skip main.  x86's linkers give .plt CFI (the debug stepper's).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/walker/test_frame_func.h"

#define A64     SW_TEST_DATA "/aarch64_plt.elf"
#define PPC64   SW_TEST_DATA "/ppc64_plt.elf"
#define PPC64LE SW_TEST_DATA "/ppc64le_plt.elf"
#define STUB64  "0000001b.plt_call.puts"

#define S 0x7fff0400u /* main's SP, frame 0's unless a stub pushed */

/* The run-time address of LIB's .plt (static: the link-time one). */
static sw_addr
plt_of(struct ff_fixture *fx)
{
    const uint8_t *data;
    size_t len;
    sw_addr addr;
    if (sw_elf_section(fx->elf, ".plt", false, &data, &len, &addr) != 0)
        fail_msg("no .plt in the test ELF");
    assert_int_equal(len, 64);
    return addr;
}

/* aarch64: main's record at S (x29 = S) holds outer's x29 (S + 48) and outer + 12; outer's at
 * S + 48 holds 0 (_start cleared x29) and _start + 8. */
static void
a64_stack(struct ff_fixture *fx)
{
    fake_proc_put_word(fx->p, S, S + 48);
    fake_proc_put_word(fx->p, S + 8, ff_sym(fx, "outer") + 12);
    fake_proc_put_word(fx->p, S + 48, 0);
    fake_proc_put_word(fx->p, S + 56, ff_sym(fx, "_start") + 8);
}

/* The walk from frame 0 at PC with SP, main's return address RA in x30: the stub, main
 * (RA, at S), outer, _start, the bottom. */
static void
a64_check_walk(struct ff_fixture *fx, sw_addr pc, sw_addr sp, sw_addr ra, bool slot)
{
    ff_regs(fx, pc, sp, S, ra);
    assert_int_equal(sw_walk_stack(fx->w, SW_TID_DEFAULT, &fx->st), 0);
    const struct sw_frame *f = fx->st.frames;
    if (fx->st.n < 2 || f[1].ra != ra || f[1].sp != S)
        fail_msg("pc %#lx: caller %#lx at %#lx, want main's %#lx at %#lx", (unsigned long)pc,
                 fx->st.n < 2 ? 0ul : (unsigned long)f[1].ra,
                 fx->st.n < 2 ? 0ul : (unsigned long)f[1].sp, (unsigned long)ra, (unsigned long)S);
    assert_int_equal(fx->st.n, 4);
    assert_int_equal(fx->st.end, SW_END_BOTTOM);
    assert_int_equal(f[0].ra, pc);
    assert_int_equal(f[1].fp, S); /* x29 untouched by the stub */
    assert_int_equal(f[1].ra_loc.kind, slot ? SW_LOC_ADDRESS : SW_LOC_REGISTER);
    assert_int_equal(f[2].ra, ff_sym(fx, "outer") + 12);
    assert_int_equal(f[2].sp, S + 48);
    assert_int_equal(f[2].fp, S + 48);
    assert_int_equal(f[3].ra, ff_sym(fx, "_start") + 8);
    assert_int_equal(f[3].sp, S + 80);
    assert_int_equal(f[3].fp, 0);
    for (size_t i = 1; i < 4; i++)
        assert_string_equal(f[i].stepper->ops->name, "frame-func");
}

static void
test_aarch64_plt_entry_returns_by_x30_not_the_record_at_x29(void **state)
{
    (void)state;
    struct ff_fixture fx;
    ff_open(&fx, &arch_aarch64, A64, FF_DEFAULTS);
    a64_stack(&fx);
    const sw_addr plt = plt_of(&fx), main = ff_sym(&fx, "main");
    for (unsigned off = 32; off < 64; off += 4) /* both entries, every instruction */
        a64_check_walk(&fx, plt + off, S, main + (off < 48 ? 12 : 16), false);
    /* PLT0's padding after its jump: run only as the entry after it would be */
    a64_check_walk(&fx, plt + 24, S, main + 12, false);
    ff_close(&fx);
}

static void
test_aarch64_plt0_steps_over_its_push_of_x16_and_x30(void **state)
{
    (void)state;
    struct ff_fixture fx;
    ff_open(&fx, &arch_aarch64, A64, FF_DEFAULTS);
    a64_stack(&fx);
    const sw_addr plt = plt_of(&fx), ra = ff_sym(&fx, "main") + 12;
    a64_check_walk(&fx, plt, S, ra, false); /* before stp x16, x30, [sp, #-16]! */
    fake_proc_put_word(fx.p, S - 16, 0x1616);
    fake_proc_put_word(fx.p, S - 8, ra);
    for (unsigned off = 4; off <= 16; off += 4)
        a64_check_walk(&fx, plt + off, S - 16, ra, true);
    assert_int_equal(fx.st.frames[1].ra_loc.addr, S - 8);
    ff_close(&fx);
}

static void
test_aarch64_plt_stubs_are_analysed_from_the_previous_jump(void **state)
{
    (void)state;
    struct ff_fixture fx;
    struct sw_an_func fn;
    struct sw_an_pc at;
    struct sw_frame_alloc fa;
    ff_open(&fx, &arch_aarch64, A64, FF_ALONE);
    const sw_addr plt = plt_of(&fx);
    /* the first entry runs from PLT0's br (its padding included) to its own br */
    assert_int_equal(sw_analysis_func(fx.w, plt + 40, true, &fn, &at), 0);
    assert_int_equal(fn.start, plt + 20);
    assert_int_equal(fn.size, 28);
    assert_true(!fn.saves_fp && !fn.saves_ra && !fn.allocates);
    assert_true(at.sp_known);
    assert_int_equal(at.height, 0);
    assert_int_equal(at.ra, SW_AN_RA_LIVE);
    assert_int_equal(sw_frame_func_alloc(fx.w, plt + 40, true, &fa), 0);
    assert_int_equal(fa.type, SW_FRAME_NO_FRAME);
    assert_int_equal(fa.state, SW_FRAME_UNSET);
    assert_int_equal(sw_analysis_func(fx.w, plt + 48, true, &fn, &at), 0);
    assert_int_equal(fn.start, plt + 48);
    assert_int_equal(fn.size, 16);
    /* PLT0: x30 pushed with x16 */
    assert_int_equal(sw_analysis_func(fx.w, plt + 8, true, &fn, &at), 0);
    assert_int_equal(fn.start, plt);
    assert_int_equal(fn.size, 20);
    assert_int_equal(at.height, 16);
    assert_int_equal(at.ra, SW_AN_RA_SLOT);
    assert_int_equal(at.ra_off, -8);
    assert_int_equal(sw_frame_func_alloc(fx.w, plt + 8, true, &fa), 0);
    assert_int_equal(fa.type, SW_FRAME_NO_FRAME);
    assert_int_equal(fa.state, SW_FRAME_SET);
    /* code outside the .plt that no symbol covers stays unknown */
    assert_int_equal(sw_analysis_at(fx.w, plt + 64 + 0x1000, true, &at), SW_ENOSYM);
    ff_close(&fx);
}

/* ppc64: main's frame at S (back chain S + 112), main's LR in outer's header at S + 128;
 * outer's frame at S + 112 (back chain S + 240), its LR in _start's header at S + 256;
 * _start's back chain 0.  Frame 0 in the stub with the LR = main + 16. */
static void
ppc64_check_walks(const struct arch_desc *a, const char *elf, unsigned stub_len)
{
    struct ff_fixture fx;
    ff_open(&fx, a, elf, FF_DEFAULTS);
    const sw_addr stub = ff_sym(&fx, STUB64), main = ff_sym(&fx, "main");
    const sw_addr outer = ff_sym(&fx, "outer"), start = ff_sym(&fx, "_start");
    fake_proc_put_word(fx.p, S, S + 112);
    fake_proc_put_word(fx.p, S + 112 + 16, outer + 16);
    fake_proc_put_word(fx.p, S + 112, S + 240);
    fake_proc_put_word(fx.p, S + 240 + 16, start + 8);
    for (unsigned off = 0; off < stub_len; off += 4) {
        ff_regs(&fx, stub + off, S, 0x3131, main + 16);
        assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
        const struct sw_frame *f = fx.st.frames;
        if (fx.st.n < 2 || f[1].ra != main + 16 || f[1].sp != S)
            fail_msg("%s+%u: caller %#lx at %#lx, want main+16 at %#lx", STUB64, off,
                     fx.st.n < 2 ? 0ul : (unsigned long)f[1].ra,
                     fx.st.n < 2 ? 0ul : (unsigned long)f[1].sp, (unsigned long)S);
        assert_int_equal(fx.st.n, 4);
        assert_int_equal(fx.st.end, SW_END_BOTTOM);
        assert_int_equal(f[1].ra_loc.kind, SW_LOC_REGISTER);
        assert_int_equal(f[2].ra, outer + 16);
        assert_int_equal(f[2].sp, S + 112);
        assert_int_equal(f[3].ra, start + 8);
        assert_int_equal(f[3].sp, S + 240);
        assert_string_equal(f[1].stepper->ops->name, "frame-func");
    }
    /* the stub analysed from its symbol to its jump; a sizeless symbol that names no
     * stub gives no function */
    struct sw_an_func fn;
    struct sw_an_pc at;
    assert_int_equal(sw_analysis_func(fx.w, stub + 8, true, &fn, &at), 0);
    assert_int_equal(fn.start, stub);
    assert_int_equal(fn.size, stub_len);
    assert_int_equal(at.ra, SW_AN_RA_LIVE);
    assert_int_equal(at.height, 0);
    assert_int_equal(sw_analysis_at(fx.w, ff_sym(&fx, "helper"), true, &at), SW_ENOSYM);
    ff_close(&fx);
}

static void
test_ppc64_plt_call_stub_returns_by_the_lr_not_the_back_chain(void **state)
{
    (void)state;
    ppc64_check_walks(&arch_ppc64, PPC64, 28);     /* ELFv1: to the b to the resolver */
    ppc64_check_walks(&arch_ppc64le, PPC64LE, 16); /* ELFv2: to the bctr */
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_aarch64_plt_entry_returns_by_x30_not_the_record_at_x29),
        cmocka_unit_test(test_aarch64_plt0_steps_over_its_push_of_x16_and_x30),
        cmocka_unit_test(test_aarch64_plt_stubs_are_analysed_from_the_previous_jump),
        cmocka_unit_test(test_ppc64_plt_call_stub_returns_by_the_lr_not_the_back_chain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
