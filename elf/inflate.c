/* elf/inflate.c -- how far a compressed section may inflate.
 *
 * A compressed section says in its own header (Elf64_Chdr's ch_size, or
 * the "ZLIB" header of a GNU .zdebug section) how large it becomes, and
 * libelf allocates that much before inflating.  A file from the target can
 * say 2 GiB in 2 MB, so each section is held to a ceiling and to a ratio
 * before anything inflates it (libelf here, libdw in dwarf/dwarf.c).  Not
 * the inflating itself.
 */
#include "elf/elf_internal.h"

#include <stdio.h>
#include <string.h>

/* The size SCN (header SH, in ELF) inflates to by its own header, its
 * stored size in *STORED; false when it is not compressed. */
static bool
inflated_size(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, const char *name, uint64_t *out,
              uint64_t *stored)
{
    *stored = sh->sh_size;
    if (sh->sh_type == SHT_NOBITS)
        return false;
    if (sh->sh_flags & SHF_COMPRESSED) {
        GElf_Chdr ch;
        /* An unreadable header: libelf would refuse it too; count it as
         * the largest, so that nothing tries. */
        *out = gelf_getchdr(scn, &ch) != NULL ? ch.ch_size : UINT64_MAX;
        return true;
    }
    if (name == NULL || strncmp(name, ".zdebug", 7) != 0)
        return false;
    Elf_Data *raw = elf_rawdata(scn, NULL);
    (void)elf;
    if (raw == NULL || raw->d_size < 12 || memcmp(raw->d_buf, "ZLIB", 4) != 0) {
        *out = UINT64_MAX;
        return true;
    }
    const unsigned char *p = raw->d_buf;
    uint64_t v = 0;
    for (int i = 4; i < 12; i++)
        v = v << 8 | p[i]; /* big-endian, whatever the file's byte order */
    *out = v;
    return true;
}

bool
sw_elf_scn_inflate_ok(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, const char *name,
                      const struct sw_inflate_limits *lim, char *why, size_t why_len)
{
    uint64_t size, stored;
    if (!inflated_size(elf, scn, sh, name, &size, &stored))
        return true;
    uint64_t max_bytes = lim && lim->max_bytes ? lim->max_bytes : SW_ELF_INFLATE_MAX_BYTES;
    unsigned max_ratio = lim && lim->max_ratio ? lim->max_ratio : SW_ELF_INFLATE_MAX_RATIO;
    const char *nm = name ? name : "a section";
    if (size > max_bytes) {
        snprintf(why, why_len, "%s inflates to %llu bytes, more than the limit of %llu", nm,
                 (unsigned long long)size, (unsigned long long)max_bytes);
        return false;
    }
    /* Small sections are left to the ceiling: a few kilobytes of zeros
     * may compress well and harm no one. */
    if (size > SW_ELF_INFLATE_RATIO_FLOOR && (stored == 0 || size / stored >= max_ratio)) {
        snprintf(why, why_len,
                 "%s inflates %llu bytes to %llu, more than %u times (a compression bomb?)", nm,
                 (unsigned long long)stored, (unsigned long long)size, max_ratio);
        return false;
    }
    return true;
}

bool
sw_elf_inflate_ok(struct Elf *elf, const struct sw_inflate_limits *lim, char *why, size_t why_len)
{
    size_t shstrndx;
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;
    if (elf == NULL || elf_getshdrstrndx(elf, &shstrndx) != 0)
        return true;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        if (gelf_getshdr(scn, &sh) == NULL)
            continue;
        const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
        if (!sw_elf_scn_inflate_ok(elf, scn, &sh, name, lim, why, why_len))
            return false;
    }
    return true;
}
