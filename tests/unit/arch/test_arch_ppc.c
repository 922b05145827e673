/* tests/unit/arch/test_arch_ppc.c -- the ppc32, ppc64 and ppc64le tables, recorded QEMU g replies,
 * the signal frames, and frame-func on hand-assembled code.
 *
 * No PowerPC binary is built or committed: the code is tables of instruction words below
 * (encodings from the Power ISA, checked against powerpc64-linux-gnu-objdump), stored in
 * the target's byte order in fake target memory that no ELF covers, so the walker reads it
 * from the target.  Symbols come from a fake symbol lookup put in front of the walker's.
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

#define DW_R1  1
#define DW_R31 31
#define DW_LR  65
#define DW_PC  67

/* ---- the tables ---------------------------------------------------------- */

static void
test_ppc_is_found_by_elf_tdesc_and_name(void **state)
{
    (void)state;
    assert_ptr_equal(arch_by_elf(20, 1, 2), &arch_ppc32); /* EM_PPC, ELFCLASS32, MSB */
    assert_ptr_equal(arch_by_elf(21, 2, 2), &arch_ppc64); /* EM_PPC64, ELFCLASS64, MSB */
    assert_ptr_equal(arch_by_elf(21, 2, 1), &arch_ppc64le);
    assert_null(arch_by_elf(20, 1, 1)); /* no little-endian ppc32 */
    assert_null(arch_by_elf(21, 1, 2));
    assert_ptr_equal(arch_by_tdesc("powerpc:common"), &arch_ppc32);
    /* target.xml names no byte order: big-endian, which the ELF header corrects. */
    assert_ptr_equal(arch_by_tdesc("powerpc:common64"), &arch_ppc64);
    assert_ptr_equal(arch_by_name("ppc"), &arch_ppc32);
    assert_ptr_equal(arch_by_name("PPC64"), &arch_ppc64);
    assert_ptr_equal(arch_by_name("ppc64le"), &arch_ppc64le);
    assert_true(arch_ppc32.big_endian && arch_ppc64.big_endian && !arch_ppc64le.big_endian);
    assert_int_equal(arch_ppc32.word_size, 4);
    assert_int_equal(arch_ppc64le.word_size, 8);
    /* capstone 4: CS_ARCH_PPC, CS_MODE_32/64, CS_MODE_BIG_ENDIAN = 1 << 31. */
    assert_int_equal(arch_ppc64.cs_arch, 4);
    assert_int_equal((unsigned)arch_ppc32.cs_mode, 0x80000004u);
    assert_int_equal((unsigned)arch_ppc64.cs_mode, 0x80000008u);
    assert_int_equal(arch_ppc64le.cs_mode, 8);
    bool seen[3] = { false, false, false };
    for (const struct arch_desc *const *a = arch_all(); *a; a++) {
        seen[0] |= *a == &arch_ppc32;
        seen[1] |= *a == &arch_ppc64;
        seen[2] |= *a == &arch_ppc64le;
    }
    assert_true(seen[0] && seen[1] && seen[2]);
}

static void
check_rows(const struct arch_desc *a, unsigned word)
{
    assert_int_equal(a->dw_sp, 1);
    assert_int_equal(a->dw_fp, 31);
    assert_int_equal(a->dw_ra, 65); /* GCC's .eh_frame return-address column */
    assert_int_equal(a->dw_pc, 67); /* the pseudo number for the PC */
    assert_string_equal(arch_reg_by_dwarf(a, a->dw_pc)->name, "pc");
    assert_int_equal(arch_reg_by_dwarf(a, a->dw_pc)->role, ARCH_ROLE_PC);
    assert_int_equal(arch_reg_by_dwarf(a, a->dw_sp)->role, ARCH_ROLE_SP);
    assert_string_equal(arch_reg_by_dwarf(a, 65)->name, "lr");
    assert_int_equal(arch_reg_by_dwarf(a, 65)->role, ARCH_ROLE_RA);
    assert_string_equal(arch_reg_by_dwarf(a, 66)->name, "ctr");
    assert_string_equal(arch_reg_by_dwarf(a, 76)->name, "xer");
    assert_int_equal(arch_reg_by_name(a, "R17")->dwarf, 17);
    /* gdb's numbering without target.xml: f0-f31 between r31 and pc. */
    assert_string_equal(arch_reg_by_gdb(a, 64)->name, "pc");
    assert_string_equal(arch_reg_by_gdb(a, 67)->name, "lr");
    assert_string_equal(arch_reg_by_gdb(a, 32)->name, "f0");
    assert_int_equal(arch_reg_by_name(a, "f0")->dwarf, -1); /* never fetched by frame 0 */
    assert_int_equal(arch_reg_by_name(a, "r5")->size, word);
    assert_int_equal(arch_reg_by_name(a, "pc")->size, word);
    assert_int_equal(arch_reg_by_name(a, "cr")->size, 4);
    assert_int_equal(arch_reg_by_name(a, "xer")->size, 4);
    assert_true(a->dw_max <= SW_FRAME_MAX_REGS);
    for (size_t i = 0; i < a->nregs; i++) {
        assert_true(a->regs[i].dwarf < a->dw_max);
        for (size_t k = i + 1; k < a->nregs; k++) {
            if (a->regs[i].dwarf >= 0)
                assert_int_not_equal(a->regs[i].dwarf, a->regs[k].dwarf);
            assert_int_not_equal(a->regs[i].gdb, a->regs[k].gdb);
        }
    }
}

static void
test_ppc_rows_carry_eh_frame_and_gdb_numbers(void **state)
{
    (void)state;
    check_rows(&arch_ppc32, 4);
    check_rows(&arch_ppc64, 8);
    check_rows(&arch_ppc64le, 8);
    /* QEMU 7.2's ppc32 g before target.xml is read is gdb's default layout: 412 bytes
     * (measured: the 'g' reply's length). */
    size_t at = 0;
    for (int n = 0;; n++) {
        const struct arch_reg *r = arch_reg_by_gdb(&arch_ppc32, n);
        if (r == NULL)
            break;
        at += r->size;
    }
    assert_int_equal(at, 412);
}

/* ---- recorded g replies -------------------------------------------------- */

/* Recorded with `RSPWALK_DEBUG=pkt build/release/rspwalk -c --sysroot /usr/TRIPLET --exe
 * build/fixtures/ARCH/chain-s0-O0-static 127.0.0.1:PORT 2>trace` against `qemu-ARCH -L
 * /usr/TRIPLET -g PORT build/fixtures/ARCH/chain-s0-O0-static` (qemu 7.2.22, Debian
 * 1:7.2+dfsg-7+deb12u18), the reply to the first `g`: frame 0 on the `trap` in e. */
static const char qemu72_ppc_g[] =
    "10000588408004d0100bb50000000005408007f4408007fc408008a8000000000000000000000001408005"
    "900000000010000d10100b917800000000000000000000000000000000000000000000000000000000100b"
    "0000100b124c000000001000071c100ace40408007fc408008a8408007f400000001100b6df8408004d010"
    "0005200000694048000282100005001000071c00000000";
static const char qemu72_ppc64_g[] =
    "000000001000095400000040007fffc000000000100d7e0000000000000000050000004000800688000000"
    "400080069800000040008007f0000000000000000000000000000000000000000000000001000000400080"
    "02f00000000000000000000000002400022200000000100df7c00000000000000000000000000000000000"
    "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "00000000000000000000000000000000100d7078000000001000027800000000100c797800000040008006"
    "9800000000100cad4800000040008007f00000004000800688000000000000000100000040007fffc00000"
    "00001000087c90000001028069004400022200000000100008d80000000010000a9820040000";
static const char qemu72_ppc64le_g[] =
    "3c0c001000000000a001800040000000007b0e100000000005000000000000007806800040000000880680"
    "0040000000e00780004000000090700e100000000030020000000000000100000000000000f09502100000"
    "00000000000000000000900d001000000000c0f70e10000000000000000000000000000000000000000000"
    "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "00000000000000000000000090700e1000000000b803001000000000b0c70d1000000000900d0010000000"
    "000100000000000000e00780004000000078068000400000000100000000000000a001800040000000540b"
    "001000000000016980020100009082020042b80b001000000000900d00100000000000000420";

struct g_expect {
    sw_word pc, r1, lr, msr, cr, xer;
};

static void
check_g(const struct arch_desc *a, const char *hex, size_t len, const struct g_expect *e)
{
    uint8_t g[296];
    assert_int_equal(strlen(hex), 2 * len);
    for (size_t i = 0; i < len; i++) {
        unsigned v;
        assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
        g[i] = (uint8_t)v;
    }
    /* QEMU's numbering after target.xml: r0-r31, then 32-63 empty (its FPRs sit at 71..,
     * outside g), pc 64 ... xer 69, in that order; sizes from the table. */
    static const char *const core[] = { "pc", "msr", "cr", "lr", "ctr", "xer" };
    size_t off[6], at = 32 * a->word_size;
    for (size_t i = 0; i < 6; i++) {
        off[i] = at;
        at += arch_reg_by_name(a, core[i])->size;
    }
    assert_int_equal(at, len);
    assert_int_equal(arch_load(a, g + off[0], a->word_size), e->pc);
    assert_int_equal(arch_load(a, g + 1 * a->word_size, a->word_size), e->r1);
    assert_int_equal(arch_load(a, g + off[3], a->word_size), e->lr);
    assert_int_equal(arch_load(a, g + off[1], a->word_size), e->msr);
    assert_int_equal(arch_load(a, g + off[2], 4), e->cr);
    assert_int_equal(arch_load(a, g + off[5], 4), e->xer);
}

static void
test_ppc_decodes_recorded_qemu_g_replies(void **state)
{
    (void)state;
    /* ppc32, big-endian, 152 bytes: the trap at e+60, LR inside e (its bcl for the GOT). */
    check_g(&arch_ppc32, qemu72_ppc_g, 152,
            &(struct g_expect){ 0x10000520, 0x408004d0, 0x10000500, 0x6940, 0x48000282, 0 });
    /* ppc64, big-endian, 296 bytes: e is a leaf, LR returns into d (d+48). */
    check_g(&arch_ppc64, qemu72_ppc64_g, 296,
            &(struct g_expect){ 0x1000087c, 0x40007fffc0ULL, 0x100008d8, 0x9000000102806900ULL,
                                0x44000222, 0x20040000 });
    /* ppc64le: the same words little-endian; MSR[LE] (bit 0) set. */
    check_g(&arch_ppc64le, qemu72_ppc64le_g, 296,
            &(struct g_expect){ 0x10000b54, 0x40008001a0ULL, 0x10000bb8, 0x9000000102806901ULL,
                                0x42000282, 0x20040000 });
}

/* ---- the signal frames --------------------------------------------------- */

static uint32_t
word_at(const struct arch_desc *a, const uint8_t *p)
{
    return (uint32_t)arch_load(a, p, 4);
}

static void
test_ppc_sigframes_match_the_kernel_abi(void **state)
{
    (void)state;
    /* pt_regs order: gpr[0..31], nip 32, msr, orig_gpr3, ctr 35, link 36, xer 37, ccr 38. */
    const struct arch_sigframe *sf = arch_ppc32.sigframe;
    assert_int_equal(sf->ngregs, 39);
    assert_int_equal(sf->greg_dwarf[1], DW_R1);
    assert_int_equal(sf->greg_dwarf[32], DW_PC);
    assert_int_equal(sf->greg_dwarf[36], DW_LR);
    assert_int_equal(sf->greg_dwarf[33], -1);

    /* ppc32 rt: uc at SP + 64 + 16 + 128 (gdb 0xd0), uc_regs at +48 pointing at
     * uc_mcontext (+192), 4-byte slots; the trampoline li r0,172; sc. */
    assert_int_equal(sf->uc_offset, 208);
    assert_int_equal(sf->mcontext_offset, 192);
    assert_int_equal(sf->regs_ptr_offset, 48);
    assert_int_equal(sf->greg_size, 4);
    assert_int_equal(sf->tramp_len, 8);
    assert_int_equal(word_at(&arch_ppc32, sf->tramp), 0x380000ac);
    assert_int_equal(word_at(&arch_ppc32, sf->tramp + 4), 0x44000002);
    /* ppc32 without SA_SIGINFO: sigcontext at SP + 64, regs (+28) at the mcontext (+32);
     * li r0,119; sc. */
    sf = sf->next;
    assert_non_null(sf);
    assert_int_equal(sf->uc_offset, 64);
    assert_int_equal(sf->mcontext_offset, 32);
    assert_int_equal(sf->regs_ptr_offset, 28);
    assert_int_equal(word_at(&arch_ppc32, sf->tramp), 0x38000077);
    assert_null(sf->next);

    /* ppc64, both byte orders: the vDSO's addi r1,r1,128; li; sc with uc at SP + 128,
     * QEMU's li; sc at 128 (newer QEMU) and at 144 (QEMU 7.2, measured); gp_regs at
     * uc + 168 + 64, the sigcontext's regs pointer at uc + 168 + 56. */
    const struct arch_desc *a64[] = { &arch_ppc64, &arch_ppc64le };
    for (size_t k = 0; k < 2; k++) {
        const struct arch_desc *a = a64[k];
        static const uint32_t uc[] = { 128, 128, 144 };
        static const size_t len[] = { 12, 8, 8 };
        sf = a->sigframe;
        for (size_t i = 0; i < 3; i++, sf = sf->next) {
            assert_non_null(sf);
            assert_int_equal(sf->uc_offset, uc[i]);
            assert_int_equal(sf->mcontext_offset, 232);
            assert_int_equal(sf->regs_ptr_offset, 224);
            assert_int_equal(sf->greg_size, 8);
            assert_int_equal(sf->ngregs, 39);
            assert_int_equal(sf->tramp_len, len[i]);
            const uint8_t *t = sf->tramp + (len[i] == 12 ? 4 : 0);
            if (len[i] == 12)
                assert_int_equal(word_at(a, sf->tramp), 0x38210080);
            assert_int_equal(word_at(a, t), 0x380000ac);
            assert_int_equal(word_at(a, t + 4), 0x44000002);
        }
        assert_null(sf);
    }
    /* The instruction bytes follow the target's byte order. */
    assert_memory_equal(arch_ppc64.sigframe->next->tramp, "\x38\x00\x00\xac\x44\x00\x00\x02", 8);
    assert_memory_equal(arch_ppc64le.sigframe->next->tramp, "\xac\x00\x00\x38\x02\x00\x00\x44", 8);
}

/* ---- frame-func on hand-assembled code ----------------------------------- */

#define CODE  0x10000000u
#define ENTRY 0x20000u /* "_start": calls outer; no code, no symbol */

/* ppc64 (ELFv1 and ELFv2 alike), -O0 style:
 *   outer  +0x00  mflr r0; std r0,16(r1); stdu r1,-112(r1); bl mid; nop;
 *                 addi r1,r1,112; ld r0,16(r1); mtlr r0; blr
 *   mid    +0x40  mflr r0; std r0,16(r1); std r31,-8(r1); stdu r1,-128(r1); mr r31,r1;
 *                 bl leaf; nop; addi r1,r1,128; ld r0,16(r1); mtlr r0; ld r31,-8(r1); blr
 *   leaf   +0x80  li r3,1; addi r3,r3,1; blr
 *   tramp  +0xa0  li r0,172; sc              (QEMU's page)
 *   vdso   +0xb0  addi r1,r1,128; li r0,172; sc */
static const uint32_t code64[] = {
    0x7c0802a6, 0xf8010010, 0xf821ff91, 0x48000035, 0x60000000, 0x38210070, 0xe8010010, 0x7c0803a6,
    0x4e800020, 0,          0,          0,          0,          0,          0,          0,
    0x7c0802a6, 0xf8010010, 0xfbe1fff8, 0xf821ff81, 0x7c3f0b78, 0x4800002d, 0x60000000, 0x38210080,
    0xe8010010, 0x7c0803a6, 0xebe1fff8, 0x4e800020, 0,          0,          0,          0,
    0x38600001, 0x38630001, 0x4e800020, 0,          0,          0,          0,          0,
    0x380000ac, 0x44000002, 0,          0,          0x38210080, 0x380000ac, 0x44000002, 0,
};
#define OUTER (CODE + 0x00)
#define MID   (CODE + 0x40)
#define LEAF  (CODE + 0x80)
#define TRAMP (CODE + 0xa0)
#define VDSO  (CODE + 0xb0)

/* ppc32 SysV, -O0 style:
 *   mid32  +0x00  stwu r1,-32(r1); mflr r0; stw r0,36(r1); stw r31,28(r1); mr r31,r1;
 *                 bl leaf32; nop; lwz r11,0(r1); lwz r0,4(r11); mtlr r0; lwz r31,-4(r11);
 *                 mr r1,r11; blr
 *   leaf32 +0x40  stwu r1,-16(r1); stw r31,12(r1); mr r31,r1; trap; addi r11,r31,16;
 *                 lwz r31,-4(r11); mr r1,r11; blr      (a leaf with a frame, LR never saved) */
static const uint32_t code32[] = {
    0x9421ffe0, 0x7c0802a6, 0x90010024, 0x93e1001c, 0x7c3f0b78, 0x4800002d, 0x60000000, 0x81610000,
    0x800b0004, 0x7c0803a6, 0x83ebfffc, 0x7d615b78, 0x4e800020, 0,          0,          0,
    0x9421fff0, 0x93e1000c, 0x7c3f0b78, 0x7fe00008, 0x397f0010, 0x83ebfffc, 0x7d615b78, 0x4e800020,
};
#define CODE32 0x11000000u
#define MID32  (CODE32 + 0x00)
#define LEAF32 (CODE32 + 0x40)

static const struct sw_symbol fake_syms[] = {
    { "outer", OUTER, 0x24, "fake" },   { "mid", MID, 0x30, "fake" },
    { "leaf", LEAF, 0x0c, "fake" },     { "mid32", MID32, 0x34, "fake" },
    { "leaf32", LEAF32, 0x20, "fake" },
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

#define STACK 0x7fff0000u
#define S     (STACK + 0x800) /* SP of frame 0 */

/* A walker of arch A over its code; frame 0 at PC with r1, lr and r31.  DEFAULTS: the default
 * steppers, or frame-func alone. */
static void
fixture_open(struct walk_fixture *fx, const struct arch_desc *a, sw_addr pc, sw_addr r1, sw_addr lr,
             sw_addr r31, bool defaults)
{
    const uint32_t *words = a->word_size == 4 ? code32 : code64;
    size_t n = a->word_size == 4 ? sizeof code32 / 4 : sizeof code64 / 4;
    uint8_t code[sizeof code64];
    for (size_t i = 0; i < n; i++)
        arch_store(a, code + 4 * i, 4, words[i]);
    fx->p = fake_proc_new(a);
    fake_proc_add_mem(fx->p, a->word_size == 4 ? CODE32 : CODE, code, 4 * n);
    fake_proc_add_mem(fx->p, STACK, NULL, 0x1000);
    fake_proc_set_reg(fx->p, 1, DW_PC, pc);
    fake_proc_set_reg(fx->p, 1, DW_R1, r1);
    fake_proc_set_reg(fx->p, 1, DW_LR, lr);
    fake_proc_set_reg(fx->p, 1, DW_R31, r31);
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

/* The ppc64 stack of leaf <- mid <- outer <- ENTRY, frame 0 in leaf with SP = S:
 *   leaf allocates nothing:       mid's SP = S, its LR still live
 *   mid: stdu -128, r31 saved at its caller's SP - 8 before the stdu
 *   outer: stdu -112; ENTRY's frame ends the back chain with 0 */
#define S_OUTER (S + 128)
#define S_ENTRY (S_OUTER + 112)

static void
put_chain64(struct sw_proc *p)
{
    fake_proc_put_word(p, S, S_OUTER);                 /* mid's back chain */
    fake_proc_put_word(p, S_OUTER - 8, 0xabc);         /* outer's r31, saved by mid */
    fake_proc_put_word(p, S_OUTER + 16, OUTER + 0x10); /* mid's LR in outer's header */
    fake_proc_put_word(p, S_OUTER, S_ENTRY);           /* outer's back chain */
    fake_proc_put_word(p, S_ENTRY + 16, ENTRY);        /* outer's LR in ENTRY's header */
    fake_proc_put_word(p, S_ENTRY, 0);                 /* the end of the chain */
}

static void
check_leaf_chain(const struct arch_desc *a)
{
    struct walk_fixture fx;
    fixture_open(&fx, a, LEAF + 4, S, MID + 0x18, S, false);
    put_chain64(fx.p);

    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    assert_int_equal(fx.st.n, 4);
    /* mid: from the live LR, at leaf's SP */
    assert_int_equal(fx.st.frames[1].ra, MID + 0x18);
    assert_int_equal(fx.st.frames[1].sp, S);
    assert_int_equal(fx.st.frames[1].ra_loc.kind, SW_LOC_REGISTER);
    assert_int_equal(fx.st.frames[1].ra_loc.reg, DW_LR);
    assert_int_equal(fx.st.frames[1].trust, SW_TRUST_FP);
    assert_string_equal(fx.st.frames[1].stepper->ops->name, "frame-func");
    /* outer: the back chain, the LR save slot in outer's header, r31 from mid's save */
    assert_int_equal(fx.st.frames[2].ra, OUTER + 0x10);
    assert_int_equal(fx.st.frames[2].sp, S_OUTER);
    assert_int_equal(fx.st.frames[2].ra_loc.kind, SW_LOC_ADDRESS);
    assert_int_equal(fx.st.frames[2].ra_loc.addr, S_OUTER + 16);
    assert_int_equal(fx.st.frames[2].fp, 0xabc);
    assert_int_equal(fx.st.frames[2].fp_loc.addr, S_OUTER - 8);
    sw_word v = 0;
    assert_true(sw_frame_reg(&fx.st.frames[2], DW_PC, &v));
    assert_int_equal(v, OUTER + 0x10);
    /* ENTRY, then a zero back chain */
    assert_int_equal(fx.st.frames[3].ra, ENTRY);
    assert_int_equal(fx.st.frames[3].sp, S_ENTRY);
    assert_int_equal(fx.st.end, SW_END_BOTTOM);
    fixture_close(&fx);
}

static void
test_frame_func_walks_a_ppc64_leaf_with_the_live_lr_then_the_back_chain(void **state)
{
    (void)state;
    check_leaf_chain(&arch_ppc64);
}

static void
test_frame_func_reads_ppc64le_instructions_little_endian(void **state)
{
    (void)state;
    check_leaf_chain(&arch_ppc64le);
}

/* Frame 0 inside mid's prologue and epilogue: how much of the frame exists decides where
 * the caller's SP and return address are. */
static void
check_mid_top(sw_addr pc, sw_addr r1, sw_addr lr, sw_addr want_ra, sw_addr want_sp, bool lr_live)
{
    struct walk_fixture fx;
    fixture_open(&fx, &arch_ppc64, pc, r1, lr, 0x999, false);
    put_chain64(fx.p);
    fake_proc_put_word(fx.p, S_OUTER - 128, S_OUTER); /* mid's back chain when allocated */
    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    assert_true(fx.st.n >= 2);
    if (fx.st.frames[1].ra != want_ra)
        fail_msg("frame 0 at 0x%llx: caller 0x%llx", (unsigned long long)pc,
                 (unsigned long long)fx.st.frames[1].ra);
    assert_int_equal(fx.st.frames[1].sp, want_sp);
    assert_int_equal(fx.st.frames[1].ra_loc.kind, lr_live ? SW_LOC_REGISTER : SW_LOC_ADDRESS);
    fixture_close(&fx);
}

static void
test_frame_func_follows_ppc64_prologue_and_epilogue(void **state)
{
    (void)state;
    const sw_addr ra = OUTER + 0x10;
    check_mid_top(MID + 0x00, S_OUTER, ra, ra, S_OUTER, true);         /* at mflr */
    check_mid_top(MID + 0x04, S_OUTER, ra, ra, S_OUTER, true);         /* at std r0 */
    check_mid_top(MID + 0x08, S_OUTER, 0x1, ra, S_OUTER, false);       /* LR saved, no frame */
    check_mid_top(MID + 0x10, S_OUTER - 128, 0x1, ra, S_OUTER, false); /* frame set */
    check_mid_top(MID + 0x20, S_OUTER, 0x1, ra, S_OUTER, false);       /* popped, before mtlr */
    check_mid_top(MID + 0x28, S_OUTER, ra, ra, S_OUTER, true);         /* after mtlr */
    check_mid_top(MID + 0x2c, S_OUTER, ra, ra, S_OUTER, true);         /* at blr */
}

static void
check_alloc(const struct arch_desc *a, sw_addr pc, enum sw_frame_type type,
            enum sw_frame_state want)
{
    struct walk_fixture fx;
    struct sw_frame_alloc fa;
    fixture_open(&fx, a, pc, S, 0, 0, false);
    if (sw_frame_func_alloc(fx.w, pc, true, &fa) != 0)
        fail_msg("classifying 0x%llx failed", (unsigned long long)pc);
    assert_int_equal(fa.type, type);
    assert_int_equal(fa.state, want);
    fixture_close(&fx);
}

static void
test_frame_func_helper_classifies_ppc_prologues(void **state)
{
    (void)state;
    check_alloc(&arch_ppc64, MID + 0x00, SW_FRAME_STANDARD, SW_FRAME_UNSET);
    check_alloc(&arch_ppc64, MID + 0x08, SW_FRAME_STANDARD, SW_FRAME_HALFSET);
    check_alloc(&arch_ppc64, MID + 0x10, SW_FRAME_STANDARD, SW_FRAME_SET);
    check_alloc(&arch_ppc64, MID + 0x14, SW_FRAME_STANDARD, SW_FRAME_SET);
    /* popped, the LR reload ahead: half torn down */
    check_alloc(&arch_ppc64, MID + 0x20, SW_FRAME_STANDARD, SW_FRAME_HALFSET);
    check_alloc(&arch_ppc64, MID + 0x2c, SW_FRAME_STANDARD, SW_FRAME_UNSET);
    check_alloc(&arch_ppc64, LEAF + 4, SW_FRAME_NO_FRAME, SW_FRAME_UNSET); /* the LR as called */
    check_alloc(&arch_ppc32, LEAF32 + 0x0c, SW_FRAME_SAVEFP_ONLY, SW_FRAME_SET);
    check_alloc(&arch_ppc32, MID32 + 0x00, SW_FRAME_STANDARD, SW_FRAME_UNSET);
    check_alloc(&arch_ppc32, MID32 + 0x08, SW_FRAME_STANDARD, SW_FRAME_HALFSET);
    check_alloc(&arch_ppc32, MID32 + 0x14, SW_FRAME_STANDARD, SW_FRAME_SET);
    struct walk_fixture fx;
    struct sw_frame_alloc fa;
    fixture_open(&fx, &arch_ppc64, ENTRY, S, 0, 0, false);
    assert_int_equal(sw_frame_func_alloc(fx.w, ENTRY, true, &fa), SW_ENOSYM);
    assert_int_equal(fa.type, SW_FRAME_UNKNOWN_T);
    fixture_close(&fx);
}

/* ppc32: a -O0 leaf with a frame stops on its trap; the LR is live, the frame allocated
 * (r31 saved after the stwu, at SP - 16 + 12), and mid32's LR sits at its caller's SP + 4. */
static void
test_frame_func_walks_a_ppc32_leaf_with_a_frame(void **state)
{
    (void)state;
    const sw_addr s_mid = S + 16, s_entry = s_mid + 32;
    struct walk_fixture fx;
    fixture_open(&fx, &arch_ppc32, LEAF32 + 0x0c, S, MID32 + 0x18, S, false);
    fake_proc_put_word(fx.p, S, s_mid);
    fake_proc_put_word(fx.p, s_mid - 4, 0x111); /* mid32's r31 */
    fake_proc_put_word(fx.p, s_mid, s_entry);
    fake_proc_put_word(fx.p, s_entry + 4, ENTRY);
    fake_proc_put_word(fx.p, s_entry, 0);

    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    assert_int_equal(fx.st.n, 3);
    assert_int_equal(fx.st.frames[1].ra, MID32 + 0x18);
    assert_int_equal(fx.st.frames[1].sp, s_mid);
    assert_int_equal(fx.st.frames[1].fp, 0x111);
    assert_int_equal(fx.st.frames[1].ra_loc.kind, SW_LOC_REGISTER);
    assert_int_equal(fx.st.frames[2].ra, ENTRY);
    assert_int_equal(fx.st.frames[2].sp, s_entry);
    assert_int_equal(fx.st.frames[2].ra_loc.addr, s_entry + 4);
    assert_int_equal(fx.st.end, SW_END_BOTTOM);
    fixture_close(&fx);
}

static void
test_frame_func_back_chain_pointing_inward_is_not_mine(void **state)
{
    (void)state;
    struct walk_fixture fx;
    fixture_open(&fx, &arch_ppc64, MID + 0x18, S, 0, S, false);
    fake_proc_put_word(fx.p, S, S - 0x40); /* below the SP: not a back chain */
    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    assert_int_equal(fx.st.n, 1);
    assert_int_not_equal(fx.st.end, SW_END_BOTTOM);
    fixture_close(&fx);
}

static void
test_frame_func_dead_link_ends_the_walk(void **state)
{
    (void)state;
    struct walk_fixture fx;
    struct sw_frame top, f;
    enum sw_walk_end end;
    fixture_open(&fx, &arch_ppc64, MID + 0x18, S, 0, S, false);
    put_chain64(fx.p);
    assert_int_equal(sw_initial_frame(fx.w, SW_TID_DEFAULT, &top), 0);
    fake_proc_fail_reads(fx.p, SW_ETIMEDOUT);
    assert_int_equal(sw_walk_single(fx.w, &top, &f, &end), SW_ETIMEDOUT);
    assert_int_equal(end, SW_END_LINK);
    fixture_close(&fx);
}

/* A handler (leaf) returns to a trampoline that no ELF covers; the kernel's or QEMU's frame
 * above the handler's caller SP holds the interrupted registers: mid, about to pop its
 * frame, with its own LR value 0x777.  UC: where the ucontext is (128: the kernel and newer
 * QEMU; 144: QEMU 7.2), which only the sigcontext's regs pointer tells. */
static void
check_signal(const struct arch_desc *a, sw_addr tramp, uint32_t uc)
{
    const sw_addr sigsp = STACK + 0x100;
    const sw_addr regs = sigsp + uc + 232;
    struct walk_fixture fx;
    fixture_open(&fx, a, LEAF + 4, sigsp, tramp, 0x5, true);
    put_chain64(fx.p);
    fake_proc_put_word(fx.p, sigsp + uc + 224, regs); /* sigcontext.regs */
    fake_proc_put_word(fx.p, regs + 1 * 8, S);
    fake_proc_put_word(fx.p, regs + 31 * 8, S);
    fake_proc_put_word(fx.p, regs + 32 * 8, MID + 0x1c); /* nip: at addi r1,r1,128 */
    fake_proc_put_word(fx.p, regs + 36 * 8, 0x777);      /* link */

    assert_int_equal(sw_walk_stack(fx.w, SW_TID_DEFAULT, &fx.st), 0);
    assert_int_equal(fx.st.n, 5);
    assert_int_equal(fx.st.frames[1].ra, tramp);
    assert_int_equal(fx.st.frames[1].kind, SW_FRAME_SIGNAL);
    assert_int_equal(fx.st.frames[1].sp, sigsp);
    assert_int_equal(fx.st.frames[2].ra, MID + 0x1c);
    assert_int_equal(fx.st.frames[2].sp, S);
    assert_int_equal(fx.st.frames[2].ra_loc.addr, regs + 32 * 8);
    assert_string_equal(fx.st.frames[2].stepper->ops->name, "sighandler");
    sw_word lr = 0;
    assert_true(sw_frame_reg(&fx.st.frames[2], DW_LR, &lr));
    assert_int_equal(lr, 0x777);
    assert_int_equal(fx.st.frames[3].ra, OUTER + 0x10); /* mid's frame still set at its addi */
    assert_int_equal(fx.st.frames[3].sp, S_OUTER);
    assert_int_equal(fx.st.frames[4].ra, ENTRY);
    assert_int_equal(fx.st.end, SW_END_BOTTOM);
    fixture_close(&fx);
}

static void
test_signal_frame_layout_is_chosen_by_the_regs_pointer(void **state)
{
    (void)state;
    check_signal(&arch_ppc64, TRAMP, 144);   /* QEMU 7.2 */
    check_signal(&arch_ppc64, TRAMP, 128);   /* newer QEMU */
    check_signal(&arch_ppc64, VDSO, 128);    /* the kernel's vDSO */
    check_signal(&arch_ppc64le, TRAMP, 144); /* the same, little-endian */
    check_signal(&arch_ppc64le, VDSO, 128);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ppc_is_found_by_elf_tdesc_and_name),
        cmocka_unit_test(test_ppc_rows_carry_eh_frame_and_gdb_numbers),
        cmocka_unit_test(test_ppc_decodes_recorded_qemu_g_replies),
        cmocka_unit_test(test_ppc_sigframes_match_the_kernel_abi),
        cmocka_unit_test(test_frame_func_walks_a_ppc64_leaf_with_the_live_lr_then_the_back_chain),
        cmocka_unit_test(test_frame_func_reads_ppc64le_instructions_little_endian),
        cmocka_unit_test(test_frame_func_follows_ppc64_prologue_and_epilogue),
        cmocka_unit_test(test_frame_func_helper_classifies_ppc_prologues),
        cmocka_unit_test(test_frame_func_walks_a_ppc32_leaf_with_a_frame),
        cmocka_unit_test(test_frame_func_back_chain_pointing_inward_is_not_mine),
        cmocka_unit_test(test_frame_func_dead_link_ends_the_walk),
        cmocka_unit_test(test_signal_frame_layout_is_chosen_by_the_regs_pointer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
