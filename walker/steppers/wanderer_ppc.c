/* walker/steppers/wanderer_ppc.c -- the wanderer's PowerPC encodings (32- and 64-bit).
 *
 * The call before a return address, direct jumps and functions that return
 * at once, decoded from instruction words of the modules' local files, in
 * the target's byte order.  No scanning (walker/steppers/wanderer.c) and no
 * disassembler (disasm/ppc.c).
 */
#include "walker/steppers/wanderer_internal.h"
#include "walker/walker_internal.h"

/* Power ISA I-form and XL-form: bl is opcode 18 with AA=0 LK=1, bctrl
 * 4e800421, blrl 4e800021. */
static enum wand_call
ppc_call_before(struct sw_walker *w, sw_addr ra, sw_addr *target)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    uint8_t b[4];

    if ((ra & 3) != 0 || !sw_wand_code(w, ra - 4, b, 4))
        return WAND_NOT_CALL;
    uint32_t insn = (uint32_t)arch_load(a, b, 4);
    if ((insn & 0xfc000003u) == 0x48000001u) {
        int64_t off = (int64_t)((insn & 0x03fffffcu) ^ 0x02000000u) - 0x02000000;
        *target = ra - 4 + (sw_addr)off;
        if (a->word_size == 4)
            *target &= 0xffffffffu;
        return WAND_CALL_DIRECT;
    }
    if (insn == 0x4e800421u || insn == 0x4e800021u)
        return WAND_CALL_INDIRECT;
    return WAND_NOT_CALL;
}

/* b: opcode 18 with AA=0 LK=0. */
static bool
ppc_jump_at(const struct arch_desc *a, const uint8_t *code, size_t n, sw_addr pc, sw_addr *dest)
{
    if (n < 4)
        return false;
    uint32_t insn = (uint32_t)arch_load(a, code, 4);
    if ((insn & 0xfc000003u) != 0x48000000u)
        return false;
    *dest = pc + (sw_addr)((int64_t)((insn & 0x03fffffcu) ^ 0x02000000u) - 0x02000000);
    return true;
}

/* blr, blrl. */
static bool
ppc_returns_at_once(struct sw_walker *w, sw_addr target)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    uint8_t c[4];

    if ((target & 3) != 0 || !sw_wand_code(w, target, c, 4))
        return false;
    uint32_t insn = (uint32_t)arch_load(a, c, 4);
    return insn == 0x4e800020u || insn == 0x4e800021u;
}

const struct sw_wand_family sw_wand_ppc = {
    .call_before = ppc_call_before,
    .jump_at = ppc_jump_at,
    .returns_at_once = ppc_returns_at_once,
    .plt_slot = NULL, /* call stubs load through the TOC or r30, in .text */
    .sigframe_sp = NULL,
    .insn_align = 4,
    .sp_align = 0, /* the back chain locates the caller's frame */
};
