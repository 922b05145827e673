/* arch/i386_regs.h -- generated i386 register constants (I386_DW_EBP, ...).
 *
 * From arch/i386_regs.def, for arch/i386.c and its tests; not a public header.
 */
#ifndef RSPWALK_ARCH_I386_REGS_H
#define RSPWALK_ARCH_I386_REGS_H

#include "rspwalk/arch.h"

enum {
#define ARCH_REG(name, dw, gdb, size, role, c) I386_DW_##c = dw,
#include "arch/i386_regs.def"
#undef ARCH_REG
};

#endif /* RSPWALK_ARCH_I386_REGS_H */
