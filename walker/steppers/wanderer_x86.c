/* walker/steppers/wanderer_x86.c -- the wanderer's x86 encodings (i386 and x86-64).
 *
 * The call before a return address, direct jumps, functions that return at
 * once and PLT stubs, decoded from bytes of the modules' local files.  No
 * scanning (walker/steppers/wanderer.c) and no disassembler (disasm/x86.c).
 */
#include <string.h>

#include "walker/steppers/wanderer_internal.h"
#include "walker/walker_internal.h"

#include "libstate/lib.h"

/* The length of an `ff /2` (call r/m) instruction whose ModRM byte is M,
 * without prefixes; 0 if M is not /2.  Intel SDM vol. 2, table 2-2 (32-bit
 * addressing; on x86-64 mod 00 r/m 101 is RIP-relative, also disp32). */
static size_t
x86_ff2_len(uint8_t m, uint8_t sib)
{
    unsigned mod = m >> 6, reg = (m >> 3) & 7, rm = m & 7;
    size_t n = 2;

    if (reg != 2)
        return 0;
    if (mod == 3)
        return 2;
    if (rm == 4) {
        n++;
        if (mod == 0 && (sib & 7) == 5)
            return n + 4;
    }
    if (mod == 0)
        return rm == 5 ? n + 4 : n;
    return n + (mod == 1 ? 1 : 4);
}

/* `e8 rel32` (direct), or `ff /2` with 2 to 7 bytes (indirect). */
static enum wand_call
x86_call_before(struct sw_walker *w, sw_addr ra, sw_addr *target)
{
    static const size_t lens[] = { 2, 3, 4, 6, 7 };
    uint8_t c[7];

    /* Near the start of a module's code fewer bytes precede RA: the ones
     * missing read as zero, which starts no call. */
    size_t have = sizeof c;
    memset(c, 0, sizeof c);
    while (have >= 2 && !sw_wand_code(w, ra - have, c + sizeof c - have, have))
        have--;
    if (have < 2)
        return WAND_NOT_CALL;
    if (c[2] == 0xe8) {
        int32_t rel = (int32_t)((uint32_t)c[3] | (uint32_t)c[4] << 8 | (uint32_t)c[5] << 16 |
                                (uint32_t)c[6] << 24);
        *target = ra + (sw_addr)(int64_t)rel;
        if (sw_walker_proc(w)->arch->word_size == 4)
            *target &= 0xffffffffu;
        return WAND_CALL_DIRECT;
    }
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        size_t at = sizeof c - lens[i];
        uint8_t sib = at + 2 < sizeof c ? c[at + 2] : 0;
        if (c[at] == 0xff && x86_ff2_len(c[at + 1], sib) == lens[i])
            return WAND_CALL_INDIRECT;
    }
    return WAND_NOT_CALL;
}

/* `e9 rel32` or `eb rel8`; the destination wraps at the address size. */
static bool
x86_jump_at(const struct arch_desc *a, const uint8_t *code, size_t n, sw_addr pc, sw_addr *dest)
{
    const sw_addr mask = a->word_size == 4 ? 0xffffffffu : ~(sw_addr)0;

    if (code[0] == 0xe9 && n >= 5) {
        int32_t rel = (int32_t)((uint32_t)code[1] | (uint32_t)code[2] << 8 |
                                (uint32_t)code[3] << 16 | (uint32_t)code[4] << 24);
        *dest = (pc + 5 + (sw_addr)(int64_t)rel) & mask;
        return true;
    }
    if (code[0] == 0xeb && n >= 2) {
        *dest = (pc + 2 + (sw_addr)(int64_t)(int8_t)code[1]) & mask;
        return true;
    }
    return false;
}

/* ret, rep ret, either after endbr64/endbr32; mov (%esp),%reg; ret. */
static bool
x86_returns_at_once(struct sw_walker *w, sw_addr target)
{
    uint8_t c[8];
    size_t i = 0;

    /* A lone `ret` may end its module's code: one byte first. */
    if (!sw_wand_code(w, target, c, 1))
        return false;
    if (c[0] == 0xc3)
        return true; /* ret */
    if (!sw_wand_code(w, target, c, sizeof c))
        return false;
    if (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && (c[3] == 0xfa || c[3] == 0xfb))
        i = 4; /* endbr64, endbr32 */
    if (c[i] == 0xc3 || (c[i] == 0xf3 && c[i + 1] == 0xc3))
        return true; /* ret, rep ret */
    /* mov (%esp),%reg (8b /r, mod 00, r/m 100, SIB 24); ret */
    return i == 0 && c[0] == 0x8b && (c[1] & 0xc7) == 0x04 && c[2] == 0x24 && c[3] == 0xc3;
}

/* The linkers' PLT entries, with the CET landing pad they may start with:
 *   x86-64   [endbr64] [bnd] jmp *disp32(%rip)         ff 25 / f2 ff 25
 *   i386     [endbr32] jmp *abs32 (ff 25), jmp *disp32(%ebx) (ff a3: %ebx
 *            holds the GOT, .got.plt's address)
 * ff 25 is RIP-relative in 64-bit mode (8-byte words), absolute in 32-bit. */
static sw_addr
x86_plt_slot(const struct arch_desc *a, const struct sw_lib *lib, sw_addr link, const uint8_t *c)
{
    size_t i = 0;

    if (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && (c[3] == 0xfa || c[3] == 0xfb))
        i = 4;
    if (c[i] == 0xf2)
        i++;
    if (c[i] != 0xff)
        return 0;
    uint32_t d = (uint32_t)c[i + 2] | (uint32_t)c[i + 3] << 8 | (uint32_t)c[i + 4] << 16 |
                 (uint32_t)c[i + 5] << 24;
    if (c[i + 1] == 0x25 && a->word_size == 8)
        return link + i + 6 + (sw_addr)(int64_t)(int32_t)d;
    if (c[i + 1] == 0x25)
        return d;
    const uint8_t *data;
    size_t len;
    sw_addr got;
    if (c[i + 1] == 0xa3 && a->word_size == 4 &&
        sw_elf_section(sw_lib_elf(lib), ".got.plt", false, &data, &len, &got) == 0)
        return (got + d) & 0xffffffffu;
    return 0;
}

const struct sw_wand_family sw_wand_x86 = {
    .call_before = x86_call_before,
    .jump_at = x86_jump_at,
    .returns_at_once = x86_returns_at_once,
    .plt_slot = x86_plt_slot,
    .sigframe_sp = NULL,
    .insn_align = 1,
    .sp_align = 0, /* the call pushed the return address just below the caller's SP */
};
