/* tests/unit/walker/test_step_debug.c -- the debug (DWARF CFI) stepper.
 *
 * Real rows of real files (this test binary's functions and _start, libc's
 * __restore_rt) applied to synthetic stacks in a fake process, synthetic
 * rows for every rule kind and failure, and one walk through a walker.
 * Host-only: runs on x86-64 Linux, where the test machine is.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rspwalk/rspwalk.h"
#include "tests/tools/fake_proc.h"
#include "tests/tools/self_object.h"
#include "util/util.h"
#include "cfi/cfi.h"
#include "expr/expr.h"
#include "walker/steppers/debug_internal.h"

enum { RAX = 0, RBX = 3, RBP = 6, RSP = 7, R12 = 12, RIP = 16 };

#define STACK     0x7ffe0000ull
#define STACK_LEN 0x1000
#define CALLER_RA 0x5555deadbeefull

/* ---- where things are in this process ---------------------------------- */

__attribute__((noinline)) int step_probe_function(int x);
__attribute__((noinline)) int
step_probe_function(int x)
{
    __asm__ volatile("" ::: "memory");
    return x * 5 + 2;
}

extern char _start[];

static volatile uintptr_t restore_rt_addr;

__attribute__((noinline)) static void
catch_return_address(int sig)
{
    (void)sig;
    restore_rt_addr = (uintptr_t)__builtin_return_address(0);
}

static uintptr_t
find_restore_rt(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = catch_return_address;
    assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
    raise(SIGUSR1);
    sigaction(SIGUSR1, &old, NULL);
    assert_true(restore_rt_addr != 0);
    return restore_rt_addr;
}

/* ---- fixture ------------------------------------------------------------ */

struct fx {
    struct sw_proc *p;
    struct sw_cfi *cfi;
    sw_addr bias;
    struct sw_frame in, out;
    struct sw_errbuf err;
};

static void
fx_open(struct fx *fx, const char *path, sw_addr bias)
{
    memset(fx, 0, sizeof *fx);
    fx->p = fake_proc_new(&arch_x86_64);
    assert_non_null(fx->p);
    fake_proc_add_mem(fx->p, STACK, NULL, STACK_LEN);
    assert_int_equal(sw_cfi_open(path, NULL, 8, &fx->cfi, &fx->err), 0);
    fx->bias = bias;
    sw_frame_init(&fx->in);
    sw_frame_init(&fx->out);
    fx->out.ra = 0xdead; /* to see that failures leave it alone */
}

static void
fx_close(struct fx *fx)
{
    sw_cfi_close(fx->cfi);
    sw_proc_free(fx->p);
}

/* Frame 0 as the walker builds it: RA/SP/FP and the registers by number. */
static void
top_frame(struct sw_frame *f, sw_addr pc, sw_addr sp, sw_addr fp)
{
    sw_frame_init(f);
    f->top = true;
    f->thread = 1;
    f->ra = pc;
    f->sp = sp;
    f->fp = fp;
    sw_frame_set_reg(f, RIP, pc);
    sw_frame_set_reg(f, RSP, sp);
    sw_frame_set_reg(f, RBP, fp);
}

static enum sw_gcf
step(struct fx *fx)
{
    return sw_debug_step_with_cfi(&arch_x86_64, fx->p, fx->cfi, fx->bias, &fx->in, &fx->out,
                                  &fx->err);
}

/* ---- real rows ---------------------------------------------------------- */

static void
test_debug_function_entry_caller_is_the_pushed_return_address(void **state)
{
    (void)state;
    struct obj_query q = object_of((uintptr_t)&step_probe_function);
    struct fx fx;
    sw_word v;
    fx_open(&fx, "/proc/self/exe", q.bias);

    sw_addr sp = STACK + 0x800;
    fake_proc_put_word(fx.p, sp, CALLER_RA);
    top_frame(&fx.in, (uintptr_t)&step_probe_function, sp, STACK + 0x900);
    sw_frame_set_reg(&fx.in, RBX, 0x3333);

    assert_int_equal(step(&fx), SW_GCF_SUCCESS);
    assert_int_equal(fx.out.ra, CALLER_RA);
    assert_int_equal(fx.out.sp, sp + 8);
    assert_int_equal(fx.out.fp, STACK + 0x900);
    assert_int_equal(fx.out.ra_loc.kind, SW_LOC_ADDRESS);
    assert_int_equal(fx.out.ra_loc.addr, sp);
    assert_int_equal(fx.out.fp_loc.kind, SW_LOC_REGISTER);
    assert_int_equal(fx.out.fp_loc.reg, RBP);
    assert_int_equal(fx.out.trust, SW_TRUST_CFI);
    assert_int_equal(fx.out.kind, SW_FRAME_NORMAL);
    assert_int_equal(fx.out.thread, 1);
    assert_int_equal(fx.out.level, 1);
    assert_false(fx.out.non_call);
    assert_false(fx.out.top);
    /* The caller's registers: SP is the CFA, PC the RA, rbx unchanged. */
    assert_true(sw_frame_reg(&fx.out, RSP, &v) && v == sp + 8);
    assert_true(sw_frame_reg(&fx.out, RIP, &v) && v == CALLER_RA);
    assert_true(sw_frame_reg(&fx.out, RBX, &v) && v == 0x3333);
    assert_false(sw_frame_reg(&fx.out, R12, &v));
    fx_close(&fx);
}

static void
test_debug_call_frame_is_looked_up_at_ra_minus_1(void **state)
{
    (void)state;
    struct obj_query q = object_of((uintptr_t)&step_probe_function);
    struct fx fx;
    fx_open(&fx, "/proc/self/exe", q.bias);

    /* A non-top frame whose RA is one past the entry: the row used is the
     * entry's (CFA = SP + 8), not whatever follows. */
    sw_addr sp = STACK + 0x400;
    fake_proc_put_word(fx.p, sp, CALLER_RA);
    fx.in.ra = (uintptr_t)&step_probe_function + 1;
    fx.in.sp = sp;
    fx.in.fp = 0x1234;
    assert_int_equal(step(&fx), SW_GCF_SUCCESS);
    assert_int_equal(fx.out.ra, CALLER_RA);
    assert_int_equal(fx.out.sp, sp + 8);
    assert_int_equal(fx.out.fp, 0x1234); /* from IN, not from its registers */
    fx_close(&fx);
}

static void
test_debug_start_is_the_stack_bottom_by_undefined_rip(void **state)
{
    (void)state;
    struct obj_query q = object_of((uintptr_t)_start);
    struct fx fx;
    fx_open(&fx, "/proc/self/exe", q.bias);

    top_frame(&fx.in, (uintptr_t)_start + 4, STACK + 0x800, 0);
    assert_int_equal(step(&fx), SW_GCF_STACKBOTTOM);
    assert_int_equal(fx.out.ra, 0xdead);
    fx_close(&fx);
}

static void
test_debug_restore_rt_unwinds_the_signal_frame_into_an_exact_pc(void **state)
{
    (void)state;
    uintptr_t rt = find_restore_rt();
    struct obj_query q = object_of(rt);
    const struct arch_sigframe *sf = arch_x86_64.sigframe;
    struct fx fx;
    sw_word v;
    fx_open(&fx, q.path, q.bias);

    /* The kernel's ucontext at the trampoline's SP, as arch/x86_64.c lays
     * it out; the interrupted code's SP below the trampoline's (a handler
     * on the same stack never has that, sigaltstack can). */
    sw_addr sp = STACK + 0x100;
    sw_addr g = sp + sf->uc_offset + sf->mcontext_offset;
    sw_addr saved_sp = STACK + 0x40, saved_pc = 0x401234, saved_bp = STACK + 0x80;
    fake_proc_put_word(fx.p, g + 8 * 15, saved_sp);
    fake_proc_put_word(fx.p, g + 8 * 16, saved_pc);
    fake_proc_put_word(fx.p, g + 8 * 10, saved_bp);
    fake_proc_put_word(fx.p, g + 8 * 11, 0xb0b0); /* rbx */
    fake_proc_put_word(fx.p, g + 8 * 4, 0x1212);  /* r12 */
    fx.in.ra = rt;
    fx.in.sp = sp;
    fx.in.fp = 0x999;
    fx.in.kind = SW_FRAME_SIGNAL;
    fx.in.level = 3;

    assert_int_equal(step(&fx), SW_GCF_SUCCESS);
    assert_int_equal(fx.out.ra, saved_pc);
    assert_int_equal(fx.out.sp, saved_sp);
    assert_int_equal(fx.out.fp, saved_bp);
    assert_true(fx.out.non_call);
    assert_int_equal(fx.out.kind, SW_FRAME_NORMAL);
    assert_int_equal(fx.out.ra_loc.kind, SW_LOC_ADDRESS);
    assert_int_equal(fx.out.ra_loc.addr, g + 8 * 16);
    assert_int_equal(fx.out.sp_loc.addr, g + 8 * 15);
    assert_int_equal(fx.out.fp_loc.addr, g + 8 * 10);
    assert_true(sw_frame_reg(&fx.out, RBX, &v) && v == 0xb0b0);
    assert_true(sw_frame_reg(&fx.out, R12, &v) && v == 0x1212);
    assert_true(sw_frame_reg(&fx.out, RSP, &v) && v == saved_sp);
    fx_close(&fx);
}

static void
test_debug_unreadable_return_address_slot_is_not_me(void **state)
{
    (void)state;
    struct obj_query q = object_of((uintptr_t)&step_probe_function);
    struct fx fx;
    fx_open(&fx, "/proc/self/exe", q.bias);

    top_frame(&fx.in, (uintptr_t)&step_probe_function, 0x1000, 0);
    assert_int_equal(step(&fx), SW_GCF_NOT_ME);
    assert_int_equal(fx.err.code, SW_EMEM);
    assert_non_null(strstr(fx.err.msg, "0x1000"));
    assert_non_null(strstr(fx.err.msg, "rip"));
    assert_int_equal(fx.out.ra, 0xdead);
    fx_close(&fx);
}

static void
test_debug_dead_link_is_error_with_the_reason(void **state)
{
    (void)state;
    struct obj_query q = object_of((uintptr_t)&step_probe_function);
    struct fx fx;
    fx_open(&fx, "/proc/self/exe", q.bias);

    top_frame(&fx.in, (uintptr_t)&step_probe_function, STACK + 0x800, 0);
    fake_proc_fail_reads(fx.p, SW_ETIMEDOUT);
    assert_int_equal(step(&fx), SW_GCF_ERROR);
    assert_int_equal(fx.err.code, SW_ETIMEDOUT);
    assert_non_null(strstr(fx.err.msg, "injected failure"));
    assert_int_equal(fx.out.ra, 0xdead);
    fx_close(&fx);
}

static void
test_debug_address_without_fde_is_not_me(void **state)
{
    (void)state;
    struct obj_query q = object_of((uintptr_t)&step_probe_function);
    struct fx fx;
    fx_open(&fx, "/proc/self/exe", q.bias);

    top_frame(&fx.in, q.bias + 0x10, STACK + 0x800, 0);
    assert_int_equal(step(&fx), SW_GCF_NOT_ME);
    assert_int_equal(fx.err.code, SW_ENOCFI);
    assert_non_null(strstr(fx.err.msg, "no FDE"));
    fx_close(&fx);
}

/* ---- synthetic rows ------------------------------------------------------ */

/* The row of a function with a frame pointer, after `push %rbp; mov
 * %rsp,%rbp`: CFA = rbp + 16, rbp at CFA-16, RA at CFA-8. */
static void
fp_row(struct sw_cfi_row *row)
{
    memset(row, 0, sizeof *row);
    for (unsigned i = 0; i < SW_FRAME_MAX_REGS; i++)
        row->rules[i].kind = SW_CFI_SAME;
    row->cfa_reg = RBP;
    row->cfa_offset = 16;
    row->ra_column = RIP;
    row->rules[RIP] = (struct sw_cfi_rule){ .kind = SW_CFI_OFFSET, .offset = -8 };
    row->rules[RBP] = (struct sw_cfi_rule){ .kind = SW_CFI_OFFSET, .offset = -16 };
}

static enum sw_gcf
apply(struct fx *fx, const struct sw_cfi_row *row)
{
    return sw_debug_apply_row(&arch_x86_64, fx->p, row, &fx->in, &fx->out, &fx->err);
}

/* A fake process with the frame-pointer frame at STACK+0x200 and IN at it. */
static void
fx_synthetic(struct fx *fx)
{
    memset(fx, 0, sizeof *fx);
    fx->p = fake_proc_new(&arch_x86_64);
    fake_proc_add_mem(fx->p, STACK, NULL, STACK_LEN);
    sw_addr fp = STACK + 0x200;
    fake_proc_put_word(fx->p, fp, STACK + 0x300); /* saved rbp */
    fake_proc_put_word(fx->p, fp + 8, CALLER_RA); /* return address */
    top_frame(&fx->in, 0x401000, STACK + 0x1f0, fp);
    fx->out.ra = 0xdead;
}

static void
test_debug_frame_pointer_row_recovers_rbp_from_its_slot(void **state)
{
    (void)state;
    static struct sw_cfi_row row;
    struct fx fx;
    fx_synthetic(&fx);
    fp_row(&row);
    assert_int_equal(apply(&fx, &row), SW_GCF_SUCCESS);
    assert_int_equal(fx.out.ra, CALLER_RA);
    assert_int_equal(fx.out.sp, STACK + 0x210);
    assert_int_equal(fx.out.fp, STACK + 0x300);
    assert_int_equal(fx.out.fp_loc.kind, SW_LOC_ADDRESS);
    assert_int_equal(fx.out.fp_loc.addr, STACK + 0x200);
    sw_proc_free(fx.p);
}

static void
test_debug_undefined_return_address_is_stack_bottom(void **state)
{
    (void)state;
    static struct sw_cfi_row row;
    struct fx fx;
    fx_synthetic(&fx);
    fp_row(&row);
    row.rules[RIP].kind = SW_CFI_UNDEFINED;
    assert_int_equal(apply(&fx, &row), SW_GCF_STACKBOTTOM);
    assert_int_equal(fx.out.ra, 0xdead);
    sw_proc_free(fx.p);
}

static void
test_debug_zero_return_address_is_stack_bottom(void **state)
{
    (void)state;
    static struct sw_cfi_row row;
    struct fx fx;
    fx_synthetic(&fx);
    fake_proc_put_word(fx.p, STACK + 0x208, 0);
    fp_row(&row);
    assert_int_equal(apply(&fx, &row), SW_GCF_STACKBOTTOM);
    sw_proc_free(fx.p);
}

static void
test_debug_unknown_cfa_register_is_not_me_naming_it(void **state)
{
    (void)state;
    static struct sw_cfi_row row;
    struct fx fx;
    fx_synthetic(&fx);
    fp_row(&row);
    row.cfa_reg = RBX;
    assert_int_equal(apply(&fx, &row), SW_GCF_NOT_ME);
    assert_non_null(strstr(fx.err.msg, "rbx"));
    assert_int_equal(fx.out.ra, 0xdead);
    sw_proc_free(fx.p);
}

static void
test_debug_caller_sp_not_outward_is_not_me_unless_signal(void **state)
{
    (void)state;
    static struct sw_cfi_row row;
    struct fx fx;
    fx_synthetic(&fx);
    fp_row(&row);
    fx.in.sp = STACK + 0x210; /* the CFA would equal SP: a call pushed nothing? */
    assert_int_equal(apply(&fx, &row), SW_GCF_NOT_ME);
    assert_non_null(strstr(fx.err.msg, "outward"));
    fx.in.kind = SW_FRAME_SIGNAL;
    assert_int_equal(apply(&fx, &row), SW_GCF_SUCCESS);
    assert_int_equal(fx.out.sp, STACK + 0x210);
    sw_proc_free(fx.p);
}

static void
test_debug_register_val_offset_and_expression_rules(void **state)
{
    (void)state;
    static struct sw_cfi_row row;
    static const struct sw_expr_op lit5[] = { { .atom = 0x35 } }; /* DW_OP_lit5 */
    /* lit8 minus (CFA pushed) */
    static const struct sw_expr_op cfa_minus_8[] = { { .atom = 0x38 },
                                                     { .atom = 0x1c, .offset = 1 } };
    static const struct sw_expr_op bad[] = { { .atom = 0xe0 } }; /* unsupported */
    /* breg3 16; deref */
    static const struct sw_expr_op rbx_cfa[] = { { .atom = 0x73, .number = 16 },
                                                 { .atom = 0x06, .offset = 2 } };
    struct fx fx;
    sw_word v;
    fx_synthetic(&fx);
    fp_row(&row);
    sw_frame_set_reg(&fx.in, RBX, 0x4444);
    sw_frame_set_reg(&fx.in, RAX, 0x5555);
    sw_frame_set_reg(&fx.in, 13, 0x1313);
    row.rules[RIP] = (struct sw_cfi_rule){ .kind = SW_CFI_EXPRESSION,
                                           .expr = { .ops = cfa_minus_8, .nops = 2 } };
    row.rules[RBX] = (struct sw_cfi_rule){ .kind = SW_CFI_REGISTER, .reg = RAX };
    row.rules[R12] =
        (struct sw_cfi_rule){ .kind = SW_CFI_VAL_EXPRESSION, .expr = { .ops = lit5, .nops = 1 } };
    row.rules[13] =
        (struct sw_cfi_rule){ .kind = SW_CFI_EXPRESSION, .expr = { .ops = bad, .nops = 1 } };
    /* A block libdwarf could not decode is lost the same way. */
    row.rules[15] =
        (struct sw_cfi_rule){ .kind = SW_CFI_EXPRESSION, .expr = { .undecodable = true } };
    sw_frame_set_reg(&fx.in, 15, 0x1515);
    row.rules[14] = (struct sw_cfi_rule){ .kind = SW_CFI_VAL_OFFSET, .offset = -32 };
    row.rules[RAX] = (struct sw_cfi_rule){ .kind = SW_CFI_UNDEFINED };

    assert_int_equal(apply(&fx, &row), SW_GCF_SUCCESS);
    assert_int_equal(fx.out.ra, CALLER_RA);
    assert_int_equal(fx.out.ra_loc.addr, STACK + 0x208);
    assert_true(sw_frame_reg(&fx.out, RBX, &v) && v == 0x5555);
    assert_true(sw_frame_reg(&fx.out, R12, &v) && v == 5);
    assert_true(sw_frame_reg(&fx.out, 14, &v) && v == STACK + 0x210 - 32);
    assert_false(sw_frame_reg(&fx.out, 13, &v)); /* a bad expression loses the register */
    assert_false(sw_frame_reg(&fx.out, 15, &v));
    assert_false(sw_frame_reg(&fx.out, RAX, &v)); /* undefined: dropped */

    /* A CFA expression using a recovered register. */
    fake_proc_put_word(fx.p, STACK + 0x20, STACK + 0x210);
    sw_frame_set_reg(&fx.in, RBX, STACK + 0x10);
    row.cfa_is_expr = true;
    row.cfa_expr = (struct sw_cfi_expr){ .ops = rbx_cfa, .nops = 2 };
    assert_int_equal(apply(&fx, &row), SW_GCF_SUCCESS);
    assert_int_equal(fx.out.sp, STACK + 0x210);

    /* An unevaluable return address is not this stepper's frame. */
    row.rules[RIP] =
        (struct sw_cfi_rule){ .kind = SW_CFI_EXPRESSION, .expr = { .ops = bad, .nops = 1 } };
    fx.out.ra = 0xdead;
    assert_int_equal(apply(&fx, &row), SW_GCF_NOT_ME);
    assert_int_equal(fx.out.ra, 0xdead);
    row.rules[RIP] =
        (struct sw_cfi_rule){ .kind = SW_CFI_EXPRESSION, .expr = { .undecodable = true } };
    assert_int_equal(apply(&fx, &row), SW_GCF_NOT_ME);
    assert_int_equal(fx.out.ra, 0xdead);
    sw_proc_free(fx.p);
}

static void
test_debug_explicit_sp_rule_wins_over_the_cfa(void **state)
{
    (void)state;
    static struct sw_cfi_row row;
    struct fx fx;
    fx_synthetic(&fx);
    fp_row(&row);
    row.rules[RSP] = (struct sw_cfi_rule){ .kind = SW_CFI_VAL_OFFSET, .offset = 0x40 };
    assert_int_equal(apply(&fx, &row), SW_GCF_SUCCESS);
    assert_int_equal(fx.out.sp, STACK + 0x250);
    sw_proc_free(fx.p);
}

/* ---- through a walker --------------------------------------------------- */

static void
test_debug_stepper_walks_a_fake_process_to_the_bottom(void **state)
{
    (void)state;
    struct obj_query q = object_of((uintptr_t)&step_probe_function);
    sw_addr link_fn = (uintptr_t)&step_probe_function - q.bias;
    sw_addr link_start = (uintptr_t)_start - q.bias;
    /* The fake target loads this binary at its own bias, told by AT_ENTRY. */
    const sw_addr bias = 0x555500000000ull;
    uint64_t auxv[] = { 9 /* AT_ENTRY */, bias + link_start, 0, 0 };
    struct sw_proc *p = fake_proc_new(&arch_x86_64);
    fake_proc_set_auxv(p, auxv, sizeof auxv);
    fake_proc_add_mem(p, STACK, NULL, STACK_LEN);

    /* frame 0: entry of the probe; it was called from _start + 4 */
    sw_addr sp = STACK + 0x800;
    fake_proc_put_word(p, sp, bias + link_start + 5);
    fake_proc_set_reg(p, 1, RIP, bias + link_fn);
    fake_proc_set_reg(p, 1, RSP, sp);
    fake_proc_set_reg(p, 1, RBP, 0);

    struct sw_walker *w = NULL;
    struct sw_errbuf err = { 0 };
    struct sw_walker_config cfg = { .exe = "/proc/self/exe", .no_default_steppers = true };
    assert_int_equal(sw_walker_new(p, &cfg, &w, &err), 0);
    struct sw_stepper *s = sw_stepper_debug_new();
    assert_non_null(s);
    assert_string_equal(s->ops->name, "debug");
    assert_int_equal(s->ops->priority, SW_PRIO_DEBUG);
    assert_int_equal(sw_add_stepper(w, s), 0);

    struct sw_stack st;
    sw_stack_init(&st);
    assert_int_equal(sw_walk_stack(w, SW_TID_DEFAULT, &st), 0);
    assert_int_equal(st.n, 2);
    assert_int_equal(st.frames[1].ra, bias + link_start + 5);
    assert_int_equal(st.frames[1].sp, sp + 8);
    assert_ptr_equal(st.frames[1].stepper, s);
    assert_int_equal(st.end, SW_END_BOTTOM);
    sw_stack_fini(&st);
    sw_walker_free(w);
}

static void
test_debug_stepper_new_and_destroy_without_a_walk(void **state)
{
    (void)state;
    struct sw_stepper *s = sw_stepper_debug_new();
    assert_non_null(s);
    sw_stepper_free(s);
    sw_stepper_free(NULL); /* a no-op */
    sw_test_fail_alloc_at(1);
    assert_null(sw_stepper_debug_new());
    sw_test_fail_alloc_at(0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_debug_function_entry_caller_is_the_pushed_return_address),
        cmocka_unit_test(test_debug_call_frame_is_looked_up_at_ra_minus_1),
        cmocka_unit_test(test_debug_start_is_the_stack_bottom_by_undefined_rip),
        cmocka_unit_test(test_debug_restore_rt_unwinds_the_signal_frame_into_an_exact_pc),
        cmocka_unit_test(test_debug_unreadable_return_address_slot_is_not_me),
        cmocka_unit_test(test_debug_dead_link_is_error_with_the_reason),
        cmocka_unit_test(test_debug_address_without_fde_is_not_me),
        cmocka_unit_test(test_debug_frame_pointer_row_recovers_rbp_from_its_slot),
        cmocka_unit_test(test_debug_undefined_return_address_is_stack_bottom),
        cmocka_unit_test(test_debug_zero_return_address_is_stack_bottom),
        cmocka_unit_test(test_debug_unknown_cfa_register_is_not_me_naming_it),
        cmocka_unit_test(test_debug_caller_sp_not_outward_is_not_me_unless_signal),
        cmocka_unit_test(test_debug_register_val_offset_and_expression_rules),
        cmocka_unit_test(test_debug_explicit_sp_rule_wins_over_the_cfa),
        cmocka_unit_test(test_debug_stepper_walks_a_fake_process_to_the_bottom),
        cmocka_unit_test(test_debug_stepper_new_and_destroy_without_a_walk),
    };
    return cmocka_run_group_tests_name("step_debug", tests, NULL, NULL);
}
