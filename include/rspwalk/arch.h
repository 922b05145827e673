/* rspwalk/arch.h -- architecture descriptions: leaf tables, no I/O.
 *
 * One static const struct arch_desc per target architecture, built and tested
 * on every host.  Registers are named by their DWARF number; the few roles
 * DWARF lacks (the PC where it is not a DWARF column) get a pseudo number
 * above every real one.  Target byte order is decoded only through arch_load.
 *
 * Threads: the tables are constant and every function is pure: any thread,
 * any time.
 */
#ifndef RSPWALK_ARCH_H
#define RSPWALK_ARCH_H

#include "rspwalk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

enum arch_role {
    ARCH_ROLE_NONE = 0,
    ARCH_ROLE_PC,
    ARCH_ROLE_SP,
    ARCH_ROLE_FP,
    ARCH_ROLE_RA,
};

/* The instruction-set family of an architecture: which encodings the readers
 * of code decode (the wanderer's tests for a call before a return address, a
 * jump, a return, a PLT stub: walker/steppers/wanderer_*.c). */
enum arch_family {
    ARCH_FAMILY_NONE = 0, /* no reader of code knows its encodings */
    ARCH_FAMILY_X86,      /* i386 and x86-64: variable-length instructions */
    ARCH_FAMILY_AARCH64,  /* A64: 4-byte instruction words */
    ARCH_FAMILY_PPC,      /* Power ISA, 32- and 64-bit, either byte order: 4-byte words */
    ARCH_FAMILY_THUMB,    /* Thumb-2 of M-profile cores: 2- and 4-byte instructions */
};

/* One register row of a .def table. */
struct arch_reg {
    const char *name; /* as gdb's target descriptions name it: "rip", "x29", "r1" */
    int16_t dwarf;    /* DWARF number; -1 if the register has none */
    int16_t gdb;      /* gdb's default register number (no target.xml); -1 if none */
    uint8_t size;     /* bytes in the g packet */
    enum arch_role role;
};

/* The Linux signal frame as the return trampoline sees it.  At the first
 * instruction of the trampoline the stack pointer SP is known; the saved
 * general registers of the interrupted code are at
 * SP + uc_offset + mcontext_offset + i * greg_size for each row i. */
struct arch_sigframe {
    uint32_t uc_offset;        /* from SP at the trampoline to the ucontext */
    uint32_t mcontext_offset;  /* from the ucontext to the saved general registers */
    uint8_t greg_size;         /* bytes per saved register */
    const int16_t *greg_dwarf; /* DWARF number of each saved slot, -1 to skip */
    size_t ngregs;
    const uint8_t *tramp; /* the rt_sigreturn trampoline's instruction bytes */
    size_t tramp_len;
    /* Another frame layout with its own trampoline (i386's non-rt
     * sigreturn frame for handlers without SA_SIGINFO); NULL if none. */
    const struct arch_sigframe *next;
    /* OPTIONAL (0: none): from the ucontext to a pointer the kernel sets to
     * the saved general registers (PowerPC's uc_regs, sigcontext.regs).
     * Where given, the layout applies only if that word holds
     * SP + uc_offset + mcontext_offset: it tells apart layouts behind the
     * same trampoline (QEMU 7.2's ppc64 frame sits 16 bytes above the
     * kernel's). */
    uint32_t regs_ptr_offset;
};

struct arch_desc {
    const char *name;       /* "x86_64": the JSON "arch" value */
    const char *tdesc_arch; /* "i386:x86-64": <architecture> in target.xml */
    uint16_t elf_machine;   /* EM_X86_64 */
    uint8_t elf_class;      /* ELFCLASS64 */
    uint8_t word_size;      /* bytes in an address */
    bool big_endian;
    const struct arch_reg *regs; /* nregs rows */
    size_t nregs;
    int16_t dw_pc, dw_sp, dw_fp, dw_ra; /* DWARF numbers of the roles (see above) */
    uint16_t dw_max;                    /* every DWARF number of this arch is below this */
    int cs_arch, cs_mode;               /* capstone, used only by disasm/disasm.c */
    enum arch_family family;            /* the instruction set's family */
    bool call_ra_on_stack;              /* a call pushes the return address (x86) */
    uint8_t pc_after_trap;              /* bytes a software breakpoint advances the PC (x86: 1) */
    /* The software breakpoint instruction as it sits in target memory (in
     * the target's byte order), the one gdb inserts and that programs
     * compile in (x86 int3, AArch64 brk #0, PowerPC trap): a thread
     * stopped at one it did not hit through a debugger's breakpoint is
     * stepped over it before it resumes (targets/rsp_debug.c, as gdb's
     * gdbarch_skip_permanent_breakpoint does). */
    const uint8_t *break_insn;
    uint8_t break_insn_len;
    const struct arch_sigframe *sigframe; /* Linux rt signal frame; NULL if unknown */
    /* OPTIONAL (0: frames have no back chain).  Where a function saves its
     * return address, from its caller's SP: the word at a frame's SP is the
     * caller's SP (the back chain) and the callee's saved return address
     * sits this far above it (PowerPC's LR save word: 4 on 32-bit, 16 on
     * 64-bit).  Also picks the frame rules of the frame-func stepper. */
    uint8_t backchain_ra_offset;
    /* OPTIONAL (0: a function is entered only at its symbol).  How far past
     * its symbol a function may have a second, local entry that calls and
     * jumps use (ppc64: 8, after the two instructions that set up the TOC). */
    uint8_t local_entry_max;
    /* OPTIONAL (NULL: return addresses are never signed).  The address a
     * signed return address stands for (AArch64 paciasp/pacibsp), for the
     * frames whose CFI or prologue says it was signed. */
    sw_addr (*ra_unsign)(sw_addr ra);
    /* OPTIONAL (NULL: a return address is the code address itself).  The
     * code address a return address stands for, applied to every caller
     * frame's RA (ARMv7-M: a Thumb return address has bit 0 set, the
     * instruction is at RA & ~1; gdb's arm_addr_bits_remove).  Must leave
     * exception-return values (below) as they are. */
    sw_addr (*ra_code)(sw_addr ra);
    /* OPTIONAL (NULL: no exception frames).  Whether RA is an M-profile
     * EXC_RETURN value (0xFFFFFFE1 .. 0xFFFFFFFD): the frame it ends was an
     * exception handler entered by hardware, which stacked the interrupted
     * context (walker/steppers/excframe.c decodes it).  The walker marks
     * such a frame SW_FRAME_SIGNAL, as gdb's "<signal handler called>". */
    bool (*exc_return)(sw_addr ra);
};

extern SW_API const struct arch_desc arch_x86_64;
extern SW_API const struct arch_desc arch_i386;
extern SW_API const struct arch_desc arch_aarch64;
extern SW_API const struct arch_desc arch_ppc32;
extern SW_API const struct arch_desc arch_ppc64;
extern SW_API const struct arch_desc arch_ppc64le;
extern SW_API const struct arch_desc arch_armv7m;

/* The description for an ELF header's e_machine, EI_CLASS and EI_DATA.
 * Returns NULL if no supported architecture matches. */
SW_API const struct arch_desc *arch_by_elf(uint16_t e_machine, uint8_t ei_class, uint8_t ei_data);

/* The description for target.xml's <architecture> text ("i386:x86-64").
 * Returns NULL if none matches. */
SW_API const struct arch_desc *arch_by_tdesc(const char *architecture);

/* The description named NAME ("x86_64"); NULL if none. */
SW_API const struct arch_desc *arch_by_name(const char *name);

/* Every description, NULL-terminated; static. */
SW_API const struct arch_desc *const *arch_all(void);

/* The row named NAME (case-insensitive, as target.xml requires); NULL if none. */
SW_API const struct arch_reg *arch_reg_by_name(const struct arch_desc *a, const char *name);

/* The row whose DWARF number is DW; NULL if none. */
SW_API const struct arch_reg *arch_reg_by_dwarf(const struct arch_desc *a, int dw);

/* The row with gdb's default number GDB; NULL if none. */
SW_API const struct arch_reg *arch_reg_by_gdb(const struct arch_desc *a, int gdb);

/* Decode SIZE (1, 2, 4 or 8) bytes at P in A's byte order. */
SW_API uint64_t arch_load(const struct arch_desc *a, const uint8_t *p, size_t size);

/* Encode V as SIZE bytes at P in A's byte order. */
SW_API void arch_store(const struct arch_desc *a, uint8_t *p, size_t size, uint64_t v);

/* The name of DWARF register DW on A ("rbp"), or NULL. */
SW_API const char *arch_dwarf_name(const struct arch_desc *a, int dw);

#ifdef __cplusplus
}
#endif
#endif /* RSPWALK_ARCH_H */
