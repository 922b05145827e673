/* tests/unit/arch/test_arch_aarch64.c -- the AArch64 table, a recorded QEMU g reply, the signal
 * frame, and frame-func on hand-assembled code.
 *
 * No AArch64 binary is built or committed: the code is a table of instruction words below
 * (assembled once with aarch64-linux-gnu-as -march=armv8.5-a, words copied from objdump),
 * served from fake target memory that no ELF covers, so the walker reads it from the target.
 * Symbols come from a fake symbol lookup put in front of the walker's ELF one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rspwalk/rspwalk.h"
#include "tests/tools/fake_proc.h"
#include "walker/steppers/frame_func.h"

#define DW_X29 29
#define DW_X30 30
#define DW_SP  31
#define DW_PC  32

/* ---- the table ----------------------------------------------------------- */

static void
test_aarch64_is_found_by_elf_tdesc_and_name(void **state)
{
    (void)state;
    assert_ptr_equal(arch_by_elf(183, 2, 1), &arch_aarch64); /* EM_AARCH64, ELFCLASS64, LSB */
    assert_null(arch_by_elf(183, 2, 2));                     /* aarch64_be: not a target */
    assert_null(arch_by_elf(183, 1, 1));
    assert_ptr_equal(arch_by_tdesc("aarch64"), &arch_aarch64);
    assert_ptr_equal(arch_by_name("AArch64"), &arch_aarch64);
    bool listed = false;
    for (const struct arch_desc *const *a = arch_all(); *a; a++)
        listed |= *a == &arch_aarch64;
    assert_true(listed);
    assert_int_equal(arch_aarch64.word_size, 8);
    assert_false(arch_aarch64.big_endian);
    assert_int_equal(arch_aarch64.cs_arch, 1); /* CS_ARCH_ARM64 in capstone 4 */
    assert_int_equal(arch_aarch64.cs_mode, 0);
    assert_int_equal(arch_aarch64.call_ra_on_stack, 0);
    assert_int_equal(arch_aarch64.pc_after_trap, 0);
}

static void
test_aarch64_rows_carry_aadwarf64_and_gdb_numbers(void **state)
{
    (void)state;
    const struct arch_desc *a = &arch_aarch64;
    char name[16];
    for (int i = 0; i <= 30; i++) {
        snprintf(name, sizeof name, "x%d", i);
        const struct arch_reg *r = arch_reg_by_name(a, name);
        assert_non_null(r);
        assert_int_equal(r->dwarf, i);
        assert_int_equal(r->gdb, i);
        assert_int_equal(r->size, 8);
    }
    assert_int_equal(arch_reg_by_name(a, "SP")->dwarf, 31);
    assert_int_equal(arch_reg_by_name(a, "sp")->gdb, 31);
    assert_int_equal(arch_reg_by_name(a, "pc")->dwarf, 32);
    assert_int_equal(arch_reg_by_name(a, "pc")->gdb, 32);
    assert_int_equal(arch_reg_by_name(a, "cpsr")->dwarf, -1);
    assert_int_equal(arch_reg_by_name(a, "cpsr")->gdb, 33);
    assert_int_equal(arch_reg_by_name(a, "cpsr")->size, 4);
    /* Roles: pc, sp, fp = x29, ra = x30 (the CIE return-address column). */
    assert_int_equal(a->dw_pc, DW_PC);
    assert_int_equal(a->dw_sp, DW_SP);
    assert_int_equal(a->dw_fp, DW_X29);
    assert_int_equal(a->dw_ra, DW_X30);
    assert_int_equal(arch_reg_by_dwarf(a, a->dw_pc)->role, ARCH_ROLE_PC);
    assert_int_equal(arch_reg_by_dwarf(a, a->dw_sp)->role, ARCH_ROLE_SP);
    assert_int_equal(arch_reg_by_dwarf(a, a->dw_fp)->role, ARCH_ROLE_FP);
    assert_int_equal(arch_reg_by_dwarf(a, a->dw_ra)->role, ARCH_ROLE_RA);
    assert_string_equal(arch_dwarf_name(a, 29), "x29");
    /* No vector registers: v0 (DWARF 64) would cost a 'p' per stop under QEMU. */
    assert_null(arch_reg_by_dwarf(a, 64));
    assert_null(arch_reg_by_name(a, "z0"));
    /* DWARF numbers are unique and below dw_max, which stays within a frame's registers. */
    assert_true(a->dw_max <= SW_FRAME_MAX_REGS);
    for (size_t i = 0; i < a->nregs; i++) {
        assert_true(a->regs[i].dwarf < a->dw_max);
        for (size_t k = i + 1; k < a->nregs; k++)
            if (a->regs[i].dwarf >= 0)
                assert_int_not_equal(a->regs[i].dwarf, a->regs[k].dwarf);
    }
}

/* The g reply of qemu-aarch64 7.2 (default cpu max, SVE on) stopped at the brk in e() of
 * build/fixtures/aarch64/chain-s0-O0-static, recorded with
 *   qemu-aarch64 -L /usr/aarch64-linux-gnu -g SOCK build/fixtures/aarch64/chain-s0-O0-static &
 *   RSPWALK_DEBUG=pkt build/release/rspwalk -c --sysroot /usr/aarch64-linux-gnu \
 *       --exe build/fixtures/aarch64/chain-s0-O0-static unix:SOCK 2>trace
 * It is the core feature only (x0-x30, sp, pc, cpsr): 268 bytes, although target.xml also
 * describes z0-z31 at 2048 bits, p0-p15, ffr, vg and 192 system registers. */
static const char qemu72_aarch64_g[] =
    "0100000000000000b806800055000000c806800055000000b405400000000000"
    "00058000550000004a76e9bbae99fa94382a4900000000000100000000000000"
    "e200000000000000010000000000000000000000000000001005800055000000"
    "3010000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000100000000000000"
    "b8068000550000000200000000000000c80680005500000018c8480000000000"
    "0200000000000000180000000000000000000000000000008002400000000000"
    "3000490000000000"
    "7004800055000000" /* x29 */
    "1c07400000000000" /* x30 */
    "6004800055000000" /* sp */
    "f006400000000000" /* pc */
    "00000020";        /* cpsr */

static void
test_aarch64_decodes_a_recorded_qemu_g_reply(void **state)
{
    (void)state;
    const struct arch_desc *a = &arch_aarch64;
    uint8_t g[268];
    assert_int_equal(strlen(qemu72_aarch64_g), 2 * sizeof g);
    for (size_t i = 0; i < sizeof g; i++) {
        unsigned v;
        assert_int_equal(sscanf(qemu72_aarch64_g + 2 * i, "%2x", &v), 1);
        g[i] = (uint8_t)v;
    }
    /* gdb's numbering gives the offsets (no target.xml needed for the core feature). */
    size_t off[34], at = 0;
    for (int n = 0; n <= 33; n++) {
        const struct arch_reg *r = arch_reg_by_gdb(a, n);
        assert_non_null(r);
        off[n] = at;
        at += r->size;
    }
    assert_int_equal(at, sizeof g);
    assert_null(arch_reg_by_gdb(a, 34));
    assert_int_equal(arch_load(a, g + off[32], 8), 0x4006f0);        /* pc: the brk in e */
    assert_int_equal(arch_load(a, g + off[31], 8), 0x5500800460ULL); /* sp */
    assert_int_equal(arch_load(a, g + off[29], 8), 0x5500800470ULL); /* x29: d's record */
    assert_int_equal(arch_load(a, g + off[30], 8), 0x40071c);        /* x30: into d */
    assert_int_equal(arch_load(a, g + off[33], 4), 0x20000000);      /* cpsr: C set, EL0 */
}

/* ---- the signal frame ---------------------------------------------------- */

static void
test_aarch64_sigframe_matches_the_kernel_abi(void **state)
{
    (void)state;
    const struct arch_sigframe *sf = arch_aarch64.sigframe;
    assert_non_null(sf);
    /* From /usr/aarch64-linux-gnu/include (uapi, read, not included):
     *   struct rt_sigframe { siginfo_t info; struct ucontext uc; }: siginfo is 128 bytes;
     *   asm/ucontext.h: uc_flags 8 @0, uc_link 8 @8, stack_t 24 @16, sigset_t 8 @40,
     *   __unused[1024/8 - 8] @48 .. 168, uc_mcontext aligned 16 @176;
     *   asm/sigcontext.h: fault_address @0, regs[31] @8, sp @256, pc @264, pstate @272.
     * So x29 is at uc+184+29*8 = 416, x30 at 424, sp at 432 and pc at 440 (gdb's
     * AARCH64_RT_SIGFRAME_UCONTEXT_OFFSET 128 and AARCH64_UCONTEXT_SIGCONTEXT_OFFSET 176). */
    assert_int_equal(sf->uc_offset, 128);
    assert_int_equal(sf->greg_size, 8);
    bool seen_pc = false, seen_sp = false;
    for (size_t i = 0; i < sf->ngregs; i++) {
        size_t at = sf->mcontext_offset + i * sf->greg_size;
        if (sf->greg_dwarf[i] == DW_PC)
            assert_int_equal(at, 440), seen_pc = true;
        if (sf->greg_dwarf[i] == DW_SP)
            assert_int_equal(at, 432), seen_sp = true;
        if (sf->greg_dwarf[i] == DW_X29)
            assert_int_equal(at, 416);
        if (sf->greg_dwarf[i] == DW_X30)
            assert_int_equal(at, 424);
        if (sf->greg_dwarf[i] == 0)
            assert_int_equal(at, 184);
    }
    assert_true(seen_pc && seen_sp);
    /* movz x8, #0x8b; svc #0 as little-endian words (gdb's aarch64_linux_rt_sigframe). */
    assert_int_equal(sf->tramp_len, 8);
    assert_memory_equal(sf->tramp, "\x68\x11\x80\xd2\x01\x00\x00\xd4", 8);
}

/* ---- frame-func on hand-assembled code ----------------------------------- */

#define CODE 0x10000u
/* aarch64-linux-gnu-as -march=armv8.5-a; offsets from CODE. */
static const uint32_t code_words[] = {
    /* outer  +0x00 */ 0xa9be7bfd, /* stp x29, x30, [sp, #-32]! */
    /*        +0x04 */ 0x910003fd, /* mov x29, sp */
    /*        +0x08 */ 0x94000003, /* bl big */
    /*        +0x0c */ 0xa8c27bfd, /* ldp x29, x30, [sp], #32 */
    /*        +0x10 */ 0xd65f03c0, /* ret */
    /* big    +0x14 */ 0xd503245f, /* bti c */
    /*        +0x18 */ 0xd10103ff, /* sub sp, sp, #0x40 */
    /*        +0x1c */ 0xa9017bfd, /* stp x29, x30, [sp, #16] */
    /*        +0x20 */ 0x910043fd, /* add x29, sp, #0x10 */
    /*        +0x24 */ 0x94000004, /* bl leaf */
    /*        +0x28 */ 0xa9417bfd, /* ldp x29, x30, [sp, #16] */
    /*        +0x2c */ 0x910103ff, /* add sp, sp, #0x40 */
    /*        +0x30 */ 0xd65f03c0, /* ret */
    /* leaf   +0x34 */ 0xd10043ff, /* sub sp, sp, #0x10 */
    /*        +0x38 */ 0xd503201f, /* nop */
    /*        +0x3c */ 0x910043ff, /* add sp, sp, #0x10 */
    /*        +0x40 */ 0xd65f03c0, /* ret */
    /* tramp  +0x44 */ 0xd2801168, /* mov x8, #0x8b */
    /*        +0x48 */ 0xd4000001, /* svc #0 */
    /* pacfn  +0x4c */ 0xd503233f, /* paciasp */
    /*        +0x50 */ 0xa9bf7bfd, /* stp x29, x30, [sp, #-16]! */
    /*        +0x54 */ 0x910003fd, /* mov x29, sp */
    /*        +0x58 */ 0x97fffff7, /* bl leaf */
    /*        +0x5c */ 0xa8c17bfd, /* ldp x29, x30, [sp], #16 */
    /*        +0x60 */ 0xd50323bf, /* autiasp */
    /*        +0x64 */ 0xd65f03c0, /* ret */
    /* omitfp +0x68 */ 0xf81f0ffe, /* str x30, [sp, #-16]! */
    /*        +0x6c */ 0x97fffff2, /* bl leaf */
    /*        +0x70 */ 0xf84107fe, /* ldr x30, [sp], #16 */
    /*        +0x74 */ 0xd65f03c0, /* ret */
    /* nosym  +0x78 */ 0xd2800020, /* mov x0, #1: covered by no symbol */
    /*        +0x7c */ 0xd65f03c0, /* ret */
};

#define OUTER  (CODE + 0x00)
#define BIG    (CODE + 0x14)
#define LEAF   (CODE + 0x34)
#define TRAMP  (CODE + 0x44)
#define PACFN  (CODE + 0x4c)
#define OMITFP (CODE + 0x68)
#define NOSYM  (CODE + 0x78)
#define ENTRY  0x20000u /* "_start": called outer; no code, no symbol */

#define STACK 0x7fff0000u
#define S     (STACK + 0x400) /* SP of frame 0 */

static const struct sw_symbol fake_syms[] = {
    { "outer", OUTER, 0x14, "fake" }, { "big", BIG, 0x20, "fake" },
    { "leaf", LEAF, 0x10, "fake" },   { "tramp", TRAMP, 0x08, "fake" },
    { "pacfn", PACFN, 0x1c, "fake" }, { "omitfp", OMITFP, 0x10, "fake" },
};

/* The walker's symbol lookup is an ops table: the test's stands in front of it and hands
 * destruction back to it. */
static const struct sw_symlookup_ops *elf_sym_ops;

static int
fake_lookup(struct sw_symlookup *s, sw_addr addr, struct sw_symbol *out)
{
    (void)s;
    for (size_t i = 0; i < sizeof fake_syms / sizeof fake_syms[0]; i++)
        if (addr >= fake_syms[i].start && addr < fake_syms[i].start + fake_syms[i].size) {
            *out = fake_syms[i];
            return 0;
        }
    return SW_ENOSYM;
}

static void
fake_destroy(struct sw_symlookup *s)
{
    s->ops = elf_sym_ops;
    sw_symlookup_free(s);
}

static const struct sw_symlookup_ops fake_sym_ops = {
    .lookup = fake_lookup,
    .destroy = fake_destroy,
};

struct walk_fixture {
    struct sw_proc *p;
    struct sw_walker *w;
    struct sw_stack st;
};

/* A walker over the code above; frame 0 at PC with SP, x29 and x30.  STEPPERS: the default
 * ones, or frame-func alone. */
static void
fixture_open(struct walk_fixture *fx, sw_addr pc, sw_addr sp, sw_addr x29, sw_addr x30,
             bool defaults)
{
    uint8_t code[sizeof code_words];
    for (size_t i = 0; i < sizeof code_words / 4; i++)
        arch_store(&arch_aarch64, code + 4 * i, 4, code_words[i]);
    fx->p = fake_proc_new(&arch_aarch64);
    fake_proc_add_mem(fx->p, CODE, code, sizeof code);
    fake_proc_add_mem(fx->p, STACK, NULL, 0x1000);
    fake_proc_set_reg(fx->p, 1, DW_PC, pc);
    fake_proc_set_reg(fx->p, 1, DW_SP, sp);
    fake_proc_set_reg(fx->p, 1, DW_X29, x29);
    fake_proc_set_reg(fx->p, 1, DW_X30, x30);
    struct sw_walker_config cfg = { .no_default_steppers = !defaults };
    struct sw_errbuf err = { 0 };
    if (sw_walker_new(fx->p, &cfg, &fx->w, &err) != 0)
        fail_msg("sw_walker_new: %s", err.msg);
    if (!defaults && sw_add_stepper(fx->w, sw_stepper_frame_func_new()) != 0)
        fail_msg("sw_add_stepper: %s", sw_walker_errmsg(fx->w));
    struct sw_symlookup *sl = sw_walker_symlookup(fx->w);
    elf_sym_ops = sl->ops;
    sl->ops = &fake_sym_ops;
    sw_stack_init(&fx->st);
}

static void
fixture_close(struct walk_fixture *fx)
{
    sw_stack_fini(&fx->st);
    sw_walker_free(fx->w);
}

/* The stack of leaf <- big <- outer <- ENTRY, with frame 0 in leaf and SP = S:
 *   leaf allocated 16:             big's SP = S + 0x10
 *   big: sub 0x40, record at +16:  x29 = S + 0x20, big's caller SP = x29 + 0x30 = S + 0x50
 *   outer: stp ..., [sp, #-32]!:   x29 = S + 0x50, outer's caller SP = S + 0x70 */
#define F_BIG   (S + 0x20)
#define F_OUTER (S + 0x50)

static void
put_chain(struct sw_proc *p)
{
    fake_proc_put_word(p, F_BIG, F_OUTER);
    fake_proc_put_word(p, F_BIG + 8, OUTER + 0x0c); /* into outer after bl big */
    fake_proc_put_word(p, F_OUTER, 0);              /* "_start" cleared x29 */
    fake_proc_put_word(p, F_OUTER + 8, ENTRY);
    /* omitfp's x30 slot when it stands in for big (its SP S + 0x10, str x30, [sp, #-16]!
     * from S + 0x20): unused by the others */
    fake_proc_put_word(p, S + 0x10, OUTER + 0x0c);
}

static void
test_frame_func_walks_a_leaf_with_the_live_lr_then_frame_records(void **state)
{
    (void)state;
    struct walk_fixture fx;
    fixture_open(&fx, LEAF + 4, S, F_BIG, BIG + 0x14, false);
    put_chain(fx.p);

    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    assert_int_equal(fx.st.n, 4);
    /* leaf: caller from x30, SP past leaf's own 16 bytes, x29 unchanged */
    assert_int_equal(fx.st.frames[1].ra, BIG + 0x14);
    assert_int_equal(fx.st.frames[1].sp, S + 0x10);
    assert_int_equal(fx.st.frames[1].fp, F_BIG);
    assert_int_equal(fx.st.frames[1].ra_loc.kind, SW_LOC_REGISTER);
    assert_int_equal(fx.st.frames[1].ra_loc.reg, DW_X30);
    /* big: the record at x29, caller SP = x29 + (0x40 - 16) as gdb's CFA */
    assert_int_equal(fx.st.frames[2].ra, OUTER + 0x0c);
    assert_int_equal(fx.st.frames[2].sp, F_OUTER);
    assert_int_equal(fx.st.frames[2].fp, F_OUTER);
    assert_int_equal(fx.st.frames[2].ra_loc.kind, SW_LOC_ADDRESS);
    assert_int_equal(fx.st.frames[2].ra_loc.addr, F_BIG + 8);
    assert_int_equal(fx.st.frames[2].trust, SW_TRUST_FP);
    sw_word x30 = 0;
    assert_true(sw_frame_reg(&fx.st.frames[2], DW_X30, &x30));
    assert_int_equal(x30, OUTER + 0x0c);
    /* outer: stp ...! of 32 bytes */
    assert_int_equal(fx.st.frames[3].ra, ENTRY);
    assert_int_equal(fx.st.frames[3].sp, F_OUTER + 0x20);
    assert_int_equal(fx.st.frames[3].fp, 0);
    /* ENTRY has no symbol: assumed a set frame, and its zero x29 ends the walk. */
    assert_int_equal(fx.st.end, SW_END_BOTTOM);
    assert_true(fx.st.frames[3].bottom);
    assert_string_equal(fx.st.frames[1].stepper->ops->name, "frame-func");
    fixture_close(&fx);
}

/* Frame 0 at PC with SP: the caller's RA, SP and FP frame-func computes. */
static void
check_top(sw_addr pc, sw_addr sp, sw_addr x29, sw_addr x30, sw_addr ra_want, sw_addr sp_want,
          sw_addr fp_want)
{
    struct walk_fixture fx;
    struct sw_frame top, caller;
    enum sw_walk_end end;
    fixture_open(&fx, pc, sp, x29, x30, false);
    put_chain(fx.p);
    assert_int_equal(sw_initial_frame(fx.w, SW_TID_DEFAULT, &top), 0);
    if (sw_walk_single(fx.w, &top, &caller, &end) != 0)
        fail_msg("pc %#lx: no caller (end %s)", (unsigned long)pc, sw_walk_end_name(end));
    if (caller.ra != ra_want || caller.sp != sp_want || caller.fp != fp_want)
        fail_msg("pc %#lx: caller ra %#lx sp %#lx fp %#lx, want %#lx %#lx %#lx", (unsigned long)pc,
                 (unsigned long)caller.ra, (unsigned long)caller.sp, (unsigned long)caller.fp,
                 (unsigned long)ra_want, (unsigned long)sp_want, (unsigned long)fp_want);
    fixture_close(&fx);
}

static void
test_frame_func_follows_big_through_prologue_and_epilogue(void **state)
{
    (void)state;
    const sw_addr ra = OUTER + 0x0c, entry_sp = S + 0x50; /* big's caller: outer */
    const sw_addr fp = F_OUTER;                           /* outer's x29 */
    /* at bti c, and at sub: nothing allocated, x29/x30 the caller's */
    check_top(BIG + 0x00, entry_sp, fp, ra, ra, entry_sp, fp);
    check_top(BIG + 0x04, entry_sp, fp, ra, ra, entry_sp, fp);
    /* after sub, before stp: SP + 0x40 */
    check_top(BIG + 0x08, S + 0x10, fp, ra, ra, entry_sp, fp);
    /* after stp, before add x29: the record at SP + 16 (x30 could be stale; the record is
     * read), here with a wrong live x30 to prove it */
    check_top(BIG + 0x0c, S + 0x10, fp, 0xdead, ra, entry_sp, fp);
    /* set: x29 */
    check_top(BIG + 0x10, S + 0x10, F_BIG, 0xdead, ra, entry_sp, fp);
    /* at ldp x29, x30 (record ahead): still x29 */
    check_top(BIG + 0x14, S + 0x10, F_BIG, 0xdead, ra, entry_sp, fp);
    /* at add sp (reloaded): x30 live, SP + 0x40 still to free */
    check_top(BIG + 0x18, S + 0x10, fp, ra, ra, entry_sp, fp);
    /* at ret */
    check_top(BIG + 0x1c, entry_sp, fp, ra, ra, entry_sp, fp);
}

static void
test_frame_func_follows_a_leaf_and_a_pre_index_record(void **state)
{
    (void)state;
    const sw_addr ra = BIG + 0x14;
    check_top(LEAF + 0x0, S + 0x10, F_BIG, ra, ra, S + 0x10, F_BIG); /* at sub: SP equal */
    check_top(LEAF + 0x4, S, F_BIG, ra, ra, S + 0x10, F_BIG);
    check_top(LEAF + 0x8, S, F_BIG, ra, ra, S + 0x10, F_BIG); /* at add sp */
    check_top(LEAF + 0xc, S + 0x10, F_BIG, ra, ra, S + 0x10, F_BIG);
    /* outer after stp ...! but before mov x29: the record at SP */
    check_top(OUTER + 0x4, F_OUTER, 0, 0xdead, ENTRY, F_OUTER + 0x20, 0);
    /* outer at ldp ..., #32 (ahead): x29 */
    check_top(OUTER + 0xc, F_OUTER, F_OUTER, 0xdead, ENTRY, F_OUTER + 0x20, 0);
    /* outer at ret after the ldp: x30 */
    check_top(OUTER + 0x10, F_OUTER + 0x20, 0, ENTRY, ENTRY, F_OUTER + 0x20, 0);
}

static void
test_frame_func_strips_a_pac_from_a_signed_return_address(void **state)
{
    (void)state;
    struct walk_fixture fx;
    sw_addr fp = S + 0x100;
    fixture_open(&fx, PACFN + 0x0c, fp, fp, 0, false);
    fake_proc_put_word(fx.p, fp, 0);
    fake_proc_put_word(fx.p, fp + 8, 0x002a000000000000ull | ENTRY); /* PAC in 54:48 */
    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    assert_int_equal(fx.st.n, 2);
    assert_int_equal(fx.st.frames[1].ra, ENTRY);
    assert_int_equal(fx.st.frames[1].sp, fp + 16);
    fixture_close(&fx);
}

static void
test_frame_func_helper_classifies_aarch64_prologues(void **state)
{
    (void)state;
    struct walk_fixture fx;
    struct sw_frame_alloc fa;
    fixture_open(&fx, OUTER, S, 0, 0, false);
    static const struct {
        sw_addr pc;
        enum sw_frame_type type;
        enum sw_frame_state st;
    } rows[] = {
        { OUTER + 0x0, SW_FRAME_STANDARD, SW_FRAME_UNSET },
        { OUTER + 0x4, SW_FRAME_STANDARD, SW_FRAME_HALFSET },
        { OUTER + 0x8, SW_FRAME_STANDARD, SW_FRAME_SET },
        { OUTER + 0xc, SW_FRAME_STANDARD, SW_FRAME_SET },    /* ldp ahead */
        { OUTER + 0x10, SW_FRAME_STANDARD, SW_FRAME_UNSET }, /* ret */
        { BIG + 0x08, SW_FRAME_STANDARD, SW_FRAME_UNSET },   /* stp not yet done */
        { BIG + 0x0c, SW_FRAME_STANDARD, SW_FRAME_HALFSET },
        { BIG + 0x10, SW_FRAME_STANDARD, SW_FRAME_SET },
        { BIG + 0x18, SW_FRAME_STANDARD, SW_FRAME_UNSET }, /* add sp after the reload */
        { LEAF + 0x4, SW_FRAME_NO_FRAME, SW_FRAME_UNSET },
        { PACFN + 0x4, SW_FRAME_STANDARD, SW_FRAME_UNSET }, /* paciasp is skipped */
        { PACFN + 0xc, SW_FRAME_STANDARD, SW_FRAME_SET },
        { OMITFP + 0x4, SW_FRAME_NO_FRAME, SW_FRAME_SET }, /* x30 stored: LR is stale */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        assert_int_equal(sw_frame_func_alloc(fx.w, rows[i].pc, true, &fa), 0);
        if (fa.type != rows[i].type || fa.state != rows[i].st)
            fail_msg("pc %#lx: type %d state %d, want %d %d", (unsigned long)rows[i].pc,
                     (int)fa.type, (int)fa.state, (int)rows[i].type, (int)rows[i].st);
    }
    assert_int_equal(sw_frame_func_alloc(fx.w, ENTRY, true, &fa), SW_ENOSYM);
    assert_int_equal(fa.type, SW_FRAME_UNKNOWN_T);
    fixture_close(&fx);
}

static void
test_frame_func_leaf_mid_stack_is_not_mine(void **state)
{
    (void)state;
    struct walk_fixture fx;
    struct sw_frame top, f;
    enum sw_walk_end end;
    fixture_open(&fx, LEAF + 4, S, F_BIG, BIG + 0x14, false);
    assert_int_equal(sw_initial_frame(fx.w, SW_TID_DEFAULT, &top), 0);
    /* A caller frame returning into leaf: leaf never built a record (Dyninst's rule). */
    top.top = false;
    top.ra = LEAF + 8;
    assert_int_equal(sw_walk_single(fx.w, &top, &f, &end), SW_ENOENT);
    assert_int_equal(end, SW_END_NO_STEPPER);
    fixture_close(&fx);
}

/* -fomit-frame-pointer: `str x30, [sp, #-16]!` and no record.  x30 is found in its slot from
 * SP, at the top past the save and mid-stack (gdb's prologue analyzer does the same). */
static void
test_frame_func_omitted_fp_reads_x30_from_its_slot(void **state)
{
    (void)state;
    struct walk_fixture fx;
    /* frame 0 in leaf, called from omitfp (+0x70 after bl), which outer called */
    fixture_open(&fx, LEAF + 4, S, F_OUTER, OMITFP + 0x08, false);
    put_chain(fx.p);
    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    assert_int_equal(fx.st.n, 4);
    assert_int_equal(fx.st.frames[1].ra, OMITFP + 0x08);
    assert_int_equal(fx.st.frames[1].sp, S + 0x10);
    assert_int_equal(fx.st.frames[2].ra, OUTER + 0x0c);
    assert_int_equal(fx.st.frames[2].sp, S + 0x20);
    assert_int_equal(fx.st.frames[2].fp, F_OUTER); /* x29 untouched */
    assert_int_equal(fx.st.frames[2].ra_loc.addr, S + 0x10);
    assert_int_equal(fx.st.frames[2].trust, SW_TRUST_ANALYSIS);
    assert_int_equal(fx.st.frames[3].ra, ENTRY);
    fixture_close(&fx);
    /* at the top: past the save, at ldr x30 ahead, and at ret after it */
    check_top(OMITFP + 0x4, S + 0x10, F_OUTER, 0xdead, OUTER + 0x0c, S + 0x20, F_OUTER);
    check_top(OMITFP + 0x8, S + 0x10, F_OUTER, 0xdead, OUTER + 0x0c, S + 0x20, F_OUTER);
    check_top(OMITFP + 0xc, S + 0x20, F_OUTER, OUTER + 0x0c, OUTER + 0x0c, S + 0x20, F_OUTER);
}

static void
test_frame_func_without_a_symbol_uses_x29_or_the_ret_it_sits_on(void **state)
{
    (void)state;
    /* At a PC no symbol covers and no code can be read at: a set frame record at x29, with
     * the least CFA (x29 + 16). */
    check_top(ENTRY, S + 0x10, F_BIG, 0xdead, OUTER + 0x0c, F_BIG + 16, F_OUTER);
    /* At a mov no symbol covers, a ret after it: the live x30 and an unchanged SP. */
    check_top(NOSYM, S + 0x10, F_BIG, BIG + 0x14, BIG + 0x14, S + 0x10, F_BIG);
    /* At a ret no symbol covers: the live x30 and an unchanged SP. */
    check_top(NOSYM + 4, S + 0x10, F_BIG, BIG + 0x14, BIG + 0x14, S + 0x10, F_BIG);
}

static void
test_frame_func_dead_link_ends_the_walk(void **state)
{
    (void)state;
    struct walk_fixture fx;
    struct sw_frame top, f;
    enum sw_walk_end end;
    fixture_open(&fx, BIG + 0x10, S + 0x10, F_BIG, 0, false);
    assert_int_equal(sw_initial_frame(fx.w, SW_TID_DEFAULT, &top), 0);
    fake_proc_fail_reads(fx.p, SW_ETIMEDOUT);
    assert_int_equal(sw_walk_single(fx.w, &top, &f, &end), SW_ETIMEDOUT);
    assert_int_equal(end, SW_END_LINK);
    fixture_close(&fx);
}

/* A handler (leaf) returned to by the trampoline, which no ELF covers: the walker reads its
 * bytes from target memory, the sighandler stepper reads the interrupted registers from the
 * ucontext, and frame-func carries on from outer's record. */
static void
test_signal_frame_through_the_trampoline_in_target_memory(void **state)
{
    (void)state;
    struct walk_fixture fx;
    const sw_addr sigsp = S + 0x10; /* the handler's caller SP: struct rt_sigframe */
    const sw_addr regs = sigsp + 128 + 184;
    fixture_open(&fx, LEAF + 4, S, 0x1234, TRAMP, true);
    put_chain(fx.p);
    /* interrupted: outer, set, at +8 (the bl), SP = x29 = F_OUTER */
    fake_proc_put_word(fx.p, regs + 29 * 8, F_OUTER);
    fake_proc_put_word(fx.p, regs + 30 * 8, 0x777);
    fake_proc_put_word(fx.p, regs + 31 * 8, F_OUTER);
    fake_proc_put_word(fx.p, regs + 32 * 8, OUTER + 8);

    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    assert_int_equal(fx.st.n, 4);
    assert_int_equal(fx.st.frames[1].ra, TRAMP);
    assert_int_equal(fx.st.frames[1].kind, SW_FRAME_SIGNAL);
    assert_int_equal(fx.st.frames[1].sp, sigsp);
    assert_int_equal(fx.st.frames[2].ra, OUTER + 8);
    assert_int_equal(fx.st.frames[2].sp, F_OUTER);
    assert_int_equal(fx.st.frames[2].ra_loc.addr, regs + 32 * 8);
    assert_string_equal(fx.st.frames[2].stepper->ops->name, "sighandler");
    sw_word x30 = 0;
    assert_true(sw_frame_reg(&fx.st.frames[2], DW_X30, &x30));
    assert_int_equal(x30, 0x777);
    assert_int_equal(fx.st.frames[3].ra, ENTRY);
    assert_int_equal(fx.st.end, SW_END_BOTTOM);
    fixture_close(&fx);
}

/* A signal that came while a leaf sat at its first instruction: the leaf's caller shares its
 * SP, which the walker accepts for a frame with an exact PC as it does for frame 0. */
static void
test_signal_interrupting_a_leaf_at_entry_walks_on_to_its_callers(void **state)
{
    (void)state;
    struct walk_fixture fx;
    const sw_addr hsp = STACK + 0x100; /* the handler runs below the interrupted stack */
    const sw_addr regs = hsp + 0x10 + 128 + 184;
    fixture_open(&fx, LEAF + 4, hsp, 0x1234, TRAMP, true);
    put_chain(fx.p);
    fake_proc_put_word(fx.p, regs + 29 * 8, F_BIG);
    fake_proc_put_word(fx.p, regs + 30 * 8, BIG + 0x14);
    fake_proc_put_word(fx.p, regs + 31 * 8, S + 0x10);
    fake_proc_put_word(fx.p, regs + 32 * 8, LEAF);

    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    assert_int_equal(fx.st.n, 6);
    assert_int_equal(fx.st.frames[2].ra, LEAF);
    assert_true(fx.st.frames[2].non_call);
    assert_int_equal(fx.st.frames[3].ra, BIG + 0x14);
    assert_int_equal(fx.st.frames[3].sp, fx.st.frames[2].sp);
    assert_int_equal(fx.st.frames[4].ra, OUTER + 0x0c);
    assert_int_equal(fx.st.frames[5].ra, ENTRY);
    assert_int_equal(fx.st.end, SW_END_BOTTOM);
    fixture_close(&fx);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_aarch64_is_found_by_elf_tdesc_and_name),
        cmocka_unit_test(test_aarch64_rows_carry_aadwarf64_and_gdb_numbers),
        cmocka_unit_test(test_aarch64_decodes_a_recorded_qemu_g_reply),
        cmocka_unit_test(test_aarch64_sigframe_matches_the_kernel_abi),
        cmocka_unit_test(test_frame_func_walks_a_leaf_with_the_live_lr_then_frame_records),
        cmocka_unit_test(test_frame_func_follows_big_through_prologue_and_epilogue),
        cmocka_unit_test(test_frame_func_follows_a_leaf_and_a_pre_index_record),
        cmocka_unit_test(test_frame_func_strips_a_pac_from_a_signed_return_address),
        cmocka_unit_test(test_frame_func_helper_classifies_aarch64_prologues),
        cmocka_unit_test(test_frame_func_leaf_mid_stack_is_not_mine),
        cmocka_unit_test(test_frame_func_omitted_fp_reads_x30_from_its_slot),
        cmocka_unit_test(test_frame_func_without_a_symbol_uses_x29_or_the_ret_it_sits_on),
        cmocka_unit_test(test_frame_func_dead_link_ends_the_walk),
        cmocka_unit_test(test_signal_frame_through_the_trampoline_in_target_memory),
        cmocka_unit_test(test_signal_interrupting_a_leaf_at_entry_walks_on_to_its_callers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
