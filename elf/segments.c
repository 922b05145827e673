/* elf/segments.c -- a file's loaded image: its PT_LOAD segments, and the bytes
 * and build-id note they hold at link-time addresses.
 *
 * Read from the program headers when the file is opened (elf/elf.c), then
 * read-only: no lock.  Not section contents (elf/elf.c) and not symbols.
 */
#include "elf/elf_internal.h"

#include <string.h>

#include "util/util.h"
#include "elf/image.h"

int
sw_elf_segments_read(struct sw_elf *e, const GElf_Ehdr *eh, struct sw_errbuf *err)
{
    size_t phnum = 0;
    GElf_Phdr ph;
    sw_addr phdr_load = 0;
    bool have_phdr = false;

    elf_getphdrnum(e->main.elf, &phnum);
    e->segs = sw_calloc(phnum ? phnum : 1, sizeof *e->segs);
    if (e->segs == NULL)
        return sw_fail(err, SW_ENOMEM, "%s: out of memory", e->path);
    for (size_t i = 0; i < phnum; i++) {
        if (gelf_getphdr(e->main.elf, (int)i, &ph) == NULL)
            return sw_fail(err, SW_EBADELF, "%s: truncated ELF file (program header %zu: %s)",
                           e->path, i, elf_errmsg(-1));
        if (ph.p_type == PT_DYNAMIC)
            e->dyn_vaddr = ph.p_vaddr;
        if (ph.p_type == PT_PHDR) {
            e->phdr_vaddr = ph.p_vaddr;
            have_phdr = true;
        }
        /* Only a hint: a PT_INTERP outside the file or without its NUL is
         * ignored rather than rejecting the file. */
        if (ph.p_type == PT_INTERP && ph.p_filesz > 1 && ph.p_offset < e->main.rawlen &&
            ph.p_filesz <= e->main.rawlen - ph.p_offset) {
            const char *s = (const char *)e->main.raw + ph.p_offset;
            if (s[0] != '\0' && memchr(s, '\0', ph.p_filesz) != NULL)
                e->interp = s;
        }
        if (ph.p_type != PT_LOAD)
            continue;
        if (ph.p_offset > e->main.rawlen || ph.p_filesz > e->main.rawlen - ph.p_offset)
            return sw_fail(err, SW_EBADELF,
                           "%s: truncated ELF file (segment %zu ends past its %zu bytes)", e->path,
                           i, e->main.rawlen);
        struct elf_seg *s = &e->segs[e->nsegs++];
        s->vaddr = ph.p_vaddr;
        s->memsz = ph.p_memsz;
        s->filesz = ph.p_filesz < ph.p_memsz ? ph.p_filesz : ph.p_memsz;
        s->offset = ph.p_offset;
        if (e->nsegs == 1 || s->vaddr < e->lo)
            e->lo = s->vaddr;
        if (e->nsegs == 1 || s->vaddr + s->memsz > e->hi)
            e->hi = s->vaddr + s->memsz;
        if (eh->e_phoff >= ph.p_offset && eh->e_phoff - ph.p_offset < ph.p_filesz)
            phdr_load = ph.p_vaddr + (eh->e_phoff - ph.p_offset);
    }
    if (e->nsegs == 0)
        return sw_fail(err, SW_EBADELF, "%s: no loadable segments (PT_LOAD)", e->path);
    if (!have_phdr)
        e->phdr_vaddr = phdr_load;
    return 0;
}

bool
sw_elf_build_id_note(const struct sw_elf *e, sw_addr *vaddr, const uint8_t **note, size_t *len)
{
    sw_addr at;
    const uint8_t *bytes;
    size_t n;
    if (e->main.raw == NULL ||
        sw_elf_image_build_id_note(e->main.raw, e->main.rawlen, &at, &bytes, &n) != 0)
        return false;
    /* Loaded: inside one PT_LOAD's file part, at the same place. */
    uint64_t off = (uint64_t)(bytes - e->main.raw);
    for (size_t i = 0; i < e->nsegs; i++) {
        const struct elf_seg *s = &e->segs[i];
        if (at >= s->vaddr && at - s->vaddr < s->filesz && n <= s->filesz - (at - s->vaddr) &&
            s->offset + (at - s->vaddr) == off) {
            *vaddr = at;
            *note = bytes;
            *len = n;
            return true;
        }
    }
    return false;
}

int
sw_elf_read(struct sw_elf *e, sw_addr vaddr, void *buf, size_t len)
{
    uint8_t *out = buf;

    while (len > 0) {
        const struct elf_seg *s = NULL;
        for (size_t i = 0; i < e->nsegs; i++)
            if (vaddr >= e->segs[i].vaddr && vaddr - e->segs[i].vaddr < e->segs[i].filesz) {
                s = &e->segs[i];
                break;
            }
        if (s == NULL)
            return SW_EMEM; /* unmapped, or .bss: only the target has it */
        sw_addr in = vaddr - s->vaddr;
        size_t n = s->filesz - in < len ? (size_t)(s->filesz - in) : len;
        memcpy(out, e->main.raw + s->offset + in, n);
        out += n;
        vaddr += n;
        len -= n;
    }
    return 0;
}
