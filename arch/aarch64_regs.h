/* arch/aarch64_regs.h -- generated AArch64 register constants (AARCH64_DW_X29, ...).
 *
 * From arch/aarch64_regs.def, for arch/aarch64.c and the AArch64 steppers;
 * not a public header.
 */
#ifndef RSPWALK_ARCH_AARCH64_REGS_H
#define RSPWALK_ARCH_AARCH64_REGS_H

#include "rspwalk/arch.h"

enum {
#define ARCH_REG(name, dw, gdb, size, role, c) AARCH64_DW_##c = dw,
#include "arch/aarch64_regs.def"
#undef ARCH_REG
};

/* The address a return address signed by paciasp/pacibsp stands for: what
 * XPACI leaves on Linux, where user space has 48-bit virtual addresses and
 * instruction addresses no top-byte-ignore, so the authentication code fills
 * bits 48-63 and bit 55 tells the halves apart (0: user space).  gdb strips
 * with the mask the target's pauth registers give; stubs without them (QEMU
 * 7.2) leave no better rule than this. */
static inline sw_addr
aarch64_xpac(sw_addr ra)
{
    const sw_addr va = ((sw_addr)1 << 48) - 1;
    return (ra & ((sw_addr)1 << 55)) ? (ra | ~va) : (ra & va);
}

#endif /* RSPWALK_ARCH_AARCH64_REGS_H */
