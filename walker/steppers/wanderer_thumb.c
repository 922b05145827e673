/* walker/steppers/wanderer_thumb.c -- the wanderer's Thumb-2 (M-profile) encodings.
 *
 * The call before a return address, direct jumps and functions that return at once, decoded
 * from halfwords of the modules' local files (ARMv7-M ARM A5.1: a halfword whose bits 15:11
 * are 0b11101, 0b11110 or 0b11111 starts a 32-bit instruction).  Return addresses on the
 * stack carry the Thumb bit; the walker clears it (arch_desc.ra_code).  An EXC_RETURN value
 * is the return address of an exception, the hardware's call through the vector table: it
 * counts as an indirect call, and the walker makes its frame a signal frame.  No PLT stubs
 * (firmware has none) and no disassembler (disasm/thumb.c).
 */
#include "walker/steppers/wanderer_internal.h"
#include "walker/walker_internal.h"

static unsigned
th_half(const struct arch_desc *a, const uint8_t *p)
{
    return (unsigned)arch_load(a, p, 2);
}

/* BL (T1): 11110 S imm10 | 11 J1 1 J2 imm11; B.W (T4) the same with 10 J1 1 J2.  The offset
 * is S:I1:I2:imm10:imm11:0 with I1 = NOT(J1 XOR S), I2 = NOT(J2 XOR S), from the address
 * after the instruction. */
static int64_t
th_branch_off(unsigned hw1, unsigned hw2)
{
    unsigned s = (hw1 >> 10) & 1, j1 = (hw2 >> 13) & 1, j2 = (hw2 >> 11) & 1;
    unsigned i1 = !(j1 ^ s), i2 = !(j2 ^ s);
    uint32_t v = s << 24 | i1 << 23 | i2 << 22 | (hw1 & 0x3ffu) << 12 | (hw2 & 0x7ffu) << 1;
    return (int64_t)(v ^ 0x1000000u) - 0x1000000;
}

static enum wand_call
thumb_call_before(struct sw_walker *w, sw_addr ra, sw_addr *target)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    uint8_t b[4];

    if (a->exc_return != NULL && a->exc_return(ra))
        return WAND_CALL_INDIRECT;
    if ((ra & 1) == 0) /* a return address BL or BLX wrote has the Thumb bit */
        return WAND_NOT_CALL;
    ra &= ~(sw_addr)1;
    if (ra < 4 || !sw_wand_code(w, ra - 4, b, 4))
        return WAND_NOT_CALL;
    unsigned hw1 = th_half(a, b), hw2 = th_half(a, b + 2);
    if ((hw1 & 0xf800u) == 0xf000u && (hw2 & 0xd000u) == 0xd000u) {
        *target = ra + (sw_addr)th_branch_off(hw1, hw2);
        return WAND_CALL_DIRECT;
    }
    /* BLX Rm: 0100 0111 1 Rm 000 */
    if ((hw2 & 0xff87u) == 0x4780u)
        return WAND_CALL_INDIRECT;
    return WAND_NOT_CALL;
}

/* B (T2): 11100 imm11, from PC + 4; B.W (T4). */
static bool
thumb_jump_at(const struct arch_desc *a, const uint8_t *code, size_t n, sw_addr pc, sw_addr *dest)
{
    if (n < 2)
        return false;
    unsigned hw1 = th_half(a, code);
    if ((hw1 & 0xf800u) == 0xe000u) {
        int64_t off = (int64_t)((hw1 & 0x7ffu) ^ 0x400u) - 0x400;
        *dest = pc + 4 + (sw_addr)(off * 2);
        return true;
    }
    if (n < 4 || (hw1 & 0xf800u) != 0xf000u)
        return false;
    unsigned hw2 = th_half(a, code + 2);
    if ((hw2 & 0xd000u) != 0x9000u)
        return false;
    *dest = pc + 4 + (sw_addr)th_branch_off(hw1, hw2);
    return true;
}

/* bx lr (4770). */
static bool
thumb_returns_at_once(struct sw_walker *w, sw_addr target)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    uint8_t c[2];

    target &= ~(sw_addr)1;
    if (!sw_wand_code(w, target, c, 2))
        return false;
    return th_half(a, c) == 0x4770u;
}

const struct sw_wand_family sw_wand_thumb = {
    .call_before = thumb_call_before,
    .jump_at = thumb_jump_at,
    .returns_at_once = thumb_returns_at_once,
    .insn_align = 2,
    /* AAPCS: SP is 8-byte aligned at public interfaces, and an exception entry aligns it (the
     * CCR.STKALIGN default on ARMv7-M): the callee saved LR in its own frame, as AArch64. */
    .sp_align = 8,
};
