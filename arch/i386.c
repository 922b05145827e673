/* arch/i386.c -- the i386 (IA-32) description: registers, roles, Linux signal frames.
 *
 * Numbers come from the i386 System V psABI and the Linux kernel's i386 user
 * ABI (layouts checked against the Debian i686 cross headers in
 * /usr/i686-linux-gnu/include, read, never included), not from this host's
 * headers: the table is used for any i386 target on any host.
 */
#include "arch/i386_regs.h"

static const struct arch_reg i386_regs[] = {
#define ARCH_REG(name, dw, gdb, size, role, c) { name, dw, gdb, size, role },
#include "arch/i386_regs.def"
#undef ARCH_REG
};

/* struct sigcontext (asm/sigcontext.h, the __i386__ branch) and glibc's
 * mcontext_t gregs (sys/ucontext.h, enum REG_GS = 0 ... REG_SS = 18) share
 * one order of 4-byte slots:
 *   GS FS ES DS EDI ESI EBP ESP EBX EDX ECX EAX TRAPNO ERR EIP CS EFL UESP SS
 * The segment slots are a 16-bit selector and 16 bits of padding, which the
 * kernel and QEMU write as one 32-bit word; the walk needs none of them. */
static const int16_t i386_sig_gregs[] = {
    -1,          -1,          -1,          -1,          I386_DW_EDI,    I386_DW_ESI,
    I386_DW_EBP, I386_DW_ESP, I386_DW_EBX, I386_DW_EDX, I386_DW_ECX,    I386_DW_EAX,
    -1,          -1,          I386_DW_EIP, -1,          I386_DW_EFLAGS,
};

/* glibc's __restore (sysdeps/unix/sysv/linux/i386/libc_sigaction.c), used
 * for handlers without SA_SIGINFO, the vDSO's __kernel_sigreturn and QEMU
 * user mode's own (linux-user/i386/signal.c, install_sigtramp):
 *   58                pop  %eax             (drops sig)
 *   b8 77 00 00 00    mov  $__NR_sigreturn (119), %eax
 *   cd 80             int  $0x80
 * (gdb/i386-linux-tdep.c, linux_sigtramp_code, matches the same bytes). */
static const uint8_t i386_sigreturn[] = { 0x58, 0xb8, 0x77, 0x00, 0x00, 0x00, 0xcd, 0x80 };

/* glibc's __restore_rt (SA_SIGINFO handlers), the vDSO's
 * __kernel_rt_sigreturn and QEMU's install_rt_sigtramp:
 *   b8 ad 00 00 00    mov  $__NR_rt_sigreturn (173), %eax
 *   cd 80             int  $0x80
 * (gdb: linux_rt_sigtramp_code). */
static const uint8_t i386_rt_sigreturn[] = { 0xb8, 0xad, 0x00, 0x00, 0x00, 0xcd, 0x80 };

/* The non-rt frame (the kernel's struct sigframe, arch/x86/include/asm/
 * sigframe.h; QEMU's struct sigframe in linux-user/i386/signal.c):
 *   char *pretcode; int sig; struct sigcontext sc; ...
 * The handler's `ret` popped pretcode, so at the trampoline SP points at
 * sig and the sigcontext (there is no ucontext) starts 4 bytes above. */
static const struct arch_sigframe i386_sigframe = {
    .uc_offset = 4,
    .mcontext_offset = 0,
    .greg_size = 4,
    .greg_dwarf = i386_sig_gregs,
    .ngregs = sizeof i386_sig_gregs / sizeof i386_sig_gregs[0],
    .tramp = i386_sigreturn,
    .tramp_len = sizeof i386_sigreturn,
    .next = NULL,
};

/* The rt frame (the kernel's struct rt_sigframe for 32-bit, QEMU's the same):
 *   char *pretcode; int sig; siginfo_t *pinfo; void *puc; siginfo_t info;
 *   struct ucontext uc; ...
 * At the trampoline SP points at sig: pinfo @4, puc @8, info @12 (128 bytes,
 * bits/types/siginfo_t.h __SI_MAX_SIZE), so uc @140.  struct ucontext:
 * uc_flags 4 @0, uc_link 4 @4, uc_stack 12 @8 (stack_t: ss_sp, ss_flags,
 * ss_size), uc_mcontext @20, whose gregs come first. */
static const struct arch_sigframe i386_rt_sigframe = {
    .uc_offset = 140,
    .mcontext_offset = 20,
    .greg_size = 4,
    .greg_dwarf = i386_sig_gregs,
    .ngregs = sizeof i386_sig_gregs / sizeof i386_sig_gregs[0],
    .tramp = i386_rt_sigreturn,
    .tramp_len = sizeof i386_rt_sigreturn,
    .next = &i386_sigframe,
};

/* int3 (Intel SDM vol. 2, INT3: opcode CC). */
static const uint8_t i386_int3[] = { 0xcc };

const struct arch_desc arch_i386 = {
    .name = "i386",
    .tdesc_arch = "i386",
    .elf_machine = 3, /* EM_386 */
    .elf_class = 1,   /* ELFCLASS32 */
    .word_size = 4,
    .big_endian = false,
    .regs = i386_regs,
    .nregs = sizeof i386_regs / sizeof i386_regs[0],
    .dw_pc = I386_DW_EIP,
    .dw_sp = I386_DW_ESP,
    .dw_fp = I386_DW_EBP,
    .dw_ra = I386_DW_EIP,
    .dw_max = 50, /* tr 48, ldtr 49 are the psABI's last numbers */
    .cs_arch = 3, /* CS_ARCH_X86 (capstone 4) */
    .cs_mode = 4, /* CS_MODE_32 */
    .family = ARCH_FAMILY_X86,
    .call_ra_on_stack = 1,
    .pc_after_trap = 1,
    .break_insn = i386_int3,
    .break_insn_len = sizeof i386_int3,
    .sigframe = &i386_rt_sigframe,
};
