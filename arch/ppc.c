/* arch/ppc.c -- the PowerPC descriptions: ppc32 (SysV, big-endian), ppc64
 * (ELFv1, big-endian) and ppc64le (ELFv2): registers, roles, Linux signal frames.
 *
 * Numbers come from the PowerPC ABIs and the Linux kernel's powerpc user ABI
 * (layouts checked against the Debian cross headers asm/ucontext.h,
 * asm/sigcontext.h and asm/ptrace.h in /usr/powerpc{,64}-linux-gnu/include,
 * read, never included), not from this host's headers.  The back chain is
 * walked by walker/steppers/frame_func_ppc.c.
 */
#include "arch/ppc_regs.h"

static const struct arch_reg ppc32_regs[] = {
#define PPC_W                                  4
#define ARCH_REG(name, dw, gdb, size, role, c) { name, dw, gdb, size, role },
#include "arch/ppc_regs.def"
#undef ARCH_REG
#undef PPC_W
};

static const struct arch_reg ppc64_regs[] = {
#define PPC_W                                  8
#define ARCH_REG(name, dw, gdb, size, role, c) { name, dw, gdb, size, role },
#include "arch/ppc_regs.def"
#undef ARCH_REG
#undef PPC_W
};

/* The saved general registers are a struct pt_regs image (asm/ptrace.h;
 * mc_gregs on ppc32, gp_regs on ppc64), one word each:
 *   gpr[0..31], nip, msr, orig_gpr3, ctr, link, xer, ccr, ...
 * (PT_NIP 32, PT_MSR 33, PT_CTR 35, PT_LNK 36, PT_XER 37, PT_CCR 38).
 * nip is the interrupted PC, link the interrupted code's live LR (a leaf
 * interrupted before it saved the LR needs it). */
static const int16_t ppc_sig_gregs[] = {
    PPC_DW_R0,  PPC_DW_R1,  PPC_DW_R2,  PPC_DW_R3,  PPC_DW_R4,  PPC_DW_R5,  PPC_DW_R6,  PPC_DW_R7,
    PPC_DW_R8,  PPC_DW_R9,  PPC_DW_R10, PPC_DW_R11, PPC_DW_R12, PPC_DW_R13, PPC_DW_R14, PPC_DW_R15,
    PPC_DW_R16, PPC_DW_R17, PPC_DW_R18, PPC_DW_R19, PPC_DW_R20, PPC_DW_R21, PPC_DW_R22, PPC_DW_R23,
    PPC_DW_R24, PPC_DW_R25, PPC_DW_R26, PPC_DW_R27, PPC_DW_R28, PPC_DW_R29, PPC_DW_R30, PPC_DW_R31,
    PPC_DW_PC,  -1,         -1,         PPC_DW_CTR, PPC_DW_LR,  PPC_DW_XER, PPC_DW_CR,
};

/* The trampolines, as instruction words in the target's byte order:
 *   380000ac   li   r0,172      (__NR_rt_sigreturn)
 *   38000077   li   r0,119      (__NR_sigreturn, ppc32 only)
 *   44000002   sc
 *   38210080   addi r1,r1,128   (__SIGNAL_FRAMESIZE on ppc64)
 * The kernel's ppc32 vDSO (__kernel_sigtramp_rt32, __kernel_sigtramp32 in
 * arch/powerpc/kernel/vdso/sigtramp32.S), its on-stack fallback and QEMU
 * user mode's own page (linux-user/ppc/signal.c, encode_trampoline) are
 * `li; sc`.  The ppc64 vDSO's __kernel_sigtramp_rt64, where the handler
 * returns (after `bctrl` in __kernel_start_sigtramp_rt64), and the kernel's
 * on-stack fallback are `addi r1,r1,128; li r0,172; sc`; QEMU 7.2's ppc64
 * page is `li r0,172; sc` alone (380000ac 44000002, as QEMU's
 * linux-user signal code writes it, which gdb 13 does not know).  gdb matches the same words
 * (gdb/ppc-linux-tdep.c, ppc{32,64}_linux_sig{handler,action}_tramp_frame). */
#define PPC_BE(w)    (uint8_t)((w) >> 24), (uint8_t)((w) >> 16), (uint8_t)((w) >> 8), (uint8_t)(w)
#define PPC_LE(w)    (uint8_t)(w), (uint8_t)((w) >> 8), (uint8_t)((w) >> 16), (uint8_t)((w) >> 24)
#define PPC_LI_R0_RT 0x380000acU
#define PPC_LI_R0_NR 0x38000077U
#define PPC_SC       0x44000002U
#define PPC_ADDI_128 0x38210080U

static const uint8_t ppc_be_rt[] = { PPC_BE(PPC_LI_R0_RT), PPC_BE(PPC_SC) };
static const uint8_t ppc_be_nonrt[] = { PPC_BE(PPC_LI_R0_NR), PPC_BE(PPC_SC) };
static const uint8_t ppc_be_rt_addi[] = { PPC_BE(PPC_ADDI_128), PPC_BE(PPC_LI_R0_RT),
                                          PPC_BE(PPC_SC) };
/* trap, 7fe00008 (tw 31,0,0: trap unconditionally), the instruction gdb
 * inserts (big_breakpoint and little_breakpoint in gdb/rs6000-tdep.c). */
#define PPC_TRAP 0x7fe00008U
static const uint8_t ppc_be_trap[] = { PPC_BE(PPC_TRAP) };
static const uint8_t ppc_le_trap[] = { PPC_LE(PPC_TRAP) };
static const uint8_t ppc_le_rt[] = { PPC_LE(PPC_LI_R0_RT), PPC_LE(PPC_SC) };
static const uint8_t ppc_le_rt_addi[] = { PPC_LE(PPC_ADDI_128), PPC_LE(PPC_LI_R0_RT),
                                          PPC_LE(PPC_SC) };

/* ppc32, no SA_SIGINFO: the kernel's struct sigframe (signal_32.c) and
 * QEMU's target_sigframe are { struct sigcontext sctx; struct mcontext mctx;
 * ... } at SP + __SIGNAL_FRAMESIZE32 (64): the handler's caller frame is
 * newsp = frame - 64.  sigcontext: _unused[4] @0, signal @16, handler @20,
 * oldmask @24, regs @28 (gdb reads this pointer: 0x40 + 0x1c), 32 bytes, so
 * mctx, whose mc_gregs come first, is at 32 and regs points at it. */
static const struct arch_sigframe ppc32_sigframe = {
    .uc_offset = 64,
    .mcontext_offset = 32,
    .greg_size = 4,
    .greg_dwarf = ppc_sig_gregs,
    .ngregs = sizeof ppc_sig_gregs / sizeof ppc_sig_gregs[0],
    .tramp = ppc_be_nonrt,
    .tramp_len = sizeof ppc_be_nonrt,
    .next = NULL,
    .regs_ptr_offset = 28,
};

/* ppc32 rt frame: struct rt_sigframe { siginfo_t info (128 bytes); struct
 * ucontext uc; ... } at SP + 64 + 16 (signal_32.c: newsp = frame -
 * (__SIGNAL_FRAMESIZE + 16); QEMU's RT_SIGFRAME_ADJUST), so uc at SP + 208
 * (gdb: 0xd0).  struct ucontext (32-bit): uc_flags @0, uc_link @4, uc_stack
 * 12 @8, uc_pad[7] @20, uc_regs @48 (the pointer the vDSO's CFI follows:
 * PTREGS = 64+16+128+20+28), uc_sigmask 8 @52, uc_maskext[30] @60,
 * uc_pad2[3] @180, uc_mcontext @192, which uc_regs points at (kernel and
 * QEMU both). */
static const struct arch_sigframe ppc32_rt_sigframe = {
    .uc_offset = 208,
    .mcontext_offset = 192,
    .greg_size = 4,
    .greg_dwarf = ppc_sig_gregs,
    .ngregs = sizeof ppc_sig_gregs / sizeof ppc_sig_gregs[0],
    .tramp = ppc_be_rt,
    .tramp_len = sizeof ppc_be_rt,
    .next = &ppc32_sigframe,
    .regs_ptr_offset = 48,
};

/* ppc64 (both ABIs; every signal frame is an rt frame): struct rt_sigframe
 * { struct ucontext uc; ... } at SP + __SIGNAL_FRAMESIZE (128) at the first
 * trampoline instruction (signal_64.c: newsp = frame - 128; newer QEMU: the
 * same, RT_SIGFRAME_ADJUST 0), whether or not an `addi r1,r1,128` comes
 * next.  struct ucontext (64-bit): uc_flags @0, uc_link @8, uc_stack 24
 * @16, uc_sigmask 8 @40, __unused[15] @48, uc_mcontext (struct sigcontext)
 * @168; sigcontext: _unused[4] @0, signal @32, _pad0 @36, handler @40,
 * oldmask @48, regs @56 (the vDSO CFI's PTREGS = 128+168+56; gdb: 0x80 +
 * 0xe0), gp_regs @64, which regs points at: 168 + 64 = 232.
 * QEMU 7.2 puts the frame at newsp + 128 + 16 on ppc64 too (measured under
 * qemu-ppc64 7.2.22: the regs pointer at SP + 144 + 224), the 32-bit rule
 * its later RT_SIGFRAME_ADJUST keeps for ppc32 only; the regs pointer tells
 * the two apart behind the same `li r0,172; sc`. */
#define PPC64_SIGFRAME(name, uc, tramp_bytes, nextp)                                               \
    static const struct arch_sigframe name = {                                                     \
        .uc_offset = uc,                                                                           \
        .mcontext_offset = 232,                                                                    \
        .greg_size = 8,                                                                            \
        .greg_dwarf = ppc_sig_gregs,                                                               \
        .ngregs = sizeof ppc_sig_gregs / sizeof ppc_sig_gregs[0],                                  \
        .tramp = tramp_bytes,                                                                      \
        .tramp_len = sizeof tramp_bytes,                                                           \
        .next = nextp,                                                                             \
        .regs_ptr_offset = 224,                                                                    \
    }

PPC64_SIGFRAME(ppc64_qemu72_sigframe, 144, ppc_be_rt, NULL);
PPC64_SIGFRAME(ppc64_qemu_sigframe, 128, ppc_be_rt, &ppc64_qemu72_sigframe);
PPC64_SIGFRAME(ppc64_sigframe, 128, ppc_be_rt_addi, &ppc64_qemu_sigframe);
PPC64_SIGFRAME(ppc64le_qemu72_sigframe, 144, ppc_le_rt, NULL);
PPC64_SIGFRAME(ppc64le_qemu_sigframe, 128, ppc_le_rt, &ppc64le_qemu72_sigframe);
PPC64_SIGFRAME(ppc64le_sigframe, 128, ppc_le_rt_addi, &ppc64le_qemu_sigframe);

/* capstone 4: CS_ARCH_PPC 4; CS_MODE_32 4, CS_MODE_64 8, CS_MODE_BIG_ENDIAN
 * 1 << 31 (capstone.h), which only fits an int as its two's complement. */
#define PPC_CS_ARCH       4
#define PPC_CS_MODE_32    4
#define PPC_CS_MODE_64    8
#define PPC_CS_BIG_ENDIAN (-0x7fffffff - 1)

/* Every .eh_frame number GCC writes on PowerPC is below 114 (SPE's 111-113
 * are its last). */
#define PPC_DW_MAX 114

const struct arch_desc arch_ppc32 = {
    .name = "ppc",
    .tdesc_arch = "powerpc:common",
    .elf_machine = 20, /* EM_PPC */
    .elf_class = 1,    /* ELFCLASS32 */
    .word_size = 4,
    .big_endian = true,
    .regs = ppc32_regs,
    .nregs = sizeof ppc32_regs / sizeof ppc32_regs[0],
    .dw_pc = PPC_DW_PC,
    .dw_sp = PPC_DW_R1,
    .dw_fp = PPC_DW_R31, /* only a convention: -O0 code and alloca frames */
    .dw_ra = PPC_DW_LR,
    .dw_max = PPC_DW_MAX,
    .cs_arch = PPC_CS_ARCH,
    .cs_mode = PPC_CS_MODE_32 | PPC_CS_BIG_ENDIAN,
    .family = ARCH_FAMILY_PPC,
    .call_ra_on_stack = 0,
    .pc_after_trap = 0, /* `trap` stops with the PC at the trap itself */
    .break_insn = ppc_be_trap,
    .break_insn_len = sizeof ppc_be_trap,
    .sigframe = &ppc32_rt_sigframe,
    .backchain_ra_offset = 4, /* the LR save word of the caller's frame header */
};

const struct arch_desc arch_ppc64 = {
    .name = "ppc64",
    .tdesc_arch = "powerpc:common64",
    .elf_machine = 21, /* EM_PPC64 */
    .elf_class = 2,    /* ELFCLASS64 */
    .word_size = 8,
    .big_endian = true,
    .regs = ppc64_regs,
    .nregs = sizeof ppc64_regs / sizeof ppc64_regs[0],
    .dw_pc = PPC_DW_PC,
    .dw_sp = PPC_DW_R1,
    .dw_fp = PPC_DW_R31,
    .dw_ra = PPC_DW_LR,
    .dw_max = PPC_DW_MAX,
    .cs_arch = PPC_CS_ARCH,
    .cs_mode = PPC_CS_MODE_64 | PPC_CS_BIG_ENDIAN,
    .family = ARCH_FAMILY_PPC,
    .call_ra_on_stack = 0,
    .pc_after_trap = 0,
    .break_insn = ppc_be_trap,
    .break_insn_len = sizeof ppc_be_trap,
    .sigframe = &ppc64_sigframe,
    .backchain_ra_offset = 16, /* the LR save doubleword of the caller's frame header */
    .local_entry_max = 8,
};

/* target.xml says "powerpc:common64" for both byte orders: the stub's
 * description alone finds arch_ppc64; the ELF header (EI_DATA) tells them
 * apart (targets/rsp_proc.c). */
const struct arch_desc arch_ppc64le = {
    .name = "ppc64le",
    .tdesc_arch = "powerpc:common64",
    .elf_machine = 21, /* EM_PPC64 */
    .elf_class = 2,    /* ELFCLASS64 */
    .word_size = 8,
    .big_endian = false,
    .regs = ppc64_regs,
    .nregs = sizeof ppc64_regs / sizeof ppc64_regs[0],
    .dw_pc = PPC_DW_PC,
    .dw_sp = PPC_DW_R1,
    .dw_fp = PPC_DW_R31,
    .dw_ra = PPC_DW_LR,
    .dw_max = PPC_DW_MAX,
    .cs_arch = PPC_CS_ARCH,
    .cs_mode = PPC_CS_MODE_64, /* little-endian is capstone's default */
    .family = ARCH_FAMILY_PPC,
    .call_ra_on_stack = 0,
    .pc_after_trap = 0,
    .break_insn = ppc_le_trap,
    .break_insn_len = sizeof ppc_le_trap,
    .sigframe = &ppc64le_sigframe,
    .backchain_ra_offset = 16, /* the LR save doubleword of the caller's frame header */
    .local_entry_max = 8,
};
