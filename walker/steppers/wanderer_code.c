/* walker/steppers/wanderer_code.c -- what the code around a stack word is, for the wanderer.
 *
 * Whether a function jumps to another (a tail call) and which function a PLT
 * stub leads to, with the encodings of the target's family
 * (wanderer_x86.c, wanderer_aarch64.c, wanderer_ppc.c: those also say
 * whether a word follows a call, and whether a call's target returns at
 * once).  Code comes from the modules' local files, never from the target:
 * candidates are many.  walker/steppers/wanderer.c scans.
 */
#include <string.h>

#include "libstate/lib.h"
#include "walker/steppers/analysis.h"
#include "walker/steppers/wanderer_internal.h"
#include "walker/walker_internal.h"

/* Bytes at runtime address ADDR from the local ELF file of the module
 * covering it only: a stack word that is not in a module with a local file
 * is no return address we can check, and reading the target for every
 * candidate would cost a round trip each.  The one exception: the walker's
 * CODE_FROM_TARGET, while it checks one caller in code of the memory map. */
bool
sw_wand_code(struct sw_walker *w, sw_addr addr, void *buf, size_t len)
{
    const struct sw_lib *lib;

    if (addr < len)
        return false;
    if (sw_libstate_lib_at(sw_walker_libstate(w), addr, &lib) < 0)
        return sw_walker_code_from_target(w) && sw_walker_read_code(w, addr, buf, len) == 0;
    if (sw_lib_elf(lib) == NULL)
        return false;
    if (addr < lib->start || addr + len > lib->end)
        return false;
    return sw_elf_read(sw_lib_elf(lib), addr - lib->bias, buf, len) == 0;
}

/* Whether the code of function FN jumps to TO or to a local entry of it (a
 * tail call): FAM's unconditional jump encodings at every instruction
 * boundary.  Functions without a size or larger than the buffer: no. */
static bool
wand_jump_encodings(struct sw_walker *w, const struct sw_wand_family *fam,
                    const struct sw_symbol *fn, sw_addr to)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    uint8_t code[4096];
    sw_addr dest;

    if (fn->size == 0 || fn->size > sizeof code ||
        !sw_wand_code(w, fn->start, code, (size_t)fn->size))
        return false;
    for (size_t i = 0; i < fn->size; i += fam->insn_align)
        if (fam->jump_at(a, code + i, (size_t)fn->size - i, fn->start + i, &dest) &&
            (dest == to || (dest > to && dest <= to + a->local_entry_max)))
            return true;
    return false;
}

/* ---- PLT stubs: which function a stub leads to ----------------------- */

/* The name of the function the PLT stub at TARGET of LIB leads to: the
 * .dynsym symbol of the relocation that fills the GOT slot FAM decodes from
 * the stub (.rela.plt's JUMP_SLOT, or .rela.dyn's GLOB_DAT for .plt.got),
 * NULL if unknown.  Borrowed from the ELF cache. */
const char *
sw_wand_plt_name(const struct arch_desc *a, const struct sw_wand_family *fam,
                 const struct sw_lib *lib, sw_addr target)
{
    static const char *const rels[] = { ".rela.plt", ".rel.plt", ".rela.dyn", ".rel.dyn" };
    const bool is64 = a->word_size == 8;
    const size_t symsz = is64 ? 24 : 16;
    const uint8_t *sym, *str, *rel;
    size_t nsym, nstr, len;
    uint8_t stub[WAND_PLT_STUB_BYTES];
    sw_addr addr, slot;

    if (fam->plt_slot == NULL ||
        sw_elf_read(sw_lib_elf(lib), target - lib->bias, stub, sizeof stub) != 0)
        return NULL;
    slot = fam->plt_slot(a, lib, target - lib->bias, stub);
    if (slot == 0 || sw_elf_section(sw_lib_elf(lib), ".dynsym", false, &sym, &nsym, &addr) != 0 ||
        sw_elf_section(sw_lib_elf(lib), ".dynstr", false, &str, &nstr, &addr) != 0)
        return NULL;
    for (size_t k = 0; k < sizeof rels / sizeof rels[0]; k++) {
        if (sw_elf_section(sw_lib_elf(lib), rels[k], false, &rel, &len, &addr) != 0)
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
        if (sw_elf_section(sw_lib_elf(lib), plts[i], false, &data, &len, &addr) == 0 &&
            target - lib->bias >= addr && target - lib->bias < addr + len)
            return true;
    return false;
}

/* Functions the tail-call check analyses (the analysis of a larger one
 * costs more than a scan candidate is worth). */
#define WAND_TAIL_ANALYSIS_MAX (16u * 1024u)

bool
sw_wand_tail_calls(struct sw_walker *w, const struct sw_wand_family *fam,
                   const struct sw_symbol *fn, sw_addr to)
{
    const struct arch_desc *a = sw_walker_proc(w)->arch;
    uint8_t b;

    if (wand_jump_encodings(w, fam, fn, to))
        return true;
    /* Conditional jumps (gcc reaches NAME.cold by jne), decoded from where
     * the function's code flows: only from a local file. */
    if (fn->size == 0 || fn->size > WAND_TAIL_ANALYSIS_MAX || !sw_wand_code(w, fn->start, &b, 1) ||
        !sw_wand_code(w, fn->start + fn->size - 1, &b, 1))
        return false;
    return sw_analysis_jumps_to(w, fn->start, to, a->local_entry_max) == 1;
}
