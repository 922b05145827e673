/* tests/unit/walker/test_analysis.c -- the analysis stepper and the disassembler adapter.
 *
 * Walks: tests/unit/data/x86_64_noframe.S (no CFI), linked static at
 * 0x401000, with a stack built in a fake process; the expected heights are
 * beside each instruction in the .S file.  Decoding: byte arrays of each
 * architecture.
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
#include "disasm/disasm.h"
#include "walker/steppers/analysis.h"

#define ELF SW_TEST_DATA "/x86_64_noframe.elf"

#define START       0x401000u
#define START_RA    0x401007u /* after `call outer` */
#define OUTER       0x401008u
#define OUTER_RA    0x401011u /* after `call push_sub` */
#define PUSH_SUB    0x401016u
#define PUSH_SUB_RA 0x401020u /* after `call leaf` */
#define LEAF        0x401026u
#define MULTI       0x401028u
#define LOOP        0x40103eu
#define COND_SAME   0x40105bu
#define COND_DIFFER 0x401077u
#define ALIGNED     0x40107eu
#define TAIL        0x401091u
#define DRAP        0x40109au

#define STACK  0x7fff0000u
#define DW_RBP 6
#define DW_RSP 7
#define DW_RIP 16

#define MARK_RA 0x401011u /* the return address planted at CFA - 8 */

struct an_fixture {
    struct sw_proc *p;
    struct sw_walker *w;
};

/* A walker over the test ELF with only the analysis stepper (or the
 * defaults), frame 0 at PC, SP, FP. */
static void
an_open(struct an_fixture *fx, sw_addr pc, sw_addr sp, sw_addr fp, bool defaults)
{
    fx->p = fake_proc_new(&arch_x86_64);
    fake_proc_add_mem(fx->p, STACK, NULL, 0x1000);
    fake_proc_set_reg(fx->p, 1, DW_RIP, pc);
    fake_proc_set_reg(fx->p, 1, DW_RSP, sp);
    fake_proc_set_reg(fx->p, 1, DW_RBP, fp);
    struct sw_walker_config cfg = { .exe = ELF, .no_default_steppers = !defaults };
    struct sw_errbuf err = { 0 };
    if (sw_walker_new(fx->p, &cfg, &fx->w, &err) != 0)
        fail_msg("sw_walker_new: %s", err.msg);
    if (!defaults)
        assert_int_equal(sw_add_stepper(fx->w, sw_stepper_analysis_new()), 0);
}

/* Frame 0 stopped at PC with the CFA HEIGHT bytes above SP: the caller's RA
 * must come from CFA - 8 and its SP be the CFA. */
static void
check_top(sw_addr pc, int64_t height)
{
    struct an_fixture fx;
    sw_addr sp = STACK + 0x400, cfa = sp + (sw_addr)height;
    an_open(&fx, pc, sp, 0x4242, false);
    fake_proc_put_word(fx.p, cfa - 8, MARK_RA);
    struct sw_frame f0, f1;
    enum sw_walk_end end = SW_END_NONE;
    assert_int_equal(sw_initial_frame(fx.w, SW_TID_DEFAULT, &f0), 0);
    int rc = sw_walk_single(fx.w, &f0, &f1, &end);
    if (rc != 0)
        fail_msg("pc %#lx: no caller (%d)", (unsigned long)pc, rc);
    assert_int_equal(f1.ra, MARK_RA);
    assert_int_equal(f1.sp, cfa);
    assert_int_equal(f1.ra_loc.addr, cfa - 8);
    assert_int_equal(f1.trust, SW_TRUST_ANALYSIS);
    assert_string_equal(f1.stepper->ops->name, "analysis");
    sw_walker_free(fx.w);
}

/* Frame 0 at PC: the analysis must say it does not know. */
static void
check_top_unknown(sw_addr pc)
{
    struct an_fixture fx;
    an_open(&fx, pc, STACK + 0x400, 0, false);
    struct sw_frame f0, f1;
    enum sw_walk_end end = SW_END_NONE;
    assert_int_equal(sw_initial_frame(fx.w, SW_TID_DEFAULT, &f0), 0);
    assert_int_not_equal(sw_walk_single(fx.w, &f0, &f1, &end), 0);
    assert_int_equal(end, SW_END_NO_STEPPER);
    sw_walker_free(fx.w);
}

static void
test_analysis_push_sub_call_heights_at_every_pc(void **state)
{
    (void)state;
    check_top(OUTER + 0, 8);
    check_top(OUTER + 4, 16);
    check_top(OUTER + 9, 16);
    check_top(OUTER + 13, 8);
    check_top(PUSH_SUB + 0, 8);
    check_top(PUSH_SUB + 1, 16);
    check_top(PUSH_SUB + 5, 48);
    check_top(PUSH_SUB + 10, 48);
    check_top(PUSH_SUB + 14, 16);
    check_top(PUSH_SUB + 15, 8);
    check_top(LEAF + 1, 8);
}

static void
test_analysis_multiple_exits_each_have_their_height(void **state)
{
    (void)state;
    check_top(MULTI + 5, 16);
    check_top(MULTI + 6, 8); /* first ret */
    check_top(MULTI + 7, 16);
    check_top(MULTI + 16, 32);
    check_top(MULTI + 20, 16);
    check_top(MULTI + 21, 8); /* second ret */
}

static void
test_analysis_loop_back_edge_keeps_the_height(void **state)
{
    (void)state;
    check_top(LOOP + 8, 16); /* loop head: entry and back edge agree */
    check_top(LOOP + 12, 24);
    check_top(LOOP + 24, 16);
    check_top(LOOP + 26, 16);
    check_top(LOOP + 28, 8);
}

static void
test_analysis_branch_join_with_equal_heights_is_known(void **state)
{
    (void)state;
    check_top(COND_SAME + 10, 40); /* between push $1 and pop */
    check_top(COND_SAME + 13, 32);
    check_top(COND_SAME + 18, 32); /* the join */
    check_top(COND_SAME + 27, 8);
}

static void
test_analysis_branch_join_with_different_heights_is_not_mine(void **state)
{
    (void)state;
    check_top(COND_DIFFER + 4, 8);
    check_top_unknown(COND_DIFFER + 5);
    check_top_unknown(COND_DIFFER + 6);
}

static void
test_analysis_aligned_stack_uses_the_frame_pointer(void **state)
{
    (void)state;
    struct an_fixture fx;
    /* rbp = CFA - 16; SP somewhere below after `and` and `sub`. */
    sw_addr cfa = STACK + 0x800, fp = cfa - 16, sp = (fp & ~(sw_addr)31) - 64;
    an_open(&fx, ALIGNED + 12, sp, fp, false);
    fake_proc_put_word(fx.p, cfa - 8, MARK_RA);
    fake_proc_put_word(fx.p, fp, 0x7777); /* the caller's rbp */
    struct sw_frame f0, f1;
    assert_int_equal(sw_initial_frame(fx.w, SW_TID_DEFAULT, &f0), 0);
    assert_int_equal(sw_walk_single(fx.w, &f0, &f1, NULL), 0);
    assert_int_equal(f1.ra, MARK_RA);
    assert_int_equal(f1.sp, cfa);
    assert_int_equal(f1.fp, 0x7777);
    assert_int_equal(f1.fp_loc.kind, SW_LOC_ADDRESS);
    assert_int_equal(f1.fp_loc.addr, fp);
    sw_walker_free(fx.w);

    check_top(ALIGNED + 0, 8);
    check_top(ALIGNED + 4, 16);
    check_top(ALIGNED + 18, 8); /* after leave */
}

/* Frame 0 in drap at PC: the CFA comes from the slot the function saved
 * %r10 in (L - 24, L the realigned SP), or from %r10 on the way out. */
static void
check_drap(sw_addr pc, int64_t below_l, bool r10_live)
{
    struct an_fixture fx;
    sw_addr cfa = STACK + 0x808, l = (cfa - 8) & ~(sw_addr)31;
    sw_addr sp = l - (sw_addr)below_l, fp = l - 16;
    an_open(&fx, pc, sp, fp, false);
    if (r10_live)
        fake_proc_set_reg(fx.p, 1, 10, cfa); /* DWARF 10 is r10 */
    fake_proc_put_word(fx.p, cfa - 8, MARK_RA);
    fake_proc_put_word(fx.p, l - 16, 0x6666); /* the caller's rbp */
    fake_proc_put_word(fx.p, l - 24, cfa);
    struct sw_frame f0, f1;
    assert_int_equal(sw_initial_frame(fx.w, SW_TID_DEFAULT, &f0), 0);
    if (sw_walk_single(fx.w, &f0, &f1, NULL) != 0)
        fail_msg("drap+%lu: no caller", (unsigned long)(pc - DRAP));
    assert_int_equal(f1.ra, MARK_RA);
    assert_int_equal(f1.sp, cfa);
    assert_int_equal(f1.fp, 0x6666);
    sw_walker_free(fx.w);
}

static void
test_analysis_drap_realignment_finds_the_saved_cfa(void **state)
{
    (void)state;
    check_drap(DRAP + 23, 64, false); /* at the call */
    check_drap(DRAP + 28, 64, false); /* after it */
    check_top(DRAP + 5, 8);
    check_top(DRAP + 37, 8);
}

/* With the default steppers, drap mid-stack is the analysis stepper's: frame-func sees a
 * standard frame whose FP is set after the realignment, and its record (a copy of the
 * return address above the saved rbp) does not say where the CFA is. */
static void
test_analysis_drap_mid_stack_is_not_frame_funcs(void **state)
{
    (void)state;
    struct an_fixture fx;
    sw_addr cfa = STACK + 0x808, l = (cfa - 8) & ~(sw_addr)31, fp = l - 16, sp = l - 64 - 8;
    an_open(&fx, LEAF, sp, fp, true);
    fake_proc_put_word(fx.p, sp, DRAP + 28);
    fake_proc_put_word(fx.p, cfa - 8, MARK_RA);
    fake_proc_put_word(fx.p, l - 8, MARK_RA); /* push -8(%r10) */
    fake_proc_put_word(fx.p, l - 16, 0x6666);
    fake_proc_put_word(fx.p, l - 24, cfa);
    struct sw_stack st;
    sw_stack_init(&st);
    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &st), 0);
    assert_true(st.n >= 3);
    assert_int_equal(st.frames[1].ra, DRAP + 28);
    assert_int_equal(st.frames[2].ra, MARK_RA);
    assert_int_equal(st.frames[2].sp, cfa);
    assert_int_equal(st.frames[2].fp, 0x6666);
    assert_string_equal(st.frames[2].stepper->ops->name, "analysis");
    sw_stack_fini(&st);
    sw_walker_free(fx.w);
}

static void
test_analysis_tail_jump_ends_the_path(void **state)
{
    (void)state;
    check_top(TAIL + 1, 16);
    check_top(TAIL + 6, 16);
    check_top(TAIL + 7, 8); /* the jmp out: RA at SP */
}

static void
test_analysis_walks_a_frameless_chain_to_start(void **state)
{
    (void)state;
    struct an_fixture fx;
    sw_addr sp = STACK + 0x400;
    /* leaf (h 8) <- push_sub (h 48 at its call) <- outer (h 16) <- _start */
    an_open(&fx, LEAF, sp, 0, true);
    fake_proc_put_word(fx.p, sp, PUSH_SUB_RA);
    fake_proc_put_word(fx.p, sp + 48, OUTER_RA);
    fake_proc_put_word(fx.p, sp + 48 + 16, START_RA);
    struct sw_stack st;
    sw_stack_init(&st);
    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &st), 0);
    assert_int_equal(st.n, 4);
    assert_int_equal(st.frames[1].ra, PUSH_SUB_RA);
    assert_int_equal(st.frames[2].ra, OUTER_RA);
    assert_int_equal(st.frames[2].sp, sp + 8 + 48);
    assert_string_equal(st.frames[2].stepper->ops->name, "analysis");
    assert_int_equal(st.frames[2].trust, SW_TRUST_ANALYSIS);
    assert_int_equal(st.frames[3].ra, START_RA);
    assert_int_equal(st.frames[3].sp, sp + 8 + 48 + 16);
    assert_int_equal(st.end, SW_END_BOTTOM);
    sw_stack_fini(&st);
    sw_walker_free(fx.w);
}

static void
test_analysis_helper_reports_heights_after_a_call(void **state)
{
    (void)state;
    struct an_fixture fx;
    struct sw_an_pc p;
    an_open(&fx, LEAF, STACK, 0, false);
    assert_int_equal(sw_analysis_at(fx.w, PUSH_SUB_RA, false, &p), 0);
    assert_true(p.sp_known);
    assert_int_equal(p.height, 48);
    assert_int_equal(p.ra, SW_AN_RA_SLOT);
    assert_int_equal(p.ra_off, -8);
    assert_int_equal(sw_analysis_at(fx.w, 0x10, true, &p), SW_ENOSYM);
    assert_int_equal(sw_analysis_at(fx.w, ALIGNED + 1, true, &p), 0);
    assert_true(p.fp_pushed);
    assert_int_equal(p.fp_save_off, -16);
    sw_walker_free(fx.w);
}

/* The exit scan: from a PC through adjustments and pops to a ret, whatever covers the PC;
 * the answers agree with the heights beside the code. */
static void
test_analysis_exit_scan_reads_the_way_out(void **state)
{
    (void)state;
    struct an_fixture fx;
    struct sw_an_pc p;
    an_open(&fx, LEAF, STACK, 0, false);
    assert_int_equal(sw_analysis_exit(fx.w, OUTER + 9, &p), 0); /* add $8; ret */
    assert_true(p.sp_known);
    assert_int_equal(p.height, 16);
    assert_int_equal(p.ra, SW_AN_RA_SLOT);
    assert_int_equal(p.ra_off, -8);
    assert_int_equal(sw_analysis_exit(fx.w, PUSH_SUB + 10, &p), 0); /* add; pop %rbx; ret */
    assert_int_equal(p.height, 48);
    assert_int_equal(p.caller_fp, SW_AN_FP_CALLER);
    assert_int_equal(sw_analysis_exit(fx.w, LEAF + 1, &p), 0);
    assert_int_equal(p.height, 8);
    /* a call, a conditional jump or a move of SP from FP before any ret: no answer */
    assert_int_equal(sw_analysis_exit(fx.w, OUTER, &p), SW_EINVAL);
    assert_int_equal(sw_analysis_exit(fx.w, MULTI + 1, &p), SW_EINVAL);
    assert_int_equal(sw_analysis_exit(fx.w, ALIGNED + 17, &p), SW_EINVAL); /* leave */
    sw_walker_free(fx.w);
}

/* ---- decoding -------------------------------------------------------- */

static struct sw_insn
decode(const struct arch_desc *a, const uint8_t *code, size_t len, sw_addr addr)
{
    struct sw_disasm *d = sw_disasm_new(a);
    struct sw_insn i;
    assert_non_null(d);
    assert_int_equal(sw_disasm_one(d, code, len, addr, &i), 0);
    sw_disasm_free(d);
    return i;
}

static void
test_disasm_x86_64_stack_and_flow(void **state)
{
    (void)state;
    const struct arch_desc *a = &arch_x86_64;
    struct sw_insn i = decode(a, (const uint8_t[]){ 0x55 }, 1, 0x1000); /* push %rbp */
    assert_int_equal(i.len, 1);
    assert_int_equal(i.sp, SW_SP_ADD);
    assert_int_equal(i.sp_delta, -8);
    assert_int_equal(i.nstores, 1);
    assert_int_equal(i.stores[0].reg, SW_IREG_FP);
    i = decode(a, (const uint8_t[]){ 0x48, 0x83, 0xec, 0x28 }, 4, 0x1000); /* sub $0x28,%rsp */
    assert_int_equal(i.sp_delta, -0x28);
    i = decode(a, (const uint8_t[]){ 0x48, 0x83, 0xe4, 0xf0 }, 4, 0x1000); /* and $-16,%rsp */
    assert_int_equal(i.sp, SW_SP_ALIGN);
    i = decode(a, (const uint8_t[]){ 0x48, 0x89, 0xe5 }, 3, 0x1000); /* mov %rsp,%rbp */
    assert_int_equal(i.fp, SW_FP_SET);
    i = decode(a, (const uint8_t[]){ 0xc9 }, 1, 0x1000); /* leave */
    assert_int_equal(i.sp, SW_SP_FROM_FP);
    assert_int_equal(i.sp_delta, 8);
    assert_int_equal(i.fp, SW_FP_LOAD);
    i = decode(a, (const uint8_t[]){ 0xe8, 0x10, 0, 0, 0 }, 5, 0x1000); /* call */
    assert_int_equal(i.flow, SW_FLOW_CALL);
    assert_true(i.has_target);
    assert_int_equal(i.target, 0x1015);
    i = decode(a, (const uint8_t[]){ 0x74, 0x02 }, 2, 0x1000); /* je */
    assert_int_equal(i.flow, SW_FLOW_CJUMP);
    assert_int_equal(i.target, 0x1004);
    i = decode(a, (const uint8_t[]){ 0xff, 0xe0 }, 2, 0x1000); /* jmp *%rax */
    assert_int_equal(i.flow, SW_FLOW_JUMP);
    assert_false(i.has_target);
    i = decode(a, (const uint8_t[]){ 0xc3 }, 1, 0x1000);
    assert_int_equal(i.flow, SW_FLOW_RET);
    i = decode(a, (const uint8_t[]){ 0x48, 0x89, 0xc4 }, 3, 0x1000); /* mov %rax,%rsp */
    assert_int_equal(i.sp, SW_SP_FROM_REG);
    i = decode(a, (const uint8_t[]){ 0x48, 0x0f, 0xc7, 0xf4 }, 4, 0x1000); /* rdrand %rsp */
    assert_int_equal(i.sp, SW_SP_OTHER);
}

static void
test_disasm_i386_push_is_four_bytes(void **state)
{
    (void)state;
    struct sw_insn i = decode(&arch_i386, (const uint8_t[]){ 0x55 }, 1, 0x1000);
    assert_int_equal(i.sp_delta, -4);
    i = decode(&arch_i386, (const uint8_t[]){ 0x83, 0xec, 0x1c }, 3, 0x1000); /* sub $0x1c,%esp */
    assert_int_equal(i.sp_delta, -0x1c);
}

static void
test_disasm_aarch64_pairs_and_sp(void **state)
{
    (void)state;
    const struct arch_desc *a = &arch_aarch64;
    /* stp x29, x30, [sp, #-32]! */
    struct sw_insn i = decode(a, (const uint8_t[]){ 0xfd, 0x7b, 0xbe, 0xa9 }, 4, 0x1000);
    assert_int_equal(i.sp, SW_SP_ADD);
    assert_int_equal(i.sp_delta, -32);
    assert_int_equal(i.nstores, 2);
    assert_int_equal(i.stores[0].reg, SW_IREG_FP);
    assert_int_equal(i.stores[0].off, 0);
    assert_int_equal(i.stores[1].reg, SW_IREG_LR);
    assert_int_equal(i.stores[1].off, 8);
    /* ldp x29, x30, [sp], #32 */
    i = decode(a, (const uint8_t[]){ 0xfd, 0x7b, 0xc2, 0xa8 }, 4, 0x1000);
    assert_int_equal(i.sp_delta, 32);
    assert_int_equal(i.nloads, 2);
    assert_int_equal(i.loads[1].reg, SW_IREG_LR);
    assert_int_equal(i.loads[1].off, -24);
    /* sub sp, sp, #0x40 */
    i = decode(a, (const uint8_t[]){ 0xff, 0x03, 0x01, 0xd1 }, 4, 0x1000);
    assert_int_equal(i.sp, SW_SP_ADD);
    assert_int_equal(i.sp_delta, -0x40);
    /* mov x29, sp */
    i = decode(a, (const uint8_t[]){ 0xfd, 0x03, 0x00, 0x91 }, 4, 0x1000);
    assert_int_equal(i.fp, SW_FP_SET);
    /* bl +8 */
    i = decode(a, (const uint8_t[]){ 0x02, 0x00, 0x00, 0x94 }, 4, 0x1000);
    assert_int_equal(i.flow, SW_FLOW_CALL);
    assert_int_equal(i.target, 0x1008);
    assert_true(i.writes[SW_IREG_LR]);
    /* ret */
    i = decode(a, (const uint8_t[]){ 0xc0, 0x03, 0x5f, 0xd6 }, 4, 0x1000);
    assert_int_equal(i.flow, SW_FLOW_RET);
    /* b.ne -8 */
    i = decode(a, (const uint8_t[]){ 0xc1, 0xff, 0xff, 0x54 }, 4, 0x1000);
    assert_int_equal(i.flow, SW_FLOW_CJUMP);
    assert_int_equal(i.target, 0xff8);
}

static void
test_disasm_ppc_frames_both_byte_orders(void **state)
{
    (void)state;
    /* stwu r1,-32(r1) = 0x9421ffe0 (big-endian ppc32) */
    struct sw_insn i = decode(&arch_ppc32, (const uint8_t[]){ 0x94, 0x21, 0xff, 0xe0 }, 4, 0x1000);
    assert_int_equal(i.sp, SW_SP_ADD);
    assert_int_equal(i.sp_delta, -32);
    /* mflr r0 = 0x7c0802a6 */
    i = decode(&arch_ppc32, (const uint8_t[]){ 0x7c, 0x08, 0x02, 0xa6 }, 4, 0x1000);
    assert_true(i.lr_to_r0);
    /* stw r0,36(r1) = 0x90010024 */
    i = decode(&arch_ppc32, (const uint8_t[]){ 0x90, 0x01, 0x00, 0x24 }, 4, 0x1000);
    assert_int_equal(i.nstores, 1);
    assert_int_equal(i.stores[0].reg, SW_IREG_R0);
    assert_int_equal(i.stores[0].off, 36);
    /* blr = 0x4e800020 */
    i = decode(&arch_ppc32, (const uint8_t[]){ 0x4e, 0x80, 0x00, 0x20 }, 4, 0x1000);
    assert_int_equal(i.flow, SW_FLOW_RET);
    /* stdu r1,-112(r1) = 0xf821ff91, little-endian ppc64le */
    i = decode(&arch_ppc64le, (const uint8_t[]){ 0x91, 0xff, 0x21, 0xf8 }, 4, 0x1000);
    assert_int_equal(i.sp, SW_SP_ADD);
    assert_int_equal(i.sp_delta, -112);
    /* bl +0x100 = 0x48000101, ppc64 big-endian */
    i = decode(&arch_ppc64, (const uint8_t[]){ 0x48, 0x00, 0x01, 0x01 }, 4, 0x1000);
    assert_int_equal(i.flow, SW_FLOW_CALL);
    assert_int_equal(i.target, 0x1100);
    /* addi r1,r1,32 = 0x38210020 */
    i = decode(&arch_ppc64, (const uint8_t[]){ 0x38, 0x21, 0x00, 0x20 }, 4, 0x1000);
    assert_int_equal(i.sp_delta, 32);
    /* bne -8 = 0x4082fff8 */
    i = decode(&arch_ppc64, (const uint8_t[]){ 0x40, 0x82, 0xff, 0xf8 }, 4, 0x1000);
    assert_int_equal(i.flow, SW_FLOW_CJUMP);
    assert_int_equal(i.target, 0xff8);
}

/* capstone 4 has no register-access tables for PowerPC: what an instruction writes comes
 * from its operands (the destination first, update forms' base, lmw up to r31). */
static void
test_disasm_ppc_writes_from_the_operands(void **state)
{
    (void)state;
    const struct arch_desc *a = &arch_ppc32;
    struct sw_insn i = decode(a, (const uint8_t[]){ 0x7d, 0x61, 0x5b, 0x78 }, 4, 0x1000);
    assert_int_equal(i.sp, SW_SP_OTHER); /* mr r1,r11 */
    i = decode(a, (const uint8_t[]){ 0x83, 0xeb, 0xff, 0xfc }, 4, 0x1000);
    assert_int_equal(i.fp, SW_FP_OTHER); /* lwz r31,-4(r11) */
    assert_int_equal(i.sp, SW_SP_KEEP);
    i = decode(a, (const uint8_t[]){ 0x80, 0x0b, 0x00, 0x04 }, 4, 0x1000);
    assert_true(i.writes[SW_IREG_R0]); /* lwz r0,4(r11) */
    i = decode(a, (const uint8_t[]){ 0x7c, 0x21, 0x01, 0x6e }, 4, 0x1000);
    assert_int_equal(i.sp, SW_SP_ADD_REG); /* stwux r1,r1,r0: SP += r0 (a big frame, alloca) */
    unsigned r0 = i.sp_reg;
    assert_false(i.sp_reg_neg);
    i = decode(a, (const uint8_t[]){ 0x7c, 0x21, 0x59, 0x6e }, 4, 0x1000);
    assert_int_equal(i.sp, SW_SP_ADD_REG); /* stwux r1,r1,r11 */
    assert_int_not_equal(i.sp_reg, r0);
    i = decode(a, (const uint8_t[]){ 0xbb, 0xab, 0xff, 0xf4 }, 4, 0x1000);
    assert_int_equal(i.fp, SW_FP_OTHER); /* lmw r29,-12(r11) */
    i = decode(a, (const uint8_t[]){ 0x93, 0xeb, 0xff, 0xfc }, 4, 0x1000);
    assert_int_equal(i.fp, SW_FP_KEEP); /* stw r31,-4(r11): a store writes no register */
    assert_int_equal(i.sp, SW_SP_KEEP);
    i = decode(a, (const uint8_t[]){ 0x2c, 0x03, 0x00, 0x00 }, 4, 0x1000);
    assert_false(i.writes[SW_IREG_R0]); /* cmpwi r3,0 */
    assert_int_equal(i.sp, SW_SP_KEEP);
    /* aarch64 paciasp (hint #25) signs x30; bti c (hint #34) does not */
    i = decode(&arch_aarch64, (const uint8_t[]){ 0x3f, 0x23, 0x03, 0xd5 }, 4, 0x1000);
    assert_true(i.ra_signed);
    i = decode(&arch_aarch64, (const uint8_t[]){ 0x5f, 0x24, 0x03, 0xd5 }, 4, 0x1000);
    assert_false(i.ra_signed);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_analysis_push_sub_call_heights_at_every_pc),
        cmocka_unit_test(test_analysis_multiple_exits_each_have_their_height),
        cmocka_unit_test(test_analysis_loop_back_edge_keeps_the_height),
        cmocka_unit_test(test_analysis_branch_join_with_equal_heights_is_known),
        cmocka_unit_test(test_analysis_branch_join_with_different_heights_is_not_mine),
        cmocka_unit_test(test_analysis_aligned_stack_uses_the_frame_pointer),
        cmocka_unit_test(test_analysis_tail_jump_ends_the_path),
        cmocka_unit_test(test_analysis_drap_realignment_finds_the_saved_cfa),
        cmocka_unit_test(test_analysis_drap_mid_stack_is_not_frame_funcs),
        cmocka_unit_test(test_analysis_walks_a_frameless_chain_to_start),
        cmocka_unit_test(test_analysis_helper_reports_heights_after_a_call),
        cmocka_unit_test(test_analysis_exit_scan_reads_the_way_out),
        cmocka_unit_test(test_disasm_x86_64_stack_and_flow),
        cmocka_unit_test(test_disasm_i386_push_is_four_bytes),
        cmocka_unit_test(test_disasm_aarch64_pairs_and_sp),
        cmocka_unit_test(test_disasm_ppc_frames_both_byte_orders),
        cmocka_unit_test(test_disasm_ppc_writes_from_the_operands),
    };
    return cmocka_run_group_tests_name("analysis", tests, NULL, NULL);
}
