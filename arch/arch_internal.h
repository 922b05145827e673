/* arch/arch_internal.h -- generated register constants for arch/ and its users. */
#ifndef RSPWALK_ARCH_INTERNAL_H
#define RSPWALK_ARCH_INTERNAL_H

#include "rspwalk/arch.h"

enum {
#define ARCH_REG(name, dw, gdb, size, role, c) X86_64_DW_##c = dw,
#include "arch/x86_64_regs.def"
#undef ARCH_REG
};

#endif /* RSPWALK_ARCH_INTERNAL_H */
