/* arch/armv7m_regs.h -- generated ARMv7-M register constants (ARMV7M_DW_R7, ...).
 *
 * From arch/armv7m_regs.def, for arch/armv7m.c and the Cortex-M exception-frame
 * stepper; not a public header.
 */
#ifndef RSPWALK_ARCH_ARMV7M_REGS_H
#define RSPWALK_ARCH_ARMV7M_REGS_H

#include "rspwalk/arch.h"

enum {
#define ARCH_REG(name, dw, gdb, size, role, c) ARMV7M_DW_##c = dw,
#include "arch/armv7m_regs.def"
#undef ARCH_REG
};

#endif /* RSPWALK_ARCH_ARMV7M_REGS_H */
