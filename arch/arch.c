/* arch/arch.c -- lookups over the architecture tables and target byte order.
 *
 * Pure functions, no I/O, no host #ifdefs: every table is used on every host.
 */
#include "rspwalk/arch.h"

#include <strings.h>

/* arch_by_tdesc takes the first match: ppc64 before ppc64le, since
 * target.xml's "powerpc:common64" names no byte order (big-endian is
 * gdb's default; the ELF header corrects it, targets/rsp_proc.c).
 * armv7m is the only 32-bit Arm description: target.xml's "arm" and
 * EM_ARM find it (A-profile Arm code is not a target here). */
static const struct arch_desc *const all_arches[] = {
    &arch_x86_64, &arch_i386,    &arch_aarch64, &arch_ppc32,
    &arch_ppc64,  &arch_ppc64le, &arch_armv7m,  NULL,
};

const struct arch_desc *const *
arch_all(void)
{
    return all_arches;
}

const struct arch_desc *
arch_by_elf(uint16_t e_machine, uint8_t ei_class, uint8_t ei_data)
{
    /* ELFDATA2MSB is 2 (the ELF gABI). */
    bool be = ei_data == 2;
    for (size_t i = 0; all_arches[i]; i++) {
        const struct arch_desc *a = all_arches[i];
        if (a->elf_machine == e_machine && a->elf_class == ei_class && a->big_endian == be)
            return a;
    }
    return NULL;
}

const struct arch_desc *
arch_by_tdesc(const char *architecture)
{
    if (architecture == NULL)
        return NULL;
    for (size_t i = 0; all_arches[i]; i++)
        if (strcasecmp(all_arches[i]->tdesc_arch, architecture) == 0)
            return all_arches[i];
    return NULL;
}

const struct arch_desc *
arch_by_name(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; all_arches[i]; i++)
        if (strcasecmp(all_arches[i]->name, name) == 0)
            return all_arches[i];
    return NULL;
}

const struct arch_reg *
arch_reg_by_name(const struct arch_desc *a, const char *name)
{
    for (size_t i = 0; i < a->nregs; i++)
        if (strcasecmp(a->regs[i].name, name) == 0)
            return &a->regs[i];
    return NULL;
}

const struct arch_reg *
arch_reg_by_dwarf(const struct arch_desc *a, int dw)
{
    for (size_t i = 0; i < a->nregs; i++)
        if (a->regs[i].dwarf == dw)
            return &a->regs[i];
    return NULL;
}

const struct arch_reg *
arch_reg_by_gdb(const struct arch_desc *a, int gdb)
{
    for (size_t i = 0; i < a->nregs; i++)
        if (a->regs[i].gdb == gdb)
            return &a->regs[i];
    return NULL;
}

const char *
arch_dwarf_name(const struct arch_desc *a, int dw)
{
    const struct arch_reg *r = arch_reg_by_dwarf(a, dw);
    return r ? r->name : NULL;
}

uint64_t
arch_load(const struct arch_desc *a, const uint8_t *p, size_t size)
{
    uint64_t v = 0;
    for (size_t i = 0; i < size && i < 8; i++) {
        size_t k = a->big_endian ? i : size - 1 - i;
        v = v << 8 | p[k];
    }
    return v;
}

void
arch_store(const struct arch_desc *a, uint8_t *p, size_t size, uint64_t v)
{
    for (size_t i = 0; i < size && i < 8; i++) {
        size_t k = a->big_endian ? size - 1 - i : i;
        p[k] = (uint8_t)(v & 0xff);
        v >>= 8;
    }
}
