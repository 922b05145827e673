/* elf/image.c -- ELF images read by hand, without libelf.
 *
 * For bytes that are not (yet) a whole file: how much of an image in target
 * memory makes it up (the vDSO, read a piece at a time), and the build-id
 * note in a file's first page or in a loaded image.  Opening files is
 * elf/elf.c's.  Uses only glibc's <elf.h> constants and layouts.
 */
#include "elf/image.h"

#include <elf.h>
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include "util/util.h"

/* ---- an image's size ---------------------------------------------------- */

/* An unsigned field of SIZE bytes at OFF in the header bytes B. */
static uint64_t
field(const uint8_t *b, size_t off, size_t size, bool msb)
{
    uint64_t v = 0;
    for (size_t i = 0; i < size; i++)
        v |= (uint64_t)b[off + i] << (8 * (msb ? size - 1 - i : i));
    return v;
}

#define EH_FIELD(b, is64, msb, f)                                                                  \
    ((is64) ? field(b, offsetof(Elf64_Ehdr, f), sizeof(((Elf64_Ehdr *)0)->f), msb)                 \
            : field(b, offsetof(Elf32_Ehdr, f), sizeof(((Elf32_Ehdr *)0)->f), msb))
#define PH_FIELD(b, is64, msb, f)                                                                  \
    ((is64) ? field(b, offsetof(Elf64_Phdr, f), sizeof(((Elf64_Phdr *)0)->f), msb)                 \
            : field(b, offsetof(Elf32_Phdr, f), sizeof(((Elf32_Phdr *)0)->f), msb))

/* Parsed by hand rather than with libelf: the bytes are a prefix of an image
 * still being read, and libelf wants the whole image up front. */
int
sw_elf_image_size(const void *head, size_t len, const char *name, size_t *need,
                  struct sw_errbuf *err)
{
    const uint8_t *b = head;

    if (memcmp(b, ELFMAG, len < SELFMAG ? len : SELFMAG) != 0)
        return sw_fail(err, SW_EBADELF, "%s: not an ELF image (no ELF magic)", name);
    if (len < EI_NIDENT) {
        *need = EI_NIDENT;
        return 0;
    }
    if (b[EI_CLASS] != ELFCLASS32 && b[EI_CLASS] != ELFCLASS64)
        return sw_fail(err, SW_EBADELF, "%s: not an ELF image (class %u)", name, b[EI_CLASS]);
    if (b[EI_DATA] != ELFDATA2LSB && b[EI_DATA] != ELFDATA2MSB)
        return sw_fail(err, SW_EBADELF, "%s: not an ELF image (byte order %u)", name, b[EI_DATA]);
    bool is64 = b[EI_CLASS] == ELFCLASS64, msb = b[EI_DATA] == ELFDATA2MSB;
    size_t ehsize = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
    size_t phsize = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
    if (len < ehsize) {
        *need = ehsize;
        return 0;
    }
    uint64_t phoff = EH_FIELD(b, is64, msb, e_phoff);
    uint64_t phnum = EH_FIELD(b, is64, msb, e_phnum);
    uint64_t phentsize = EH_FIELD(b, is64, msb, e_phentsize);
    uint64_t shoff = EH_FIELD(b, is64, msb, e_shoff);
    uint64_t shnum = EH_FIELD(b, is64, msb, e_shnum);
    uint64_t shentsize = EH_FIELD(b, is64, msb, e_shentsize);
    if (phnum == 0)
        return sw_fail(err, SW_EBADELF, "%s: no loadable segments (no program headers)", name);
    if (phentsize != phsize)
        return sw_fail(err, SW_EBADELF, "%s: program header size %" PRIu64 ", expected %zu", name,
                       phentsize, phsize);
    /* phnum and the entry sizes are 16-bit fields: only the offsets can overflow. */
    if (phoff > SIZE_MAX - phnum * phentsize || shoff > SIZE_MAX - shnum * shentsize)
        return sw_fail(err, SW_EBADELF, "%s: header tables beyond any image size", name);
    size_t span = (size_t)(phoff + phnum * phentsize);
    if (span > len) {
        *need = span;
        return 0;
    }
    if (span < ehsize)
        span = ehsize;
    size_t loads = 0;
    for (uint64_t i = 0; i < phnum; i++) {
        const uint8_t *ph = b + phoff + i * phentsize;
        if (PH_FIELD(ph, is64, msb, p_type) != PT_LOAD)
            continue;
        uint64_t off = PH_FIELD(ph, is64, msb, p_offset);
        uint64_t filesz = PH_FIELD(ph, is64, msb, p_filesz);
        if (off > SIZE_MAX - filesz)
            return sw_fail(err, SW_EBADELF, "%s: segment %" PRIu64 " beyond any image size", name,
                           i);
        if (off + filesz > span)
            span = (size_t)(off + filesz);
        loads++;
    }
    if (loads == 0)
        return sw_fail(err, SW_EBADELF, "%s: no loadable segments (PT_LOAD)", name);
    if (shoff != 0 && shnum != 0 && shoff + shnum * shentsize > span)
        span = (size_t)(shoff + shnum * shentsize);
    *need = span;
    return 0;
}

/* ---- the build-id note ------------------------------------------------- */

static uint64_t
load(const uint8_t *p, size_t n, bool be)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[be ? n - 1 - i : i] << (8 * i);
    return v;
}

/* Whether [OFF, OFF+N) lies in LEN bytes; else *NEED grows to cover it. */
static bool
within(uint64_t off, uint64_t n, size_t len, size_t *need)
{
    if (off > SIZE_MAX - n) {
        return false;
    }
    if (off + n <= len)
        return true;
    if (off + n > *need)
        *need = (size_t)(off + n);
    return false;
}

/* Round V up to ALIGN (4 or 8). */
static uint64_t
align_up(uint64_t v, uint64_t align)
{
    return (v + align - 1) & ~(align - 1);
}

/* Where a build-id note is: its descriptor (*ID, *ID_LEN) and the note's
 * start as a file offset and as a link-time address. */
struct note_at {
    const uint8_t *id;
    size_t id_len;
    uint64_t off;
    uint64_t vaddr;
};

/* The GNU build-id in the notes at [OFF, OFF+SIZE) of IMAGE (a PT_NOTE
 * loaded at VADDR), entries aligned to ALIGN: 4, or 8 in an 8-aligned
 * PT_NOTE, where the descriptor and the next note start at the next multiple
 * of 8 from the segment's start (gABI; libelf's gelf_getnote). */
static bool
find_note(const uint8_t *image, size_t len, uint64_t off, uint64_t size, uint64_t vaddr,
          uint64_t align, bool be, struct note_at *out, size_t *need)
{
    if (!within(off, size, len, need))
        return false;
    const uint8_t *base = image + off;
    uint64_t at = 0;
    while (at <= size && size - at >= 12) {
        const uint8_t *p = base + at;
        uint64_t namesz = load(p, 4, be), descsz = load(p + 4, 4, be), type = load(p + 8, 4, be);
        if (namesz > size || descsz > size)
            return false;
        uint64_t desc = align_up(at + 12 + namesz, align);
        uint64_t next = align_up(desc + descsz, align);
        if (desc + descsz > size)
            return false;
        if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(p + 12, "GNU", 4) == 0 && descsz > 0 &&
            descsz <= SW_ELF_MAX_BUILD_ID) {
            *out = (struct note_at){ base + desc, (size_t)descsz, off + at, vaddr + at };
            return true;
        }
        if (next <= at)
            return false;
        at = next;
    }
    return false;
}

/* The build-id note of the ELF image in IMAGE[0, LEN); see
 * sw_elf_image_build_id for *NEED and the result. */
static int
find_build_id_note(const uint8_t *image, size_t len, struct note_at *out, size_t *need)
{
    size_t want = len;

    memset(out, 0, sizeof *out);
    if (need)
        *need = len;
    if (len < 16 || memcmp(image, "\177ELF", 4) != 0)
        return SW_EBADELF;
    int cls = image[4], data = image[5];
    if ((cls != ELFCLASS32 && cls != ELFCLASS64) || (data != ELFDATA2LSB && data != ELFDATA2MSB))
        return SW_EBADELF;
    bool be = data == ELFDATA2MSB, is64 = cls == ELFCLASS64;
    size_t ehsize = is64 ? 64 : 52;
    if (!within(0, ehsize, len, &want)) {
        if (need)
            *need = want;
        return 0;
    }
    uint64_t phoff = is64 ? load(image + 32, 8, be) : load(image + 28, 4, be);
    uint64_t phentsize = load(image + (is64 ? 54 : 42), 2, be);
    uint64_t phnum = load(image + (is64 ? 56 : 44), 2, be);
    if (phentsize < (is64 ? 56u : 32u))
        return SW_EBADELF;
    if (!within(phoff, phentsize * phnum, len, &want)) {
        if (need)
            *need = want;
        return 0;
    }
    for (uint64_t i = 0; i < phnum; i++) {
        const uint8_t *ph = image + phoff + i * phentsize;
        if (load(ph, 4, be) != PT_NOTE)
            continue;
        uint64_t off = is64 ? load(ph + 8, 8, be) : load(ph + 4, 4, be);
        uint64_t vaddr = is64 ? load(ph + 16, 8, be) : load(ph + 8, 4, be);
        uint64_t size = is64 ? load(ph + 32, 8, be) : load(ph + 16, 4, be);
        uint64_t align = (is64 ? load(ph + 48, 8, be) : load(ph + 28, 4, be)) == 8 ? 8 : 4;
        if (find_note(image, len, off, size, vaddr, align, be, out, &want))
            return 0;
    }
    if (need)
        *need = want;
    return 0;
}

int
sw_elf_image_build_id(const uint8_t *image, size_t len, const uint8_t **id, size_t *id_len,
                      size_t *need)
{
    struct note_at at;
    int rc = find_build_id_note(image, len, &at, need);
    *id = at.id;
    *id_len = at.id_len;
    return rc;
}

int
sw_elf_image_build_id_note(const uint8_t *image, size_t len, sw_addr *vaddr, const uint8_t **note,
                           size_t *note_len)
{
    struct note_at at;
    int rc = find_build_id_note(image, len, &at, NULL);
    if (rc != 0)
        return rc;
    if (at.id == NULL)
        return SW_ENOENT;
    *vaddr = at.vaddr;
    *note = image + at.off;
    *note_len = (size_t)(at.id + at.id_len - (image + at.off));
    return 0;
}
