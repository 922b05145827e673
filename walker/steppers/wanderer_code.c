/* walker/steppers/wanderer_code.c -- what the code around a stack word is, for the wanderer.
 *
 * Whether a word is a return address (the call before it: isPrevInstrACall),
 * where a direct call goes, whether a function jumps to another (a tail
 * call), which function a PLT stub leads to, and whether a call's target
 * returns at once (a thunk).  Code comes from the modules' local files, never
 * from the target: candidates are many.  walker/steppers/wanderer.c scans.
 */
#include <string.h>

#include "walker/steppers/analysis.h"
#include "walker/steppers/wanderer_internal.h"
#include "walker/walker_internal.h"

/* Bytes at runtime address ADDR from the local ELF file of the module
 * covering it only: a stack word that is not in a module with a local file
 * is no return address we can check, and reading the target for every
 * candidate would cost a round trip each. */
bool
sw_wand_code(struct sw_walker *w, sw_addr addr, void *buf, size_t len)
{
    const struct sw_lib *lib;

    if (addr < len)
        return false;
    if (sw_libstate_lib_at(sw_walker_libstate(w), addr, &lib) < 0 || lib->elf == NULL)
        return false;
    if (addr < lib->start || addr + len > lib->end)
        return false;
    return sw_elf_read(lib->elf, addr - lib->bias, buf, len) == 0;
}

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

/* x86: `e8 rel32` (direct), or `ff /2` with 2 to 7 bytes (indirect). */
static enum wand_call
x86_call_before(struct sw_walker *w, sw_addr ra, sw_addr *target)
{
    static const size_t lens[] = { 2, 3, 4, 6, 7 };
    uint8_t c[7];

    if (!sw_wand_code(w, ra - sizeof c, c, sizeof c))
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

/* aarch64 (Arm ARM C6.2): BL imm26 is 100101 imm26, BLR Xn is
 * 1101011 0001 11111 000000 n 00000. */
static enum wand_call
aarch64_call_before(struct sw_walker *w, sw_addr ra, sw_addr *target)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    uint8_t b[4];

    if ((ra & 3) != 0 || !sw_wand_code(w, ra - 4, b, 4))
        return WAND_NOT_CALL;
    uint32_t insn = (uint32_t)arch_load(a, b, 4);
    if ((insn & 0xfc000000u) == 0x94000000u) {
        int64_t off = (int64_t)((insn & 0x03ffffffu) ^ 0x02000000u) - 0x02000000;
        *target = ra - 4 + (sw_addr)(off * 4);
        return WAND_CALL_DIRECT;
    }
    if ((insn & 0xfffffc1fu) == 0xd63f0000u)
        return WAND_CALL_INDIRECT;
    return WAND_NOT_CALL;
}

/* PowerPC (Power ISA I-form and XL-form): bl is opcode 18 with AA=0 LK=1,
 * bctrl 4e800421, blrl 4e800021. */
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

/* isPrevInstrACall for the target's architecture. */
enum wand_call
sw_wand_call_before(struct sw_walker *w, sw_addr ra, sw_addr *target)
{
    switch (sw_walker_proc(w)->arch->elf_machine) {
    case EM_386:
    case EM_X86_64:
        return x86_call_before(w, ra, target);
    case EM_AARCH64:
        return aarch64_call_before(w, ra, target);
    case EM_PPC:
    case EM_PPC64:
        return ppc_call_before(w, ra, target);
    default:
        return WAND_NOT_CALL;
    }
}

/* Whether the code of function FN jumps to TO (a tail call): x86 `e9 rel32`
 * or `eb rel8` at any byte offset, aarch64 `b imm26`, PowerPC `b` (opcode 18,
 * AA=0, LK=0).  Functions without a size or larger than the buffer: no. */
static bool
wand_jump_encodings(struct sw_walker *w, const struct sw_symbol *fn, sw_addr to)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    const sw_addr mask = a->word_size == 4 ? 0xffffffffu : ~(sw_addr)0;
    uint8_t code[4096];

    if (fn->size == 0 || fn->size > sizeof code ||
        !sw_wand_code(w, fn->start, code, (size_t)fn->size))
        return false;
    for (size_t i = 0; i < fn->size; i++) {
        sw_addr pc = fn->start + i;
        if (a->call_ra_on_stack) {
            if (code[i] == 0xe9 && i + 5 <= fn->size) {
                int32_t rel = (int32_t)((uint32_t)code[i + 1] | (uint32_t)code[i + 2] << 8 |
                                        (uint32_t)code[i + 3] << 16 | (uint32_t)code[i + 4] << 24);
                if (((pc + 5 + (sw_addr)(int64_t)rel) & mask) == to)
                    return true;
            } else if (code[i] == 0xeb && i + 2 <= fn->size) {
                if (((pc + 2 + (sw_addr)(int64_t)(int8_t)code[i + 1]) & mask) == to)
                    return true;
            }
            continue;
        }
        if ((i & 3) != 0 || i + 4 > fn->size)
            continue;
        uint32_t insn = (uint32_t)arch_load(a, code + i, 4);
        int64_t off;
        if (a->elf_machine == EM_AARCH64 && (insn & 0xfc000000u) == 0x14000000u)
            off = ((int64_t)((insn & 0x03ffffffu) ^ 0x02000000u) - 0x02000000) * 4;
        else if (a->elf_machine != EM_AARCH64 && (insn & 0xfc000003u) == 0x48000000u)
            off = (int64_t)((insn & 0x03fffffcu) ^ 0x02000000u) - 0x02000000;
        else
            continue;
        if (pc + (sw_addr)off == to ||
            (pc + (sw_addr)off > to && pc + (sw_addr)off <= to + a->local_entry_max))
            return true;
    }
    return false;
}

/* ---- PLT stubs: which function a stub leads to ----------------------- */

/* The link-time address of the GOT slot the PLT stub at TARGET of LIB jumps
 * through, 0 if the stub is none of these (the linkers' PLT entries, with
 * the CET/BTI landing pad they may start with):
 *   x86-64   [endbr64] [bnd] jmp *disp32(%rip)         ff 25 / f2 ff 25
 *   i386     [endbr32] jmp *abs32 (ff 25), jmp *disp32(%ebx) (ff a3: %ebx
 *            holds the GOT, .got.plt's address)
 *   aarch64  [bti c] adrp x16, PAGE; ldr x17, [x16, #OFF]
 * PowerPC's call stubs load through the TOC or r30: not decoded (their
 * targets stay unnamed). */
static sw_addr
wand_plt_slot(const struct arch_desc *a, const struct sw_lib *lib, sw_addr target)
{
    const sw_addr link = target - lib->bias;
    uint8_t c[16];
    size_t i = 0;

    if (sw_elf_read(lib->elf, link, c, sizeof c) != 0)
        return 0;
    if (a->elf_machine == EM_X86_64 || a->elf_machine == EM_386) {
        if (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && (c[3] == 0xfa || c[3] == 0xfb))
            i = 4;
        if (c[i] == 0xf2)
            i++;
        if (c[i] != 0xff)
            return 0;
        uint32_t d = (uint32_t)c[i + 2] | (uint32_t)c[i + 3] << 8 | (uint32_t)c[i + 4] << 16 |
                     (uint32_t)c[i + 5] << 24;
        if (c[i + 1] == 0x25 && a->elf_machine == EM_X86_64)
            return link + i + 6 + (sw_addr)(int64_t)(int32_t)d;
        if (c[i + 1] == 0x25)
            return d;
        const uint8_t *data;
        size_t len;
        sw_addr got;
        if (c[i + 1] == 0xa3 && a->elf_machine == EM_386 &&
            sw_elf_section(lib->elf, ".got.plt", false, &data, &len, &got) == 0)
            return (got + d) & 0xffffffffu;
        return 0;
    }
    if (a->elf_machine != EM_AARCH64)
        return 0;
    if (arch_load(a, c, 4) == 0xd503245fu) /* bti c */
        i = 4;
    uint32_t adrp = (uint32_t)arch_load(a, c + i, 4), ldr = (uint32_t)arch_load(a, c + i + 4, 4);
    if ((adrp & 0x9f00001fu) != 0x90000010u || (ldr & 0xffc003ffu) != 0xf9400211u)
        return 0;
    int64_t pages = (int64_t)(((adrp >> 29) & 3u) | ((adrp >> 5) & 0x7ffffu) << 2);
    pages = (pages ^ 0x100000) - 0x100000; /* 21-bit signed */
    sw_addr page = ((link + i) & ~(sw_addr)0xfff) + (sw_addr)(pages * 4096);
    return page + ((ldr >> 10) & 0xfffu) * 8;
}

/* The name of the function the PLT stub at TARGET of LIB leads to: the
 * .dynsym symbol of the relocation that fills its GOT slot (.rela.plt's
 * JUMP_SLOT, or .rela.dyn's GLOB_DAT for .plt.got), NULL if unknown.
 * Borrowed from the ELF cache. */
const char *
sw_wand_plt_name(const struct arch_desc *a, const struct sw_lib *lib, sw_addr target)
{
    static const char *const rels[] = { ".rela.plt", ".rel.plt", ".rela.dyn", ".rel.dyn" };
    const bool is64 = a->word_size == 8;
    const size_t symsz = is64 ? 24 : 16;
    const uint8_t *sym, *str, *rel;
    size_t nsym, nstr, len;
    sw_addr addr, slot = wand_plt_slot(a, lib, target);

    if (slot == 0 || sw_elf_section(lib->elf, ".dynsym", false, &sym, &nsym, &addr) != 0 ||
        sw_elf_section(lib->elf, ".dynstr", false, &str, &nstr, &addr) != 0)
        return NULL;
    for (size_t k = 0; k < sizeof rels / sizeof rels[0]; k++) {
        if (sw_elf_section(lib->elf, rels[k], false, &rel, &len, &addr) != 0)
            continue;
        const size_t ent = (size_t)a->word_size * (rels[k][4] == 'a' ? 3 : 2);
        for (size_t off = 0; off + ent <= len; off += ent) {
            if (arch_load(a, rel + off, a->word_size) != slot)
                continue;
            uint64_t info = arch_load(a, rel + off + a->word_size, a->word_size);
            size_t idx = (size_t)(is64 ? info >> 32 : info >> 8);
            if (idx == 0 || (idx + 1) * symsz > nsym)
                return NULL;
            uint32_t name = (uint32_t)arch_load(a, sym + idx * symsz, 4);
            if (name >= nstr || memchr(str + name, '\0', nstr - name) == NULL)
                return NULL;
            return (const char *)str + name;
        }
    }
    return NULL;
}

/* Whether TARGET is in a PLT section of LIB (x86 and aarch64 put their PLT
 * stubs there; PowerPC's call stubs are in .text). */
bool
sw_wand_in_plt(const struct sw_lib *lib, sw_addr target)
{
    static const char *const plts[] = { ".plt", ".plt.sec", ".plt.got", ".iplt" };
    const uint8_t *data;
    size_t len;
    sw_addr addr;

    for (size_t i = 0; i < sizeof plts / sizeof plts[0]; i++)
        if (sw_elf_section(lib->elf, plts[i], false, &data, &len, &addr) == 0 &&
            target - lib->bias >= addr && target - lib->bias < addr + len)
            return true;
    return false;
}

/* Functions the tail-call check analyses (the analysis of a larger one
 * costs more than a scan candidate is worth). */
#define WAND_TAIL_ANALYSIS_MAX (16u * 1024u)

bool
sw_wand_tail_calls(struct sw_walker *w, const struct sw_symbol *fn, sw_addr to)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    uint8_t b;

    if (wand_jump_encodings(w, fn, to))
        return true;
    /* Conditional jumps (gcc reaches NAME.cold by jne), decoded from where
     * the function's code flows: only from a local file. */
    if (fn->size == 0 || fn->size > WAND_TAIL_ANALYSIS_MAX || !sw_wand_code(w, fn->start, &b, 1) ||
        !sw_wand_code(w, fn->start + fn->size - 1, &b, 1))
        return false;
    return sw_analysis_jumps_to(w, fn->start, to, a->local_entry_max) == 1;
}

bool
sw_wand_returns_at_once(struct sw_walker *w, sw_addr target, sw_addr ra)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    uint8_t c[8];

    if (target == ra)
        return true;
    if (a->call_ra_on_stack) {
        size_t i = 0;
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
    if ((target & 3) != 0 || !sw_wand_code(w, target, c, 4))
        return false;
    uint32_t insn = (uint32_t)arch_load(a, c, 4);
    if (a->elf_machine == EM_AARCH64)
        return insn == 0xd65f03c0u;                    /* ret */
    return insn == 0x4e800020u || insn == 0x4e800021u; /* blr, blrl */
}
