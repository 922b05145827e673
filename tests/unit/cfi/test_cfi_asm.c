/* tests/unit/cfi/test_cfi_asm.c -- the debug stepper on hand-written CFI programs.
 *
 * tests/unit/data/x86_64_cfi.S: DW_CFA_GNU_args_size around a call with
 * pushed arguments, and a function whose CFI covers only part of it (an FDE
 * that starts after the function does, a cold part with its own FDE, code
 * between them that no FDE covers).  Rows read through libdwarf, applied to
 * stacks in a fake process, and walks through a walker where the debug
 * stepper must hand the frame on to the next stepper.  Host-only (x86-64).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "rspwalk/rspwalk.h"
#include "tests/tools/fake_proc.h"
#include "util/util.h"
#include "cfi/cfi.h"
#include "elf/elf.h"
#include "walker/steppers/debug_internal.h"

#define CFI_ELF SW_TEST_DATA "/x86_64_cfi.elf"

enum { RBP = 6, RSP = 7, RIP = 16 };
#define STACK 0x7ffe0000ull

/* ---- the program's addresses -------------------------------------------- */

static sw_addr
sym(const char *name)
{
    struct sw_elfcache *c = sw_elfcache_new(NULL);
    struct sw_elf *e;
    struct sw_elfsym s;
    struct sw_errbuf err = { 0 };
    assert_non_null(c);
    if (sw_elfcache_open(c, CFI_ELF, &e, &err) != 0)
        fail_msg("%s", err.msg);
    if (sw_elf_symbol_by_name(e, name, &s) != 0)
        fail_msg("%s: no symbol %s", CFI_ELF, name);
    sw_elfcache_free(c);
    return s.value;
}

/* ---- one step through the CFI of the program ----------------------------- */

struct fx {
    struct sw_proc *p;
    struct sw_cfi *cfi;
    struct sw_frame in, out;
    struct sw_errbuf err;
};

static void
fx_open(struct fx *fx)
{
    memset(fx, 0, sizeof *fx);
    fx->p = fake_proc_new(&arch_x86_64);
    assert_non_null(fx->p);
    fake_proc_add_mem(fx->p, STACK, NULL, 0x1000);
    if (sw_cfi_open(CFI_ELF, NULL, 8, &fx->cfi, &fx->err) != 0)
        fail_msg("%s", fx->err.msg);
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

/* IN as frame 0 (exact PC) or as a caller (PC is a return address). */
static void
set_in(struct fx *fx, bool top, sw_addr pc, sw_addr sp, sw_addr fp)
{
    sw_frame_init(&fx->in);
    fx->in.top = top;
    fx->in.level = top ? 0 : 1;
    fx->in.thread = 1;
    fx->in.ra = pc;
    fx->in.sp = sp;
    fx->in.fp = fp;
    sw_frame_set_reg(&fx->in, RIP, pc);
    sw_frame_set_reg(&fx->in, RSP, sp);
    sw_frame_set_reg(&fx->in, RBP, fp);
}

static enum sw_gcf
step(struct fx *fx)
{
    return sw_debug_step_with_cfi(&arch_x86_64, fx->p, fx->cfi, 0, &fx->in, &fx->out, &fx->err);
}

static void
row_at(struct fx *fx, sw_addr pc, struct sw_cfi_row *row)
{
    if (sw_cfi_row_at(fx->cfi, pc, row, &fx->err) != 0)
        fail_msg("row at 0x%llx: %s", (unsigned long long)pc, fx->err.msg);
}

/* ---- DW_CFA_GNU_args_size -------------------------------------------------
 *
 * The operand says how many bytes of the frame are arguments pushed for the
 * call in progress.  Unwinders that resume execution at a landing pad use it
 * (GCC's uw_install_context, LLVM libunwind's __unw_set_reg of the IP: the pad
 * expects them popped); gdb ignores it and libunwind's unw_step does not
 * apply it.  For a walk it changes nothing: the CFA the row gives already
 * counts the pushes, and the caller's SP at the call is that CFA. */

static void
test_args_size_rows_read_and_the_cfa_counts_the_pushes(void **state)
{
    (void)state;
    static struct sw_cfi_row row;
    struct fx fx;
    sw_addr ra = sym("args_caller_ra");
    fx_open(&fx);
    row_at(&fx, ra - 1, &row); /* the call: two words pushed, args_size 16 */
    assert_int_equal(row.cfa_reg, RSP);
    assert_int_equal(row.cfa_offset, 32);
    assert_int_equal(row.rules[RBP].kind, SW_CFI_OFFSET);
    assert_int_equal(row.rules[RBP].offset, -16);
    assert_int_equal(row.rules[RIP].offset, -8);
    row_at(&fx, ra, &row); /* returned, the caller pops them next */
    assert_int_equal(row.cfa_offset, 32);
    row_at(&fx, ra + 4, &row); /* popped, args_size 0 */
    assert_int_equal(row.cfa_offset, 16);
    fx_close(&fx);
}

static void
test_args_size_callers_sp_is_the_cfa_with_the_arguments_still_pushed(void **state)
{
    (void)state;
    struct fx fx;
    fx_open(&fx);
    /* args_caller as a caller: its SP at the call is below both arguments. */
    sw_addr sp1 = STACK + 0x800;
    fake_proc_put_word(fx.p, sp1, 2);
    fake_proc_put_word(fx.p, sp1 + 8, 1);
    fake_proc_put_word(fx.p, sp1 + 16, STACK + 0x900); /* saved rbp */
    fake_proc_put_word(fx.p, sp1 + 24, sym("start_ra"));
    set_in(&fx, false, sym("args_caller_ra"), sp1, 0x77);
    assert_int_equal(step(&fx), SW_GCF_SUCCESS);
    assert_int_equal(fx.out.ra, sym("start_ra"));
    assert_int_equal(fx.out.sp, sp1 + 32); /* the CFA; not + args_size */
    assert_int_equal(fx.out.fp, STACK + 0x900);
    assert_int_equal(fx.out.fp_loc.addr, sp1 + 16);
    fx_close(&fx);
}

static void
test_args_size_frame_zero_just_returned_keeps_the_arguments_in_its_frame(void **state)
{
    (void)state;
    struct fx fx;
    fx_open(&fx);
    /* Stopped at the return address itself (a breakpoint there): the same
     * SP as during the call, the same caller. */
    sw_addr sp1 = STACK + 0x400;
    fake_proc_put_word(fx.p, sp1 + 24, sym("start_ra"));
    set_in(&fx, true, sym("args_caller_ra"), sp1, 0x77);
    assert_int_equal(step(&fx), SW_GCF_SUCCESS);
    assert_int_equal(fx.out.ra, sym("start_ra"));
    assert_int_equal(fx.out.sp, sp1 + 32);
    fx_close(&fx);
}

/* ---- CFI that covers only part of a function ----------------------------- */

static void
test_partial_pc_before_the_fde_is_not_me_naming_the_address(void **state)
{
    (void)state;
    struct fx fx;
    char want[32];
    fx_open(&fx);
    sw_addr pc = sym("partial") + 1; /* after push %rbp: no FDE yet */
    set_in(&fx, true, pc, STACK + 0x800, 0x77);
    assert_int_equal(step(&fx), SW_GCF_NOT_ME);
    assert_int_equal(fx.err.code, SW_ENOCFI);
    assert_non_null(strstr(fx.err.msg, "no FDE covers"));
    snprintf(want, sizeof want, "0x%llx", (unsigned long long)pc);
    assert_non_null(strstr(fx.err.msg, want));
    assert_int_equal(fx.out.ra, 0xdead);
    fx_close(&fx);
}

static void
test_partial_pc_in_the_fde_unwinds_by_rbp(void **state)
{
    (void)state;
    struct fx fx;
    fx_open(&fx);
    sw_addr fp = STACK + 0x800;
    fake_proc_put_word(fx.p, fp, STACK + 0x900);
    fake_proc_put_word(fx.p, fp + 8, sym("start_ra"));
    set_in(&fx, true, sym("partial_fde"), fp - 0x10, fp);
    assert_int_equal(step(&fx), SW_GCF_SUCCESS);
    assert_int_equal(fx.out.ra, sym("start_ra"));
    assert_int_equal(fx.out.sp, fp + 16);
    assert_int_equal(fx.out.fp, STACK + 0x900);
    fx_close(&fx);
}

static void
test_partial_cold_part_unwinds_by_its_own_fde(void **state)
{
    (void)state;
    struct fx fx;
    fx_open(&fx);
    sw_addr fp = STACK + 0x600;
    fake_proc_put_word(fx.p, fp, STACK + 0x900);
    fake_proc_put_word(fx.p, fp + 8, sym("start_ra"));
    set_in(&fx, true, sym("partial_cold") + 2, fp - 0x20, fp); /* before pop %rbp */
    assert_int_equal(step(&fx), SW_GCF_SUCCESS);
    assert_int_equal(fx.out.ra, sym("start_ra"));
    assert_int_equal(fx.out.sp, fp + 16);
    fx_close(&fx);
}

static void
test_partial_code_between_hot_and_cold_parts_is_not_me(void **state)
{
    (void)state;
    struct fx fx;
    fx_open(&fx);
    set_in(&fx, true, sym("nocfi"), STACK + 0x800, 0);
    assert_int_equal(step(&fx), SW_GCF_NOT_ME);
    assert_int_equal(fx.err.code, SW_ENOCFI);
    /* A caller returning to nocfi + 1 is looked up at nocfi: not covered;
     * one returning to nocfi (after a call that ends the hot part) is
     * looked up in the hot part's last byte, which is. */
    set_in(&fx, false, sym("nocfi") + 1, STACK + 0x800, 0);
    assert_int_equal(step(&fx), SW_GCF_NOT_ME);
    static struct sw_cfi_row row;
    row_at(&fx, sym("nocfi") - 1, &row);
    assert_int_equal(row.cfa_reg, RSP); /* after partial's `pop %rbp` */
    assert_int_equal(row.cfa_offset, 8);
    fx_close(&fx);
}

/* The name of the stepper that found each frame of the last walk_from
 * (static strings of the steppers' ops tables: they outlive the walker). */
static const char *found_by[8];

/* A walker over the program stopped at PC, the debug stepper first and the
 * frame-pointer one after it, as the default order has them. */
static void
walk_from(sw_addr pc, sw_addr sp, sw_addr fp, struct sw_proc *p, struct sw_stack *st)
{
    uint64_t auxv[] = { 9 /* AT_ENTRY */, sym("_start"), 0, 0 };
    struct sw_walker *w = NULL;
    struct sw_errbuf err = { 0 };
    fake_proc_set_auxv(p, auxv, sizeof auxv);
    fake_proc_set_reg(p, 1, RIP, pc);
    fake_proc_set_reg(p, 1, RSP, sp);
    fake_proc_set_reg(p, 1, RBP, fp);
    struct sw_walker_config cfg = { .exe = CFI_ELF, .no_default_steppers = true, .cache_dir = "" };
    assert_int_equal(sw_walker_new(p, &cfg, &w, &err), 0);
    assert_int_equal(sw_add_stepper(w, sw_stepper_debug_new()), 0);
    assert_int_equal(sw_add_stepper(w, sw_stepper_frame_func_new()), 0);
    sw_stack_init(st);
    assert_int_equal(sw_walk_stack(w, SW_TID_DEFAULT, st), 0);
    memset(found_by, 0, sizeof found_by);
    for (size_t i = 1; i < st->n && i < 8; i++)
        found_by[i] = st->frames[i].stepper ? st->frames[i].stepper->ops->name : NULL;
    sw_walker_free(w);
}

static void
test_partial_walk_before_the_fde_falls_through_to_the_frame_pointer_stepper(void **state)
{
    (void)state;
    struct sw_stack st;
    struct sw_proc *p = fake_proc_new(&arch_x86_64);
    fake_proc_add_mem(p, STACK, NULL, 0x1000);
    sw_addr sp = STACK + 0x800;
    fake_proc_put_word(p, sp, 0);                   /* the pushed rbp: _start's 0 */
    fake_proc_put_word(p, sp + 8, sym("start_ra")); /* partial called from _start */
    walk_from(sym("partial") + 1, sp, 0, p, &st);
    assert_int_equal(st.n, 2);
    assert_int_equal(st.frames[1].ra, sym("start_ra"));
    assert_int_equal(st.frames[1].sp, sp + 16);
    assert_string_equal(found_by[1], "frame-func");
    assert_int_equal(st.end, SW_END_BOTTOM); /* _start's CFI: the RA is undefined */
    sw_stack_fini(&st);
}

static void
test_args_size_walk_from_the_callee_to_the_bottom(void **state)
{
    (void)state;
    struct sw_stack st;
    struct sw_proc *p = fake_proc_new(&arch_x86_64);
    fake_proc_add_mem(p, STACK, NULL, 0x1000);
    sw_addr sp0 = STACK + 0x7f8, sp1 = sp0 + 8;
    fake_proc_put_word(p, sp0, sym("args_caller_ra"));
    fake_proc_put_word(p, sp1, 2);
    fake_proc_put_word(p, sp1 + 8, 1);
    fake_proc_put_word(p, sp1 + 16, 0);
    fake_proc_put_word(p, sp1 + 24, sym("start_ra"));
    walk_from(sym("args_callee"), sp0, 0, p, &st);
    assert_int_equal(st.n, 3);
    assert_int_equal(st.frames[1].ra, sym("args_caller_ra"));
    assert_int_equal(st.frames[1].sp, sp1);
    assert_int_equal(st.frames[2].ra, sym("start_ra"));
    assert_int_equal(st.frames[2].sp, sp1 + 32);
    assert_string_equal(found_by[1], "debug");
    assert_string_equal(found_by[2], "debug");
    assert_int_equal(st.end, SW_END_BOTTOM);
    sw_stack_fini(&st);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_args_size_rows_read_and_the_cfa_counts_the_pushes),
        cmocka_unit_test(test_args_size_callers_sp_is_the_cfa_with_the_arguments_still_pushed),
        cmocka_unit_test(test_args_size_frame_zero_just_returned_keeps_the_arguments_in_its_frame),
        cmocka_unit_test(test_args_size_walk_from_the_callee_to_the_bottom),
        cmocka_unit_test(test_partial_pc_before_the_fde_is_not_me_naming_the_address),
        cmocka_unit_test(test_partial_pc_in_the_fde_unwinds_by_rbp),
        cmocka_unit_test(test_partial_cold_part_unwinds_by_its_own_fde),
        cmocka_unit_test(test_partial_code_between_hot_and_cold_parts_is_not_me),
        cmocka_unit_test(
            test_partial_walk_before_the_fde_falls_through_to_the_frame_pointer_stepper),
    };
    return cmocka_run_group_tests_name("cfi_asm", tests, NULL, NULL);
}
