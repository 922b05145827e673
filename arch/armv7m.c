/* arch/armv7m.c -- the ARMv7-M description (Cortex-M3/M4/M7, Thumb-2): registers,
 * roles, the Thumb bit of return addresses and EXC_RETURN values.
 *
 * Numbers come from the Arm ABI documents (AADWARF32, AAPCS) and the ARMv7-M
 * Architecture Reference Manual (B1.5.8, "Exception return behavior"); the
 * stacked exception frame is decoded by walker/steppers/excframe.c.
 */
#include "arch/armv7m_regs.h"

static const struct arch_reg armv7m_regs[] = {
#define ARCH_REG(name, dw, gdb, size, role, c) { name, dw, gdb, size, role },
#include "arch/armv7m_regs.def"
#undef ARCH_REG
};

/* bkpt #0, be00 (ARMv7-M ARM A7.7.17, encoding T1: 1011 1110 imm8), the
 * instruction gdb inserts for Thumb code (arm_default_thumb_le_breakpoint in
 * gdb/arm-tdep.c) and that firmware compiles in: a little-endian halfword. */
static const uint8_t armv7m_bkpt[] = { 0x00, 0xbe };

/* EXC_RETURN (ARMv7-M ARM B1.5.8, tables B1-8 and B1-9): bits 31:5 all ones,
 * bit 4 clear for an extended (FP) frame, bit 3 set to return to Thread
 * mode, bit 2 set to return to the process stack, bits 1:0 = 01; gdb's
 * arm_m_addr_is_magic accepts those six values.  ARMv8-M (B3.21) frees bit 6
 * (S: the Secure stack), bit 5 (DCRS: callee registers not stacked) and bit
 * 0 (ES: the exception was Secure), all set in ARMv7-M's values.  Handler
 * mode with the process stack is reserved.  walker/steppers/excframe.c's
 * sw_excframe_kind decodes the same set. */
static bool
armv7m_exc_return(sw_addr ra)
{
    if (ra > 0xffffffffu || (ra & 0xffffff82u) != 0xffffff80u)
        return false;
    return (ra & 0xc) != 0x4;
}

/* Thumb return addresses carry bit 0 (BL writes LR = next instruction | 1);
 * the instruction is at the even address. */
static sw_addr
armv7m_ra_code(sw_addr ra)
{
    return armv7m_exc_return(ra) ? ra : ra & ~(sw_addr)1;
}

const struct arch_desc arch_armv7m = {
    .name = "armv7m",
    .tdesc_arch = "arm", /* QEMU's and OpenOCD's <architecture> for M-profile cores */
    .elf_machine = 40,   /* EM_ARM */
    .elf_class = 1,      /* ELFCLASS32 */
    .word_size = 4,
    .big_endian = false, /* BE8 Cortex-M parts are not a target here */
    .regs = armv7m_regs,
    .nregs = sizeof armv7m_regs / sizeof armv7m_regs[0],
    .dw_pc = ARMV7M_DW_PC,
    .dw_sp = ARMV7M_DW_SP,
    /* GCC's Thumb frame pointer is r7 (r11 is ARM state's): -O0 and
     * -fno-omit-frame-pointer code points r7 at its locals. */
    .dw_fp = ARMV7M_DW_R7,
    .dw_ra = ARMV7M_DW_LR, /* the CIE return-address column GCC emits on Arm */
    /* CFI may name the legacy s0-s31 (64-95) and iWMMXt (104-127) numbers;
     * d8-d15 saves (264-271, Cortex-M4F/M7 with -mfloat-abi=hard) are above
     * a frame's registers and are dropped. */
    .dw_max = 128,
    .cs_arch = 0,           /* CS_ARCH_ARM (capstone 4) */
    .cs_mode = 0x10 | 0x20, /* CS_MODE_THUMB | CS_MODE_MCLASS */
    .family = ARCH_FAMILY_THUMB,
    .call_ra_on_stack = 0,
    .pc_after_trap = 0, /* bkpt stops with the PC at the bkpt itself */
    .break_insn = armv7m_bkpt,
    .break_insn_len = sizeof armv7m_bkpt,
    .sigframe = NULL, /* no Linux here; exceptions are exc_return's */
    .ra_code = armv7m_ra_code,
    .exc_return = armv7m_exc_return,
};
