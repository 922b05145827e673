/* tests/unit/arch/test_arch_i386.c -- the i386 table, a recorded QEMU g reply, its signal
 * frames, and frame-func/sighandler walks over a fake 32-bit process.
 *
 * No i386 code runs here (this host runs no 32-bit x86): the stacks and the
 * trampolines are bytes in a fake process, as a 32-bit target would hold them.
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

#define DW_ESP 4
#define DW_EBP 5
#define DW_EIP 8

static void
test_i386_is_found_by_elf_tdesc_and_name(void **state)
{
    (void)state;
    assert_ptr_equal(arch_by_elf(3, 1, 1), &arch_i386); /* EM_386, ELFCLASS32, LSB */
    assert_null(arch_by_elf(3, 2, 1));                  /* no 64-bit EM_386 */
    assert_ptr_equal(arch_by_tdesc("i386"), &arch_i386);
    assert_ptr_equal(arch_by_name("I386"), &arch_i386);
    bool listed = false;
    for (const struct arch_desc *const *a = arch_all(); *a; a++)
        listed |= *a == &arch_i386;
    assert_true(listed);
}

static void
test_i386_rows_carry_psabi_dwarf_and_gdb_numbers(void **state)
{
    (void)state;
    const struct arch_desc *a = &arch_i386;
    assert_int_equal(a->word_size, 4);
    assert_false(a->big_endian);
    assert_int_equal(a->cs_arch, 3); /* CS_ARCH_X86 */
    assert_int_equal(a->cs_mode, 4); /* CS_MODE_32 */
    assert_int_equal(a->call_ra_on_stack, 1);
    assert_int_equal(a->pc_after_trap, 1);
    /* psABI: eax0 ecx1 edx2 ebx3 esp4 ebp5 esi6 edi7 eip8 eflags9; gdb the same. */
    static const char *const names[] = { "eax", "ecx", "edx", "ebx", "esp",
                                         "ebp", "esi", "edi", "eip", "eflags" };
    for (int i = 0; i < 10; i++) {
        const struct arch_reg *r = arch_reg_by_name(a, names[i]);
        assert_non_null(r);
        assert_int_equal(r->dwarf, i);
        assert_int_equal(r->gdb, i);
        assert_int_equal(r->size, 4);
    }
    assert_int_equal(a->dw_pc, DW_EIP);
    assert_int_equal(a->dw_ra, DW_EIP); /* the return address column */
    assert_int_equal(a->dw_sp, DW_ESP);
    assert_int_equal(a->dw_fp, DW_EBP);
    assert_int_equal(arch_reg_by_dwarf(a, DW_EIP)->role, ARCH_ROLE_PC);
    assert_int_equal(arch_reg_by_dwarf(a, DW_ESP)->role, ARCH_ROLE_SP);
    assert_int_equal(arch_reg_by_dwarf(a, DW_EBP)->role, ARCH_ROLE_FP);
    /* Segments: gdb 10-15 (cs ss ds es fs gs), DWARF es40 cs41 ss42 ds43 fs44 gs45. */
    assert_int_equal(arch_reg_by_gdb(a, 10)->dwarf, 41);
    assert_int_equal(arch_reg_by_gdb(a, 13)->dwarf, 40);
    assert_string_equal(arch_reg_by_gdb(a, 15)->name, "gs");
    for (size_t i = 0; i < a->nregs; i++) {
        assert_true(a->regs[i].dwarf < a->dw_max);
        for (size_t k = i + 1; k < a->nregs; k++) {
            assert_int_not_equal(a->regs[i].dwarf, a->regs[k].dwarf);
            assert_int_not_equal(a->regs[i].gdb, a->regs[k].gdb);
        }
    }
}

/* Recorded from qemu-i386 7.2 (QEMU's i386-32bit.xml, 344 bytes):
 *   qemu-i386 -L / -g 23861 build/fixtures/i386/chain-s0-O0-static &
 *   RSPWALK_DEBUG=pkt build/release/rspwalk -c --sysroot / \
 *       --exe build/fixtures/i386/chain-s0-O0-static 127.0.0.1:23861 2>trace
 * the reply to `g` at the int3 in e() (frame 0 "0x080496ed in e+24"). */
static const char qemu_i386_g[] = "010000000007804024078040f4af0e084806804048068040f4af0e0801000000"
                                  "ed96040802020000230000002b0000002b0000002b0000000000000033000000"
                                  "0000000080030f08000000000100018000000000000000000002050000000000"
                                  "0000000000000000000000000000000000000000000000000000000000000000"
                                  "0000000000000000000000000000000000000000000000000000000000000000"
                                  "00000000000000000000000000000000000000007f0300000000000000000000"
                                  "0000000000000000000000000000000000000000000000000000000000000000"
                                  "000000002f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f000000000000000000000000"
                                  "000000ff00000000000000000000000000000000000000000000000000000000"
                                  "0000000000000000000000000000000000000000000000000000000000000000"
                                  "0000000000000000000000000000000000000000801f0000";

static void
test_i386_decodes_a_recorded_qemu_g_reply(void **state)
{
    (void)state;
    const struct arch_desc *a = &arch_i386;
    uint8_t g[344];
    assert_int_equal(strlen(qemu_i386_g), 2 * sizeof g);
    for (size_t i = 0; i < sizeof g; i++) {
        unsigned v;
        assert_int_equal(sscanf(qemu_i386_g + 2 * i, "%2x", &v), 1);
        g[i] = (uint8_t)v;
    }
    /* QEMU numbers eax..gs 0-15 as gdb does, packed in that order. */
    size_t off[16], at = 0;
    for (int n = 0; n < 16; n++) {
        const struct arch_reg *r = arch_reg_by_gdb(a, n);
        assert_non_null(r);
        off[n] = at;
        at += r->size;
    }
    assert_int_equal(arch_load(a, g + off[8], 4), 0x080496ed); /* eip: e+24 */
    assert_int_equal(arch_load(a, g + off[4], 4), 0x40800648); /* esp */
    assert_int_equal(arch_load(a, g + off[5], 4), 0x40800648); /* ebp: the frame is set */
    assert_int_equal(arch_load(a, g + off[9], 4), 0x202);      /* eflags: IF */
    assert_int_equal(arch_load(a, g + off[10], 4), 0x23);      /* cs: Linux __USER_CS */
    assert_int_equal(arch_load(a, g + off[11], 4), 0x2b);      /* ss: __USER_DS */
    assert_int_equal(arch_load(a, g + off[15], 4), 0x33);      /* gs: glibc's TLS */
    assert_int_equal(arch_load(a, g + 340, 4), 0x1f80);        /* mxcsr, the last register */
}

/* Where the interrupted eip, esp and ebp sit above SP at the trampoline. */
static void
slot_offsets(const struct arch_sigframe *sf, size_t *eip, size_t *esp, size_t *ebp)
{
    for (size_t i = 0; i < sf->ngregs; i++) {
        size_t at = sf->uc_offset + sf->mcontext_offset + i * sf->greg_size;
        if (sf->greg_dwarf[i] == DW_EIP)
            *eip = at;
        if (sf->greg_dwarf[i] == DW_ESP)
            *esp = at;
        if (sf->greg_dwarf[i] == DW_EBP)
            *ebp = at;
    }
}

static void
test_i386_sigframes_match_the_kernel_abi(void **state)
{
    (void)state;
    const struct arch_sigframe *rt = arch_i386.sigframe, *old;
    size_t eip = 0, esp = 0, ebp = 0;
    assert_non_null(rt);
    old = rt->next;
    assert_non_null(old);
    assert_null(old->next);

    /* rt: sig 4 + pinfo 4 + puc 4 + siginfo 128 = uc at 140; uc_flags 4 +
     * uc_link 4 + stack_t 12 = gregs at 20; gregs[REG_EIP = 14],
     * [REG_ESP = 7], [REG_EBP = 6]. */
    assert_int_equal(rt->uc_offset, 140);
    assert_int_equal(rt->mcontext_offset, 20);
    assert_int_equal(rt->greg_size, 4);
    slot_offsets(rt, &eip, &esp, &ebp);
    assert_int_equal(eip, 160 + 14 * 4);
    assert_int_equal(esp, 160 + 7 * 4);
    assert_int_equal(ebp, 160 + 6 * 4);
    assert_int_equal(rt->tramp_len, 7);
    assert_memory_equal(rt->tramp, "\xb8\xad\x00\x00\x00\xcd\x80", 7);

    /* non-rt: sig 4, then struct sigcontext in the same slot order. */
    assert_int_equal(old->uc_offset + old->mcontext_offset, 4);
    slot_offsets(old, &eip, &esp, &ebp);
    assert_int_equal(eip, 4 + 14 * 4);
    assert_int_equal(esp, 4 + 7 * 4);
    assert_int_equal(ebp, 4 + 6 * 4);
    assert_int_equal(old->tramp_len, 8);
    assert_memory_equal(old->tramp, "\x58\xb8\x77\x00\x00\x00\xcd\x80", 8);
}

/* ---- walks over a fake 32-bit process ----------------------------------- */

#define CODE      0x08048000u
#define FUNC      (CODE + 0x10) /* frame 0's PC: no symbol, no ELF */
#define RA1       (CODE + 0x20)
#define RA2       (CODE + 0x30)
#define RESUME    (CODE + 0x40) /* where the signal interrupted */
#define RA3       (CODE + 0x50)
#define RT_TRAMP  (CODE + 0x100) /* __restore_rt's bytes */
#define OLD_TRAMP (CODE + 0x200) /* __restore's bytes */
#define STACK     0x40800000u

struct i386_walk {
    struct sw_proc *p;
    struct sw_walker *w;
    struct sw_stack st;
};

static void
walk_open(struct i386_walk *iw, sw_addr pc, sw_addr sp, sw_addr fp)
{
    iw->p = fake_proc_new(&arch_i386);
    fake_proc_add_mem(iw->p, CODE, NULL, 0x1000);
    fake_proc_put(iw->p, RT_TRAMP, arch_i386.sigframe->tramp, arch_i386.sigframe->tramp_len);
    fake_proc_put(iw->p, OLD_TRAMP, arch_i386.sigframe->next->tramp,
                  arch_i386.sigframe->next->tramp_len);
    fake_proc_add_mem(iw->p, STACK, NULL, 0x1000);
    fake_proc_set_reg(iw->p, 1, DW_EIP, pc);
    fake_proc_set_reg(iw->p, 1, DW_ESP, sp);
    fake_proc_set_reg(iw->p, 1, DW_EBP, fp);
    struct sw_walker_config cfg = { 0 };
    struct sw_errbuf err = { 0 };
    if (sw_walker_new(iw->p, &cfg, &iw->w, &err) != 0)
        fail_msg("sw_walker_new: %s", err.msg);
    sw_stack_init(&iw->st);
}

static void
walk_close(struct i386_walk *iw)
{
    sw_stack_fini(&iw->st);
    sw_walker_free(iw->w);
}

static void
test_i386_frame_func_follows_the_ebp_chain_in_4_byte_words(void **state)
{
    (void)state;
    struct i386_walk iw;
    sw_addr f0 = STACK + 0x110, f1 = STACK + 0x130;
    walk_open(&iw, FUNC, STACK + 0x100, f0);
    fake_proc_put_word(iw.p, f0, f1);
    fake_proc_put_word(iw.p, f0 + 4, RA1);
    fake_proc_put_word(iw.p, f1, 0); /* _start cleared ebp */
    fake_proc_put_word(iw.p, f1 + 4, RA2);

    assert_int_equal(sw_walk_stack(iw.w, SW_TID_DEFAULT, &iw.st), 0);
    assert_int_equal(iw.st.n, 3);
    assert_int_equal(iw.st.frames[1].ra, RA1);
    assert_int_equal(iw.st.frames[1].sp, f0 + 8);
    assert_int_equal(iw.st.frames[1].fp, f1);
    assert_int_equal(iw.st.frames[1].ra_loc.addr, f0 + 4);
    assert_string_equal(iw.st.frames[1].stepper->ops->name, "frame-func");
    assert_int_equal(iw.st.frames[2].ra, RA2);
    assert_int_equal(iw.st.frames[2].sp, f1 + 8);
    assert_int_equal(iw.st.end, SW_END_BOTTOM);
    walk_close(&iw);
}

/* The handler (frame 0, frame set at H) returns to TRAMP; the interrupted
 * code ran at RESUME with esp SP0 and ebp F1, and F1's frame returns to RA3. */
static void
check_signal_walk(sw_addr tramp, size_t regs_at)
{
    struct i386_walk iw;
    sw_addr h = STACK + 0x300, tsp = h + 8; /* SP at the trampoline: &sig */
    sw_addr sp0 = STACK + 0x100, f1 = STACK + 0x120;
    walk_open(&iw, FUNC, h - 8, h);
    fake_proc_put_word(iw.p, h, 0x4242);
    fake_proc_put_word(iw.p, h + 4, tramp);
    fake_proc_put_word(iw.p, tsp + regs_at + 4 * 6, f1);      /* EBP */
    fake_proc_put_word(iw.p, tsp + regs_at + 4 * 7, sp0);     /* ESP */
    fake_proc_put_word(iw.p, tsp + regs_at + 4 * 8, 0xb0b0);  /* EBX */
    fake_proc_put_word(iw.p, tsp + regs_at + 4 * 14, RESUME); /* EIP */
    fake_proc_put_word(iw.p, f1, 0);
    fake_proc_put_word(iw.p, f1 + 4, RA3);

    assert_int_equal(sw_walk_stack(iw.w, SW_TID_DEFAULT, &iw.st), 0);
    assert_int_equal(iw.st.n, 4);
    assert_int_equal(iw.st.frames[1].kind, SW_FRAME_SIGNAL);
    assert_int_equal(iw.st.frames[1].ra, tramp);
    assert_int_equal(iw.st.frames[1].sp, tsp);
    assert_int_equal(iw.st.frames[2].ra, RESUME);
    assert_int_equal(iw.st.frames[2].sp, sp0);
    assert_int_equal(iw.st.frames[2].fp, f1);
    assert_true(iw.st.frames[2].non_call);
    assert_string_equal(iw.st.frames[2].stepper->ops->name, "sighandler");
    assert_int_equal(iw.st.frames[2].ra_loc.addr, tsp + regs_at + 4 * 14);
    sw_word ebx;
    assert_true(sw_frame_reg(&iw.st.frames[2], 3, &ebx));
    assert_int_equal(ebx, 0xb0b0);
    assert_int_equal(iw.st.frames[3].ra, RA3);
    assert_int_equal(iw.st.end, SW_END_BOTTOM);
    walk_close(&iw);
}

static void
test_i386_sighandler_reads_the_non_rt_sigcontext(void **state)
{
    (void)state;
    check_signal_walk(OLD_TRAMP, 4);
}

static void
test_i386_sighandler_reads_the_rt_ucontext(void **state)
{
    (void)state;
    check_signal_walk(RT_TRAMP, 160);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_i386_is_found_by_elf_tdesc_and_name),
        cmocka_unit_test(test_i386_rows_carry_psabi_dwarf_and_gdb_numbers),
        cmocka_unit_test(test_i386_decodes_a_recorded_qemu_g_reply),
        cmocka_unit_test(test_i386_sigframes_match_the_kernel_abi),
        cmocka_unit_test(test_i386_frame_func_follows_the_ebp_chain_in_4_byte_words),
        cmocka_unit_test(test_i386_sighandler_reads_the_non_rt_sigcontext),
        cmocka_unit_test(test_i386_sighandler_reads_the_rt_ucontext),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
