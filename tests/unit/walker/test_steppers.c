/* tests/unit/walker/test_steppers.c -- frame-func, sighandler and stackbottom on known code.
 *
 * The code is tests/unit/data/x86_64_frames.S, linked static at 0x401000 so
 * its addresses are the runtime ones; the stack is built in a fake process.
 * Layout (x86_64_frames.S):
 *   _start       0x401000  xor %ebp,%ebp; call std_func (returns to 0x401007)
 *   std_func     0x401008  endbr64 (+0) push (+4) mov (+5) sub (+8) call (+12) nop (+17) leave ret
 *   savefp_func  0x40101c  push (+0) nop (+1) pop (+2) ret (+3)
 *   noframe_func 0x401020
 *   sig_tramp    0x401029  mov $15,%rax; syscall
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
#include "walker/steppers/frame_func.h"

#define ELF SW_TEST_DATA "/x86_64_frames.elf"

#define START    0x401000u
#define START_RA 0x401007u /* after `call std_func` */
#define STD      0x401008u
#define STD_RA   0x401019u /* after `call savefp_func` */
#define SAVEFP   0x40101cu
#define NOFRAME  0x401020u
#define TRAMP    0x401029u

#define STACK  0x7fff0000u
#define DW_RBP 6
#define DW_RSP 7
#define DW_RIP 16

struct walk_fixture {
    struct sw_proc *p;
    struct sw_walker *w;
    struct sw_stack st;
};

static void
fixture_open(struct walk_fixture *fx, sw_addr pc, sw_addr sp, sw_addr fp, bool defaults)
{
    fx->p = fake_proc_new(&arch_x86_64);
    fake_proc_add_mem(fx->p, STACK, NULL, 0x1000);
    fake_proc_set_reg(fx->p, 1, DW_RIP, pc);
    fake_proc_set_reg(fx->p, 1, DW_RSP, sp);
    fake_proc_set_reg(fx->p, 1, DW_RBP, fp);
    struct sw_walker_config cfg = { .exe = ELF, .no_default_steppers = !defaults };
    struct sw_errbuf err = { 0 };
    int rc = sw_walker_new(fx->p, &cfg, &fx->w, &err);
    if (rc != 0)
        fail_msg("sw_walker_new: %s", err.msg);
    sw_stack_init(&fx->st);
}

static void
fixture_close(struct walk_fixture *fx)
{
    sw_stack_fini(&fx->st);
    sw_walker_free(fx->w);
}

static const char *
frame_name(struct walk_fixture *fx, size_t i)
{
    struct sw_symbol sym;
    if (sw_frame_symbol(fx->w, &fx->st.frames[i], &sym) != 0)
        return "??";
    return sym.name;
}

/* The standard chain: savefp_func (stopped at PC with SP) -> std_func -> _start. */
static void
put_std_chain(struct sw_proc *p, sw_addr f1)
{
    fake_proc_put_word(p, f1, 0);            /* std_func's saved rbp: _start cleared it */
    fake_proc_put_word(p, f1 + 8, START_RA); /* std_func's return address */
}

static void
test_frame_func_walks_a_half_set_frame_to_start(void **state)
{
    (void)state;
    struct walk_fixture fx;
    sw_addr sp0 = STACK + 0x100, f1 = STACK + 0x120;
    fixture_open(&fx, SAVEFP + 1, sp0, f1, true);
    fake_proc_put_word(fx.p, sp0, f1);         /* pushed rbp */
    fake_proc_put_word(fx.p, sp0 + 8, STD_RA); /* return into std_func */
    put_std_chain(fx.p, f1);

    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    assert_int_equal(fx.st.n, 3);
    assert_string_equal(frame_name(&fx, 0), "savefp_func");
    assert_string_equal(frame_name(&fx, 1), "std_func");
    assert_string_equal(frame_name(&fx, 2), "_start");
    assert_int_equal(fx.st.frames[1].ra, STD_RA);
    assert_int_equal(fx.st.frames[1].sp, sp0 + 16);
    assert_int_equal(fx.st.frames[1].fp, f1);
    assert_int_equal(fx.st.frames[1].ra_loc.kind, SW_LOC_ADDRESS);
    assert_int_equal(fx.st.frames[1].ra_loc.addr, sp0 + 8);
    assert_int_equal(fx.st.frames[1].trust, SW_TRUST_FP);
    assert_string_equal(fx.st.frames[1].stepper->ops->name, "frame-func");
    assert_int_equal(fx.st.frames[2].ra, START_RA);
    assert_int_equal(fx.st.frames[2].sp, f1 + 16);
    assert_int_equal(fx.st.end, SW_END_BOTTOM);
    assert_true(fx.st.frames[2].bottom);
    fixture_close(&fx);
}

static void
check_top_state(sw_addr pc, enum sw_frame_type type, enum sw_frame_state state_want)
{
    struct walk_fixture fx;
    struct sw_frame_alloc fa;
    fixture_open(&fx, pc, STACK + 0x100, 0, false);
    assert_int_equal(sw_frame_func_alloc(fx.w, pc, true, &fa), 0);
    assert_int_equal(fa.type, type);
    assert_int_equal(fa.state, state_want);
    fixture_close(&fx);
}

static void
test_frame_func_helper_classifies_prologue_and_epilogue(void **state)
{
    (void)state;
    check_top_state(STD + 0, SW_FRAME_STANDARD, SW_FRAME_UNSET);   /* endbr64 */
    check_top_state(STD + 4, SW_FRAME_STANDARD, SW_FRAME_UNSET);   /* at push */
    check_top_state(STD + 5, SW_FRAME_STANDARD, SW_FRAME_HALFSET); /* after push */
    check_top_state(STD + 8, SW_FRAME_STANDARD, SW_FRAME_SET);     /* after mov */
    check_top_state(STD + 18, SW_FRAME_STANDARD, SW_FRAME_SET);    /* at leave */
    check_top_state(STD + 19, SW_FRAME_STANDARD, SW_FRAME_UNSET);  /* at ret */
    check_top_state(SAVEFP + 1, SW_FRAME_SAVEFP_ONLY, SW_FRAME_HALFSET);
    check_top_state(SAVEFP + 2, SW_FRAME_SAVEFP_ONLY, SW_FRAME_HALFSET); /* pop %rbp; ret */
    check_top_state(NOFRAME, SW_FRAME_NO_FRAME, SW_FRAME_UNSET);
    check_top_state(NOFRAME + 4, SW_FRAME_NO_FRAME, SW_FRAME_SET);

    struct walk_fixture fx;
    struct sw_frame_alloc fa;
    fixture_open(&fx, STD, STACK, 0, false);
    assert_int_equal(sw_frame_func_alloc(fx.w, 0x10, true, &fa), SW_ENOSYM);
    assert_int_equal(fa.type, SW_FRAME_UNKNOWN_T);
    fixture_close(&fx);
}

static void
test_frame_func_at_entry_takes_ra_from_sp(void **state)
{
    (void)state;
    struct walk_fixture fx;
    sw_addr sp0 = STACK + 0x200;
    fixture_open(&fx, STD, sp0, 0x1234, true);
    fake_proc_put_word(fx.p, sp0, START_RA);
    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    assert_int_equal(fx.st.n, 2);
    assert_int_equal(fx.st.frames[1].ra, START_RA);
    assert_int_equal(fx.st.frames[1].sp, sp0 + 8);
    assert_int_equal(fx.st.frames[1].fp, 0x1234); /* unchanged: not pushed yet */
    assert_string_equal(frame_name(&fx, 1), "_start");
    fixture_close(&fx);
}

static void
test_frame_func_at_ret_takes_ra_from_sp(void **state)
{
    (void)state;
    struct walk_fixture fx;
    sw_addr sp0 = STACK + 0x200;
    fixture_open(&fx, STD + 19, sp0, 0, true);
    fake_proc_put_word(fx.p, sp0, START_RA);
    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    assert_int_equal(fx.st.n, 2);
    assert_int_equal(fx.st.frames[1].ra, START_RA);
    assert_int_equal(fx.st.frames[1].sp, sp0 + 8);
    fixture_close(&fx);
}

static void
test_frame_func_after_push_reads_saved_fp(void **state)
{
    (void)state;
    struct walk_fixture fx;
    sw_addr sp0 = STACK + 0x200;
    fixture_open(&fx, STD + 5, sp0, 0x999, true);
    fake_proc_put_word(fx.p, sp0, 0x5555);
    fake_proc_put_word(fx.p, sp0 + 8, START_RA);
    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    assert_int_equal(fx.st.n, 2);
    assert_int_equal(fx.st.frames[1].fp, 0x5555);
    assert_int_equal(fx.st.frames[1].fp_loc.addr, sp0);
    assert_int_equal(fx.st.frames[1].sp, sp0 + 16);
    fixture_close(&fx);
}

static void
test_frame_func_unreadable_frame_ends_with_memory(void **state)
{
    (void)state;
    struct walk_fixture fx;
    fixture_open(&fx, STD + 8, STACK + 0x100, 0x500000000, true); /* rbp outside every region */
    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    assert_int_equal(fx.st.n, 1);
    assert_int_equal(fx.st.end, SW_END_MEMORY);
    fixture_close(&fx);
}

static void
test_frame_func_dead_link_ends_the_walk_with_the_message(void **state)
{
    (void)state;
    struct walk_fixture fx;
    fixture_open(&fx, STD + 8, STACK + 0x100, STACK + 0x120, true);
    fake_proc_fail_reads(fx.p, SW_ETIMEDOUT);
    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    assert_int_equal(fx.st.n, 1);
    assert_int_equal(fx.st.end, SW_END_LINK);
    assert_non_null(strstr(sw_walker_errmsg(fx.w), "injected failure"));
    fixture_close(&fx);
}

static void
test_frame_func_frameless_mid_function_is_not_mine(void **state)
{
    (void)state;
    struct walk_fixture fx;
    fixture_open(&fx, NOFRAME + 4, STACK + 0x100, STACK + 0x120, true);
    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    assert_int_equal(fx.st.n, 1);
    assert_int_equal(fx.st.end, SW_END_NO_STEPPER);
    fixture_close(&fx);
}

static void
test_sighandler_resumes_the_interrupted_frame(void **state)
{
    (void)state;
    struct walk_fixture fx;
    sw_addr h = STACK + 0x300; /* the handler's rbp */
    sw_addr tsp = h + 16;      /* SP at the trampoline: the ucontext */
    sw_addr sp0 = STACK + 0x100, f1 = STACK + 0x120;
    fixture_open(&fx, STD_RA, h - 16, h, true); /* handler = std_func, frame set */
    fake_proc_put_word(fx.p, h, 0x4242);
    fake_proc_put_word(fx.p, h + 8, TRAMP);
    /* ucontext gregs at +40: slot 10 rbp, 15 rsp, 16 rip, 11 rbx. */
    fake_proc_put_word(fx.p, tsp + 40 + 8 * 10, f1);
    fake_proc_put_word(fx.p, tsp + 40 + 8 * 11, 0xb0b0);
    fake_proc_put_word(fx.p, tsp + 40 + 8 * 15, sp0);
    fake_proc_put_word(fx.p, tsp + 40 + 8 * 16, SAVEFP + 1);
    fake_proc_put_word(fx.p, sp0, f1);
    fake_proc_put_word(fx.p, sp0 + 8, STD_RA);
    put_std_chain(fx.p, f1);

    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    assert_int_equal(fx.st.n, 5);
    assert_string_equal(frame_name(&fx, 0), "std_func");
    assert_int_equal(fx.st.frames[1].kind, SW_FRAME_SIGNAL);
    assert_int_equal(fx.st.frames[1].ra, TRAMP);
    assert_true(fx.st.frames[1].non_call);
    assert_string_equal(frame_name(&fx, 1), "sig_tramp");
    assert_int_equal(fx.st.frames[2].ra, SAVEFP + 1);
    assert_int_equal(fx.st.frames[2].sp, sp0);
    assert_true(fx.st.frames[2].non_call);
    assert_int_equal(fx.st.frames[2].trust, SW_TRUST_SIGFRAME);
    assert_string_equal(fx.st.frames[2].stepper->ops->name, "sighandler");
    assert_int_equal(fx.st.frames[2].ra_loc.addr, tsp + 40 + 8 * 16);
    sw_word rbx;
    assert_true(sw_frame_reg(&fx.st.frames[2], 3, &rbx));
    assert_int_equal(rbx, 0xb0b0);
    assert_string_equal(frame_name(&fx, 2), "savefp_func");
    assert_string_equal(frame_name(&fx, 3), "std_func");
    assert_string_equal(frame_name(&fx, 4), "_start");
    assert_int_equal(fx.st.end, SW_END_BOTTOM);
    fixture_close(&fx);
}

static void
test_sighandler_unreadable_context_is_not_mine(void **state)
{
    (void)state;
    struct walk_fixture fx;
    sw_addr sp0 = STACK + 0xffc; /* the ucontext (and even [SP]) runs past the region */
    fixture_open(&fx, TRAMP, sp0, 0, true);
    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    assert_int_equal(fx.st.frames[0].kind, SW_FRAME_SIGNAL);
    assert_int_equal(fx.st.n, 1);
    assert_int_equal(fx.st.end, SW_END_MEMORY);
    fixture_close(&fx);
}

static void
test_stackbottom_ends_at_start_and_zero_pc(void **state)
{
    (void)state;
    struct walk_fixture fx;
    fixture_open(&fx, START + 2, STACK + 0x100, 0, true);
    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    assert_int_equal(fx.st.n, 1);
    assert_int_equal(fx.st.end, SW_END_BOTTOM);
    assert_string_equal(fx.st.frames[0].stepper == NULL ? "none" : "x", "none");
    fixture_close(&fx);

    fixture_open(&fx, 0, STACK + 0x100, 0, true);
    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    assert_int_equal(fx.st.n, 1);
    assert_int_equal(fx.st.end, SW_END_BOTTOM);
    fixture_close(&fx);
}

static void
test_walker_with_non_elf_exe_fails_naming_the_file(void **state)
{
    (void)state;
    struct sw_proc *p = fake_proc_new(&arch_x86_64);
    struct sw_walker_config cfg = { .exe = "/etc/passwd" };
    struct sw_walker *w = NULL;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_walker_new(p, &cfg, &w, &err), SW_EBADELF);
    assert_null(w);
    assert_non_null(strstr(err.msg, "/etc/passwd"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frame_func_walks_a_half_set_frame_to_start),
        cmocka_unit_test(test_frame_func_helper_classifies_prologue_and_epilogue),
        cmocka_unit_test(test_frame_func_at_entry_takes_ra_from_sp),
        cmocka_unit_test(test_frame_func_at_ret_takes_ra_from_sp),
        cmocka_unit_test(test_frame_func_after_push_reads_saved_fp),
        cmocka_unit_test(test_frame_func_unreadable_frame_ends_with_memory),
        cmocka_unit_test(test_frame_func_dead_link_ends_the_walk_with_the_message),
        cmocka_unit_test(test_frame_func_frameless_mid_function_is_not_mine),
        cmocka_unit_test(test_sighandler_resumes_the_interrupted_frame),
        cmocka_unit_test(test_sighandler_unreadable_context_is_not_mine),
        cmocka_unit_test(test_stackbottom_ends_at_start_and_zero_pc),
        cmocka_unit_test(test_walker_with_non_elf_exe_fails_naming_the_file),
    };
    return cmocka_run_group_tests_name("steppers", tests, NULL, NULL);
}
