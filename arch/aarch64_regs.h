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

#endif /* RSPWALK_ARCH_AARCH64_REGS_H */
