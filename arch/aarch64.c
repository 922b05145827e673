/* arch/aarch64.c -- the AArch64 description: registers, roles, Linux signal frame.
 *
 * Numbers come from the Arm ABI documents (AADWARF64, AAPCS64) and the Linux
 * kernel's arm64 user ABI, never from this host's headers: the table is
 * used for any AArch64 target on any host.  Frame records are walked by
 * walker/steppers/frame_func_aarch64.c.
 */
#include "arch/aarch64_regs.h"

static const struct arch_reg aarch64_regs[] = {
#define ARCH_REG(name, dw, gdb, size, role, c) { name, dw, gdb, size, role },
#include "arch/aarch64_regs.def"
#undef ARCH_REG
};

/* struct sigcontext (uapi asm/sigcontext.h): fault_address, then regs[31]
 * (x0-x30), sp, pc, pstate.  The rows below are regs[0] .. pc in that order;
 * pstate is not a register the walk needs. */
static const int16_t aarch64_sig_gregs[] = {
    AARCH64_DW_X0,  AARCH64_DW_X1,  AARCH64_DW_X2,  AARCH64_DW_X3,  AARCH64_DW_X4,  AARCH64_DW_X5,
    AARCH64_DW_X6,  AARCH64_DW_X7,  AARCH64_DW_X8,  AARCH64_DW_X9,  AARCH64_DW_X10, AARCH64_DW_X11,
    AARCH64_DW_X12, AARCH64_DW_X13, AARCH64_DW_X14, AARCH64_DW_X15, AARCH64_DW_X16, AARCH64_DW_X17,
    AARCH64_DW_X18, AARCH64_DW_X19, AARCH64_DW_X20, AARCH64_DW_X21, AARCH64_DW_X22, AARCH64_DW_X23,
    AARCH64_DW_X24, AARCH64_DW_X25, AARCH64_DW_X26, AARCH64_DW_X27, AARCH64_DW_X28, AARCH64_DW_X29,
    AARCH64_DW_X30, AARCH64_DW_SP,  AARCH64_DW_PC,
};

/* The rt_sigreturn trampoline: the vDSO's __kernel_rt_sigreturn
 * (arch/arm64/kernel/vdso/sigreturn.S), glibc's and QEMU user mode's own
 * (linux-user/aarch64/signal.c, setup_sigtramp) are the same two words:
 *   d2801168    movz x8, #0x8b      (__NR_rt_sigreturn = 139)
 *   d4000001    svc  #0
 * gdb matches the same pair (aarch64_linux_rt_sigframe in
 * gdb/aarch64-linux-tdep.c).  Little-endian instruction words. */
static const uint8_t aarch64_sigreturn[] = { 0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4 };

static const struct arch_sigframe aarch64_sigframe = {
    /* The handler returns to the trampoline through x30 with SP where the
     * kernel put it: at struct rt_sigframe { siginfo_t info (128 bytes);
     * struct ucontext uc; } (arch/arm64/kernel/signal.c; QEMU's
     * target_rt_sigframe has the same layout).  So the ucontext is at
     * SP + 128 (gdb: AARCH64_RT_SIGFRAME_UCONTEXT_OFFSET). */
    .uc_offset = 128,
    /* struct ucontext (uapi asm/ucontext.h): uc_flags 8 @0, uc_link 8 @8,
     * uc_stack 24 @16 (ss_sp, ss_flags + pad, ss_size), uc_sigmask 8 @40,
     * __unused[1024/8 - 8] = 120 @48, then uc_mcontext at 168 rounded up to
     * 16 (sigcontext's __reserved is aligned(16)) = 176 (gdb:
     * AARCH64_UCONTEXT_SIGCONTEXT_OFFSET); regs[0] follows fault_address at
     * 176 + 8 = 184.  glibc's ucontext_t agrees: its 128-byte sigset_t ends
     * at 168 too. */
    .mcontext_offset = 184,
    .greg_size = 8,
    .greg_dwarf = aarch64_sig_gregs,
    .ngregs = sizeof aarch64_sig_gregs / sizeof aarch64_sig_gregs[0],
    .tramp = aarch64_sigreturn,
    .tramp_len = sizeof aarch64_sigreturn,
};

/* brk #0, d4200000 (Arm ARM, BRK: 11010100 001 imm16 00000), the
 * instruction gdb inserts (aarch64_default_breakpoint in
 * gdb/aarch64-tdep.c): a little-endian instruction word. */
static const uint8_t aarch64_brk0[] = { 0x00, 0x00, 0x20, 0xd4 };

const struct arch_desc arch_aarch64 = {
    .name = "aarch64",
    .tdesc_arch = "aarch64",
    .elf_machine = 183, /* EM_AARCH64 */
    .elf_class = 2,     /* ELFCLASS64 */
    .word_size = 8,
    .big_endian = false, /* aarch64_be Linux is not a target here */
    .regs = aarch64_regs,
    .nregs = sizeof aarch64_regs / sizeof aarch64_regs[0],
    .dw_pc = AARCH64_DW_PC,
    .dw_sp = AARCH64_DW_SP,
    .dw_fp = AARCH64_DW_X29,
    .dw_ra = AARCH64_DW_X30, /* the CIE return-address column gcc and LLVM emit */
    /* CFI may name any AADWARF64 number up to z31 (127): d8-d15 saves are
     * 72-79. */
    .dw_max = 128,
    .cs_arch = 1, /* CS_ARCH_ARM64 (capstone 4) */
    .cs_mode = 0, /* CS_MODE_ARM (little-endian) */
    .family = ARCH_FAMILY_AARCH64,
    .call_ra_on_stack = 0,
    .pc_after_trap = 0, /* brk #0 stops with the PC at the brk itself */
    .break_insn = aarch64_brk0,
    .break_insn_len = sizeof aarch64_brk0,
    .sigframe = &aarch64_sigframe,
    .ra_unsign = aarch64_xpac,
};
