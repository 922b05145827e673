/* tests/unit/walker/test_frame_func_entry.c -- frame 0 in JIT code outside its frame record
 * (x86-64).
 *
 * The bytes are V8's (node 20, TurboFan code of a small function, read from a stopped node):
 * the entry's deoptimization check, `push %rbp; mov %rsp,%rbp`, and the epilogue that tests
 * the argument count between `pop %rbp` and `ret $0x10`.  No module covers them (a fake
 * process without an executable), so the analysis knows no function there: only the entry
 * scan (frame_func_entry.c) tells where the return address is.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rspwalk/rspwalk.h"
#include "tests/tools/fake_proc.h"
#include "walker/steppers/frame_func.h"

#define STACK  0x7fff0000u
#define S      0x7fff0400u /* frame 0's SP */
#define FP0    0x7fff0480u /* frame 0's RBP: the caller's record, if it has one */
#define DW_RBP 6
#define DW_RSP 7
#define DW_RIP 16

/* 0x7fffd00075c0:
 *   mov -0x8(%rcx),%rbx; testb $0x1,0x35(%rbx); jne <CompileLazyDeoptimizedCode>
 *   +0xe push %rbp; +0xf mov %rsp,%rbp; +0x12 push %rsi; push %rdi; push %rax; sub $0x8,%rsp */
#define ENTRY 0x7fffd00075c0u
static const uint8_t entry_code[] = {
    0x48, 0x8b, 0x59, 0xf8, 0xf6, 0x43, 0x35, 0x01, 0x0f, 0x85, 0xf2, 0x5b, 0xe4, 0x1f, 0x55, 0x48,
    0x89, 0xe5, 0x56, 0x57, 0x50, 0x48, 0x83, 0xec, 0x08, 0x48, 0x89, 0x75, 0xe0, 0x49, 0x3b, 0x65,
};

/* 0x7fffd0007610:
 *   mov -0x18(%rbp),%ecx; +0x3 mov %rbp,%rsp; +0x6 pop %rbp; +0x7 cmp $0x2,%rcx;
 *   +0xb jg +0x10; +0xd ret $0x10; int3 (the padding V8 puts after code) */
#define EXIT 0x7fffd0007610u
static const uint8_t exit_code[] = {
    0x8b, 0x4d, 0xe8, 0x48, 0x8b, 0xe5, 0x5d, 0x48, 0x83, 0xf9,
    0x02, 0x7f, 0x03, 0xc2, 0x10, 0x00, 0xcc, 0xcc, 0xcc, 0xcc,
};

#define RA_AT_SP  0x7fffd000730fu /* the word at S: the caller's return address */
#define WORD_S8   0x7fffd0007400u /* the word at S + 8 */
#define RA_AT_FP8 0x7fffd0001234u /* the caller's record's return address, at FP0 + 8 */

struct entry_fixture {
    struct sw_proc *p;
    struct sw_walker *w;
    struct sw_stack st;
};

/* A walk of frame 0 at PC with SP = S and RBP = FP, by the frame-pointer stepper alone. */
static void
walk_at(struct entry_fixture *fx, sw_addr pc, sw_addr fp)
{
    fx->p = fake_proc_new(&arch_x86_64);
    fake_proc_add_mem(fx->p, STACK, NULL, 0x1000);
    fake_proc_add_mem(fx->p, ENTRY, entry_code, sizeof entry_code);
    fake_proc_add_mem(fx->p, EXIT, exit_code, sizeof exit_code);
    fake_proc_put_word(fx->p, S, RA_AT_SP);
    fake_proc_put_word(fx->p, S + 8, WORD_S8);
    fake_proc_put_word(fx->p, FP0, 0); /* the outermost record */
    fake_proc_put_word(fx->p, FP0 + 8, RA_AT_FP8);
    fake_proc_set_reg(fx->p, 1, DW_RIP, pc);
    fake_proc_set_reg(fx->p, 1, DW_RSP, S);
    fake_proc_set_reg(fx->p, 1, DW_RBP, fp);
    struct sw_walker_config cfg = { .no_default_steppers = true };
    struct sw_errbuf err = { 0 };
    if (sw_walker_new(fx->p, &cfg, &fx->w, &err) != 0)
        fail_msg("sw_walker_new: %s", err.msg);
    if (sw_add_stepper(fx->w, sw_stepper_frame_func_new()) != 0)
        fail_msg("sw_add_stepper: %s", sw_walker_errmsg(fx->w));
    sw_stack_init(&fx->st);
    assert_int_equal(sw_walk_stack(fx->w, SW_TID_DEFAULT, &fx->st), 0);
    assert_true(fx->st.n >= 2);
}

static void
entry_close(struct entry_fixture *fx)
{
    sw_stack_fini(&fx->st);
    sw_walker_free(fx->w);
}

/* Frame 1 is [SP], SP + 8, RBP as it was: no record is pushed. */
static void
check_ra_at_sp(sw_addr pc)
{
    struct entry_fixture fx;
    walk_at(&fx, pc, FP0);
    assert_int_equal(fx.st.frames[1].ra, RA_AT_SP);
    assert_int_equal(fx.st.frames[1].sp, S + 8);
    assert_int_equal(fx.st.frames[1].fp, FP0);
    assert_int_equal(fx.st.frames[1].ra_loc.kind, SW_LOC_ADDRESS);
    assert_int_equal(fx.st.frames[1].ra_loc.addr, S);
    entry_close(&fx);
}

static void
test_entry_before_the_check_takes_ra_from_sp(void **state)
{
    (void)state;
    check_ra_at_sp(ENTRY);
}

static void
test_entry_at_the_checks_jump_takes_ra_from_sp(void **state)
{
    (void)state;
    check_ra_at_sp(ENTRY + 0x8);
}

static void
test_entry_at_push_rbp_takes_ra_from_sp(void **state)
{
    (void)state;
    check_ra_at_sp(ENTRY + 0xe);
}

static void
test_entry_after_push_rbp_reads_saved_fp(void **state)
{
    (void)state;
    struct entry_fixture fx;
    walk_at(&fx, ENTRY + 0xf, FP0);
    assert_int_equal(fx.st.frames[1].ra, WORD_S8);
    assert_int_equal(fx.st.frames[1].sp, S + 16);
    assert_int_equal(fx.st.frames[1].fp, RA_AT_SP); /* the word pushed: the caller's RBP */
    assert_int_equal(fx.st.frames[1].fp_loc.addr, S);
    entry_close(&fx);
}

static void
test_entry_with_record_set_follows_rbp(void **state)
{
    (void)state;
    struct entry_fixture fx;
    walk_at(&fx, ENTRY + 0x12, FP0); /* after mov %rsp,%rbp: the record at RBP */
    assert_int_equal(fx.st.frames[1].ra, RA_AT_FP8);
    assert_int_equal(fx.st.frames[1].sp, FP0 + 16);
    entry_close(&fx);
}

static void
test_exit_after_pop_rbp_takes_ra_from_sp(void **state)
{
    (void)state;
    check_ra_at_sp(EXIT + 0x7); /* cmp; jg; ret $0x10 ahead */
    check_ra_at_sp(EXIT + 0xd); /* the ret itself */
}

static void
test_exit_before_teardown_follows_rbp(void **state)
{
    (void)state;
    struct entry_fixture fx;
    /* mov -0x18(%rbp),%ecx then mov %rbp,%rsp: the record still stands */
    walk_at(&fx, EXIT, FP0);
    assert_int_equal(fx.st.frames[1].ra, RA_AT_FP8);
    assert_int_equal(fx.st.frames[1].sp, FP0 + 16);
    entry_close(&fx);
}

static void
test_entry_scan_unreadable_code_is_no_fact(void **state)
{
    (void)state;
    struct entry_fixture fx;
    /* no code at the PC: the stepper falls back to the record at RBP */
    walk_at(&fx, 0x7fffd0100000u, FP0);
    assert_int_equal(fx.st.frames[1].ra, RA_AT_FP8);
    entry_close(&fx);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entry_before_the_check_takes_ra_from_sp),
        cmocka_unit_test(test_entry_at_the_checks_jump_takes_ra_from_sp),
        cmocka_unit_test(test_entry_at_push_rbp_takes_ra_from_sp),
        cmocka_unit_test(test_entry_after_push_rbp_reads_saved_fp),
        cmocka_unit_test(test_entry_with_record_set_follows_rbp),
        cmocka_unit_test(test_exit_after_pop_rbp_takes_ra_from_sp),
        cmocka_unit_test(test_exit_before_teardown_follows_rbp),
        cmocka_unit_test(test_entry_scan_unreadable_code_is_no_fact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
