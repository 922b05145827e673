/* arch/x86_64.c -- the x86-64 description: registers, roles, Linux signal frame.
 *
 * Numbers come from the psABI and the Linux kernel's user ABI, never from
 * this host's headers (the table is used for any x86-64 target).
 */
#include "arch/arch_internal.h"

static const struct arch_reg x86_64_regs[] = {
#define ARCH_REG(name, dw, gdb, size, role, c) { name, dw, gdb, size, role },
#include "arch/x86_64_regs.def"
#undef ARCH_REG
};

/* struct ucontext (Linux x86-64 uapi asm/ucontext.h): uc_flags (8), uc_link
 * (8), uc_stack (24: ss_sp, ss_flags + pad, ss_size), then uc_mcontext,
 * whose first 23 words are gregs in the order of REG_R8 ... REG_CR2
 * (sys/ucontext.h's enum; the same in the kernel's struct sigcontext). */
static const int16_t x86_64_sig_gregs[] = {
    X86_64_DW_R8,  X86_64_DW_R9,  X86_64_DW_R10, X86_64_DW_R11, X86_64_DW_R12, X86_64_DW_R13,
    X86_64_DW_R14, X86_64_DW_R15, X86_64_DW_RDI, X86_64_DW_RSI, X86_64_DW_RBP, X86_64_DW_RBX,
    X86_64_DW_RDX, X86_64_DW_RAX, X86_64_DW_RCX, X86_64_DW_RSP, X86_64_DW_RIP,
};

/* glibc's __restore_rt and the kernel ABI's canonical trampoline:
 *   48 c7 c0 0f 00 00 00    mov $__NR_rt_sigreturn (15), %rax
 *   0f 05                   syscall
 * (gdb/amd64-linux-tdep.c matches the same bytes). */
static const uint8_t x86_64_sigreturn[] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };

static const struct arch_sigframe x86_64_sigframe = {
    /* The handler's `ret` popped pretcode, the first word of struct
     * rt_sigframe, so at the trampoline SP points at the ucontext. */
    .uc_offset = 0,
    .mcontext_offset = 40,
    .greg_size = 8,
    .greg_dwarf = x86_64_sig_gregs,
    .ngregs = sizeof x86_64_sig_gregs / sizeof x86_64_sig_gregs[0],
    .tramp = x86_64_sigreturn,
    .tramp_len = sizeof x86_64_sigreturn,
};

/* int3 (Intel SDM vol. 2, INT3: opcode CC). */
static const uint8_t x86_64_int3[] = { 0xcc };

const struct arch_desc arch_x86_64 = {
    .name = "x86_64",
    .tdesc_arch = "i386:x86-64",
    .elf_machine = 62, /* EM_X86_64 */
    .elf_class = 2,    /* ELFCLASS64 */
    .word_size = 8,
    .big_endian = false,
    .regs = x86_64_regs,
    .nregs = sizeof x86_64_regs / sizeof x86_64_regs[0],
    .dw_pc = X86_64_DW_RIP,
    .dw_sp = X86_64_DW_RSP,
    .dw_fp = X86_64_DW_RBP,
    .dw_ra = X86_64_DW_RIP,
    .dw_max = 67,
    .cs_arch = 3, /* CS_ARCH_X86 (capstone 4) */
    .cs_mode = 8, /* CS_MODE_64 */
    .family = ARCH_FAMILY_X86,
    .call_ra_on_stack = 1,
    .pc_after_trap = 1,
    .break_insn = x86_64_int3,
    .break_insn_len = sizeof x86_64_int3,
    .sigframe = &x86_64_sigframe,
};
