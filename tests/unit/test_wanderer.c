/* tests/unit/test_wanderer.c -- the wanderer (stack scanning) on known code.
 *
 * The code is tests/unit/data/x86_64_frames.S (see test_steppers.c for its
 * layout), linked static at 0x401000; the stack is built in a fake process and
 * the wanderer is the only stepper, so every caller here is found by scanning.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rspwalk/rspwalk.h"
#include "tests/tools/fake_proc.h"

#define ELF SW_TEST_DATA "/x86_64_frames.elf"

#define START_RA 0x401007u /* after `call std_func` in _start */
#define STD      0x401008u
#define STD_RA   0x401019u /* after `call savefp_func` in std_func */
#define SAVEFP   0x40101cu
#define NOFRAME  0x401020u
#define TRAMP    0x401029u

#define STACK  0x7fff0000u
#define DW_RBP 6
#define DW_RSP 7
#define DW_RIP 16

struct wand_fixture {
    struct sw_proc *p;
    struct sw_walker *w;
    struct sw_frame top, out;
    enum sw_walk_end end;
};

static void
wand_open(struct wand_fixture *fx, sw_addr pc, sw_addr sp)
{
    fx->p = fake_proc_new(&arch_x86_64);
    fake_proc_add_mem(fx->p, STACK, NULL, 0x1000);
    fake_proc_set_reg(fx->p, 1, DW_RIP, pc);
    fake_proc_set_reg(fx->p, 1, DW_RSP, sp);
    fake_proc_set_reg(fx->p, 1, DW_RBP, 0x1234);
    struct sw_walker_config cfg = { .exe = ELF, .no_default_steppers = true };
    struct sw_errbuf err = { 0 };
    if (sw_walker_new(fx->p, &cfg, &fx->w, &err) != 0)
        fail_msg("sw_walker_new: %s", err.msg);
    struct sw_stepper *s = sw_stepper_wanderer_new();
    assert_non_null(s);
    assert_int_equal(sw_add_stepper(fx->w, s), 0);
}

/* One step from the thread's registers: returns sw_walk_single's code. */
static int
wand_step(struct wand_fixture *fx)
{
    assert_int_equal(sw_initial_frame(fx->w, SW_TID_DEFAULT, &fx->top), 0);
    return sw_walk_single(fx->w, &fx->top, &fx->out, &fx->end);
}

static void
test_wanderer_takes_the_return_address_after_a_call_to_the_current_function(void **state)
{
    (void)state;
    struct wand_fixture fx;
    sw_addr sp0 = STACK + 0x100;
    wand_open(&fx, SAVEFP + 1, sp0);
    fake_proc_put_word(fx.p, sp0, STACK + 0x200); /* a stack address: no code */
    fake_proc_put_word(fx.p, sp0 + 8, STD_RA);    /* after `call savefp_func` */

    assert_int_equal(wand_step(&fx), 0);
    assert_int_equal(fx.out.ra, STD_RA);
    assert_int_equal(fx.out.sp, sp0 + 16); /* x86: just above the pushed return address */
    assert_int_equal(fx.out.fp, 0x1234);   /* unchanged */
    assert_int_equal(fx.out.ra_loc.kind, SW_LOC_ADDRESS);
    assert_int_equal(fx.out.ra_loc.addr, sp0 + 8);
    assert_int_equal(fx.out.trust, SW_TRUST_SCAN);
    assert_string_equal(fx.out.stepper->ops->name, "wanderer");
    sw_walker_free(fx.w);
}

static void
test_wanderer_skips_stale_return_addresses_into_the_current_function(void **state)
{
    (void)state;
    struct wand_fixture fx;
    sw_addr sp0 = STACK + 0x100;
    wand_open(&fx, STD + 17, sp0);         /* std_func, after its call */
    fake_proc_put_word(fx.p, sp0, STD_RA); /* left over from that call */
    fake_proc_put_word(fx.p, sp0 + 16, START_RA);

    assert_int_equal(wand_step(&fx), 0);
    assert_int_equal(fx.out.ra, START_RA);
    assert_int_equal(fx.out.sp, sp0 + 24);
    sw_walker_free(fx.w);
}

static void
test_wanderer_without_a_call_to_the_function_takes_the_first_call(void **state)
{
    (void)state;
    struct wand_fixture fx;
    sw_addr sp0 = STACK + 0x100;
    /* Nothing calls noframe_func: a caller that tail-called it is the best guess. */
    wand_open(&fx, NOFRAME + 4, sp0);
    fake_proc_put_word(fx.p, sp0 + 8, START_RA);
    fake_proc_put_word(fx.p, sp0 + 24, STD_RA);

    assert_int_equal(wand_step(&fx), 0);
    assert_int_equal(fx.out.ra, START_RA);
    assert_int_equal(fx.out.sp, sp0 + 16);
    sw_walker_free(fx.w);
}

static void
test_wanderer_accepts_a_signal_trampoline_as_a_handler_return_address(void **state)
{
    (void)state;
    struct wand_fixture fx;
    sw_addr sp0 = STACK + 0x100;
    wand_open(&fx, NOFRAME + 4, sp0);
    fake_proc_put_word(fx.p, sp0 + 8, TRAMP); /* no call before it: the kernel put it there */

    assert_int_equal(wand_step(&fx), 0);
    assert_int_equal(fx.out.ra, TRAMP);
    assert_int_equal(fx.out.kind, SW_FRAME_SIGNAL);
    sw_walker_free(fx.w);
}

static void
test_wanderer_finding_nothing_is_not_mine(void **state)
{
    (void)state;
    struct wand_fixture fx;
    wand_open(&fx, NOFRAME + 4, STACK + 0x100); /* the stack is all zeros */

    assert_int_equal(wand_step(&fx), SW_ENOENT);
    assert_int_equal(fx.end, SW_END_NO_STEPPER);
    sw_walker_free(fx.w);
}

static void
test_wanderer_reads_a_shorter_window_at_the_top_of_the_stack(void **state)
{
    (void)state;
    struct wand_fixture fx;
    sw_addr sp0 = STACK + 0x1000 - 32; /* 4 words left before unmapped memory */
    wand_open(&fx, SAVEFP + 1, sp0);
    fake_proc_put_word(fx.p, sp0 + 16, STD_RA);

    assert_int_equal(wand_step(&fx), 0);
    assert_int_equal(fx.out.ra, STD_RA);
    assert_int_equal(fx.out.sp, sp0 + 24);
    sw_walker_free(fx.w);
}

static void
test_wanderer_reads_no_code_for_words_that_cannot_be_return_addresses(void **state)
{
    (void)state;
    struct wand_fixture fx;
    sw_addr sp0 = STACK + 0x100;
    wand_open(&fx, SAVEFP + 1, sp0);
    /* Small numbers (below the 64 KiB never mapped) are no code: checking one for a
     * signal trampoline would read the target, a round trip each. */
    for (unsigned i = 0; i < 16; i++)
        fake_proc_put_word(fx.p, sp0 + 8 * i, 0x10 + i);
    fake_proc_put_word(fx.p, sp0 + 8 * 16, STD_RA);
    assert_int_equal(sw_initial_frame(fx.w, SW_TID_DEFAULT, &fx.top), 0);
    unsigned before = fake_proc_reads(fx.p);

    assert_int_equal(sw_walk_single(fx.w, &fx.top, &fx.out, &fx.end), 0);
    assert_int_equal(fx.out.ra, STD_RA);
    assert_int_equal(fake_proc_reads(fx.p) - before, 1); /* the window, nothing else */
    sw_walker_free(fx.w);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_wanderer_takes_the_return_address_after_a_call_to_the_current_function),
        cmocka_unit_test(test_wanderer_skips_stale_return_addresses_into_the_current_function),
        cmocka_unit_test(test_wanderer_without_a_call_to_the_function_takes_the_first_call),
        cmocka_unit_test(test_wanderer_accepts_a_signal_trampoline_as_a_handler_return_address),
        cmocka_unit_test(test_wanderer_finding_nothing_is_not_mine),
        cmocka_unit_test(test_wanderer_reads_a_shorter_window_at_the_top_of_the_stack),
        cmocka_unit_test(test_wanderer_reads_no_code_for_words_that_cannot_be_return_addresses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
