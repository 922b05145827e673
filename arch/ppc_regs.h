/* arch/ppc_regs.h -- generated PowerPC register constants (PPC_DW_R1, PPC_DW_LR, ...).
 *
 * From arch/ppc_regs.def, for arch/ppc.c and the PowerPC steppers; not a
 * public header.  The numbers are the same on ppc32, ppc64 and ppc64le.
 */
#ifndef RSPWALK_ARCH_PPC_REGS_H
#define RSPWALK_ARCH_PPC_REGS_H

#include "rspwalk/arch.h"

enum {
#define ARCH_REG(name, dw, gdb, size, role, c) PPC_DW_##c = dw,
#include "arch/ppc_regs.def"
#undef ARCH_REG
};

#endif /* RSPWALK_ARCH_PPC_REGS_H */
