/* tests/unit/walker/test_wanderer.c -- the wanderer (stack scanning) on known code.
 *
 * The code is tests/unit/data/x86_64_frames.S (see test_steppers.c for its
 * layout), linked static at 0x401000; the stack is built in a fake process and
 * the wanderer is the only stepper, so every caller here is found by scanning.  Also
 * i386_cold.S (a cold part, a PIC thunk, a conditional tail call) and aarch64_bigframe.S
 * (the caller's SP from its analysis), through test_frame_func.h's fixture.  The
 * families' pure decoders (jumps, PLT stubs) on hand-assembled bytes.
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
#include "tests/unit/walker/test_frame_func.h"
#include "walker/steppers/wanderer_internal.h"

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

/* ---- other architectures (test_frame_func.h's fixture, the wanderer alone) ---- */

#define I386 SW_TEST_DATA "/i386_cold.elf"
#define A64  SW_TEST_DATA "/aarch64_bigframe.elf"

static void
wand_open_arch(struct ff_fixture *fx, const struct arch_desc *a, const char *path)
{
    ff_open(fx, a, path, FF_NONE);
    struct sw_stepper *s = sw_stepper_wanderer_new();
    assert_non_null(s);
    assert_int_equal(sw_add_stepper(fx->w, s), 0);
}

/* One step from frame 0 (PC, SP): returns sw_walk_single's code. */
static int
wand_step_arch(struct ff_fixture *fx, sw_addr pc, sw_addr sp, struct sw_frame *out,
               enum sw_walk_end *end)
{
    struct sw_frame top;
    ff_regs(fx, pc, sp, 0, 0);
    assert_int_equal(sw_initial_frame(fx->w, SW_TID_DEFAULT, &top), 0);
    return sw_walk_single(fx->w, &top, out, end);
}

/* The judge's W2: finish.cold, entered from finish by jne, has no caller of its own; below
 * pang's return address lies the return address of finish's call to the PIC thunk.  The
 * cold part is finish's: a call to finish is a call to it, and a return address into
 * finish is stale. */
static void
test_wanderer_cold_part_belongs_to_its_parent(void **state)
{
    (void)state;
    struct ff_fixture fx;
    struct sw_frame out;
    enum sw_walk_end end;
    wand_open_arch(&fx, &arch_i386, I386);
    const sw_addr s = FF_STACK + 0x400, pang_ra = ff_sym(&fx, "pang") + 10;
    fake_proc_put_word(fx.p, s + 4, ff_sym(&fx, "finish") + 6); /* after call thunk */
    fake_proc_put_word(fx.p, s + 12, pang_ra);
    assert_int_equal(wand_step_arch(&fx, ff_sym(&fx, "finish.cold"), s, &out, &end), 0);
    assert_int_equal(out.ra, pang_ra);
    assert_int_equal(out.sp, s + 16);
    assert_int_equal(out.trust, SW_TRUST_SCAN);
    ff_close(&fx);
}

/* A call to __x86.get_pc_thunk.bx (mov (%esp),%ebx; ret) returned before anything else
 * ran: its return address is never a caller's, even as the first candidate. */
static void
test_wanderer_never_takes_a_thunks_return_address(void **state)
{
    (void)state;
    struct ff_fixture fx;
    struct sw_frame out;
    enum sw_walk_end end;
    wand_open_arch(&fx, &arch_i386, I386);
    const sw_addr s = FF_STACK + 0x400, pang_ra = ff_sym(&fx, "pang") + 10;
    fake_proc_put_word(fx.p, s, ff_sym(&fx, "finish") + 6);
    fake_proc_put_word(fx.p, s + 4, pang_ra); /* a call to finish: maybe, nothing better */
    assert_int_equal(wand_step_arch(&fx, ff_sym(&fx, "lone"), s, &out, &end), 0);
    assert_int_equal(out.ra, pang_ra);
    assert_int_equal(out.sp, s + 8);
    /* the frame in the thunk itself: its return address is the caller's */
    assert_int_equal(wand_step_arch(&fx, ff_sym(&fx, "__x86.get_pc_thunk.bx"), s, &out, &end), 0);
    assert_int_equal(out.ra, ff_sym(&fx, "finish") + 6);
    ff_close(&fx);
}

/* router reaches target by a conditional jump (a conditional tail call): the return
 * address after `call router` is target's caller, ahead of an earlier call elsewhere. */
static void
test_wanderer_conditional_jump_is_a_tail_call(void **state)
{
    (void)state;
    struct ff_fixture fx;
    struct sw_frame out;
    enum sw_walk_end end;
    wand_open_arch(&fx, &arch_i386, I386);
    const sw_addr s = FF_STACK + 0x400, via_ra = ff_sym(&fx, "via_router") + 8;
    fake_proc_put_word(fx.p, s, ff_sym(&fx, "pang") + 10); /* a call to finish: maybe */
    fake_proc_put_word(fx.p, s + 4, via_ra);
    assert_int_equal(wand_step_arch(&fx, ff_sym(&fx, "target"), s, &out, &end), 0);
    assert_int_equal(out.ra, via_ra);
    assert_int_equal(out.sp, s + 8);
    ff_close(&fx);
}

/* aarch64: unk's frame is sized at run time, so only a scan finds its
 * caller; x30's slot is at unk's SP, 0x40 below caller2's.  caller2's analysis says its
 * own x30 is 40 bytes above its SP: the first 16-aligned SP with a return address there
 * that fits caller2 is caller2's SP -- not the slot + 8 the ABI alone gives. */
static void
test_wanderer_aarch64_caller_sp_from_the_callers_analysis(void **state)
{
    (void)state;
    struct ff_fixture fx;
    struct sw_frame out;
    enum sw_walk_end end;
    wand_open_arch(&fx, &arch_aarch64, A64);
    const sw_addr s = FF_STACK + 0x400, c2_ra = ff_sym(&fx, "caller2") + 16;
    const sw_addr start_ra = ff_sym(&fx, "_start") + 8;
    fake_proc_put_word(fx.p, s, c2_ra);
    fake_proc_put_word(fx.p, s + 0x18, start_ra); /* a stale copy at an odd place */
    fake_proc_put_word(fx.p, s + 0x40 + 40, start_ra);
    assert_int_equal(wand_step_arch(&fx, ff_sym(&fx, "unk") + 8, s, &out, &end), 0);
    assert_int_equal(out.ra, c2_ra);
    assert_int_equal(out.sp, s + 0x40);
    ff_close(&fx);

    /* caller2 keeps no return address where its analysis says: the word at unk's SP is no
     * live return address, and nothing else on the stack is one */
    wand_open_arch(&fx, &arch_aarch64, A64);
    fake_proc_put_word(fx.p, s, c2_ra);
    assert_int_equal(wand_step_arch(&fx, ff_sym(&fx, "unk") + 8, s, &out, &end), SW_ENOENT);
    assert_int_equal(end, SW_END_NO_STEPPER);
    ff_close(&fx);
}

/* ---- the families' encodings --------------------------------------------- */

/* Each family's direct jump (no link) and where it goes; a call, or too few bytes, is none. */
static void
test_wanderer_families_decode_their_direct_jumps(void **state)
{
    (void)state;
    sw_addr dest = 0;
    const uint8_t jmp32[] = { 0xe9, 0xfb, 0xff, 0xff, 0xff }; /* jmp .  (rel32 -5) */
    const uint8_t jmp8[] = { 0xeb, 0x10 };                    /* jmp .+0x12 */
    const uint8_t call32[] = { 0xe8, 0x00, 0x00, 0x00, 0x00 };
    assert_true(sw_wand_x86.jump_at(&arch_x86_64, jmp32, 5, 0x401000, &dest));
    assert_int_equal(dest, 0x401000);
    assert_false(sw_wand_x86.jump_at(&arch_x86_64, jmp32, 4, 0x401000, &dest));
    assert_true(sw_wand_x86.jump_at(&arch_x86_64, jmp8, 2, 0x401000, &dest));
    assert_int_equal(dest, 0x401012);
    assert_false(sw_wand_x86.jump_at(&arch_x86_64, call32, 5, 0x401000, &dest));
    /* i386: the destination wraps at 32 bits */
    const uint8_t wrap[] = { 0xe9, 0x20, 0x00, 0x00, 0x00 };
    assert_true(sw_wand_x86.jump_at(&arch_i386, wrap, 5, 0xfffffff0u, &dest));
    assert_int_equal(dest, 0x15);

    /* aarch64: b .-8 (0x17fffffe), bl .-8 (0x97fffffe) */
    const uint8_t b_back[] = { 0xfe, 0xff, 0xff, 0x17 }, bl_back[] = { 0xfe, 0xff, 0xff, 0x97 };
    assert_true(sw_wand_aarch64.jump_at(&arch_aarch64, b_back, 4, 0x400100, &dest));
    assert_int_equal(dest, 0x4000f8);
    assert_false(sw_wand_aarch64.jump_at(&arch_aarch64, b_back, 3, 0x400100, &dest));
    assert_false(sw_wand_aarch64.jump_at(&arch_aarch64, bl_back, 4, 0x400100, &dest));

    /* PowerPC in the target's byte order: b .+16 (48000010), bl .+16 (48000011) */
    const uint8_t b_be[] = { 0x48, 0x00, 0x00, 0x10 }, b_le[] = { 0x10, 0x00, 0x00, 0x48 };
    const uint8_t bl_be[] = { 0x48, 0x00, 0x00, 0x11 };
    assert_true(sw_wand_ppc.jump_at(&arch_ppc64, b_be, 4, 0x10000100, &dest));
    assert_int_equal(dest, 0x10000110);
    assert_true(sw_wand_ppc.jump_at(&arch_ppc64le, b_le, 4, 0x10000100, &dest));
    assert_int_equal(dest, 0x10000110);
    assert_false(sw_wand_ppc.jump_at(&arch_ppc64le, b_be, 4, 0x10000100, &dest));
    assert_false(sw_wand_ppc.jump_at(&arch_ppc32, bl_be, 4, 0x10000100, &dest));
}

/* The GOT slot of the linkers' PLT stubs, at their link-time address; PowerPC decodes
 * none (plt_slot NULL) and other code is no stub. */
static void
test_wanderer_families_find_the_got_slot_of_a_plt_stub(void **state)
{
    (void)state;
    uint8_t c[WAND_PLT_STUB_BYTES] = { 0 };
    /* x86-64: endbr64; bnd jmp *0x2fe2(%rip), the slot after the 11 bytes */
    const uint8_t x64[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0xf2, 0xff, 0x25, 0xe2, 0x2f, 0x00, 0x00 };
    memcpy(c, x64, sizeof x64);
    assert_int_equal(sw_wand_x86.plt_slot(&arch_x86_64, NULL, 0x1030, c), 0x1030 + 11 + 0x2fe2);
    /* i386: jmp *0x804a00c, an absolute slot */
    const uint8_t i386[] = { 0xff, 0x25, 0x0c, 0xa0, 0x04, 0x08 };
    memset(c, 0, sizeof c);
    memcpy(c, i386, sizeof i386);
    assert_int_equal(sw_wand_x86.plt_slot(&arch_i386, NULL, 0x8049030, c), 0x804a00c);
    c[0] = 0x90; /* nop: no stub */
    assert_int_equal(sw_wand_x86.plt_slot(&arch_i386, NULL, 0x8049030, c), 0);

    /* aarch64: bti c; adrp x16, .+0x1000 page; ldr x17, [x16, #0x18] */
    const uint8_t a64[] = {
        0x5f, 0x24, 0x03, 0xd5, 0x10, 0x00, 0x00, 0xb0, 0x11, 0x0e, 0x40, 0xf9
    };
    memset(c, 0, sizeof c);
    memcpy(c, a64, sizeof a64);
    assert_int_equal(sw_wand_aarch64.plt_slot(&arch_aarch64, NULL, 0x10ffc, c), 0x12018);
    memmove(c, c + 4, 8); /* without the landing pad */
    assert_int_equal(sw_wand_aarch64.plt_slot(&arch_aarch64, NULL, 0x10010, c), 0x11018);
    c[4] = 0x12; /* ldr x18: not the stub's register */
    assert_int_equal(sw_wand_aarch64.plt_slot(&arch_aarch64, NULL, 0x10010, c), 0);

    assert_null(sw_wand_ppc.plt_slot);
}

/* Every family sets its REQUIRED members; the SP rules of the ABI are data. */
static void
test_wanderer_families_set_their_required_members(void **state)
{
    (void)state;
    const struct sw_wand_family *fams[] = { &sw_wand_x86, &sw_wand_aarch64, &sw_wand_ppc };
    for (size_t i = 0; i < sizeof fams / sizeof fams[0]; i++) {
        assert_non_null(fams[i]->call_before);
        assert_non_null(fams[i]->jump_at);
        assert_non_null(fams[i]->returns_at_once);
        assert_true(fams[i]->insn_align == 1 || fams[i]->insn_align == 4);
    }
    assert_int_equal(sw_wand_x86.sp_align, 0);
    assert_int_equal(sw_wand_aarch64.sp_align, 16);
    assert_int_equal(sw_wand_ppc.sp_align, 0);
    assert_non_null(sw_wand_aarch64.sigframe_sp);
    assert_null(sw_wand_x86.sigframe_sp);
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
        cmocka_unit_test(test_wanderer_cold_part_belongs_to_its_parent),
        cmocka_unit_test(test_wanderer_never_takes_a_thunks_return_address),
        cmocka_unit_test(test_wanderer_conditional_jump_is_a_tail_call),
        cmocka_unit_test(test_wanderer_aarch64_caller_sp_from_the_callers_analysis),
        cmocka_unit_test(test_wanderer_families_decode_their_direct_jumps),
        cmocka_unit_test(test_wanderer_families_find_the_got_slot_of_a_plt_stub),
        cmocka_unit_test(test_wanderer_families_set_their_required_members),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
