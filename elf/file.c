/* elf/file.c -- one libelf handle over a local file or an image in memory.
 *
 * Opening, the checks that keep a truncated file out, the build-id note and
 * section lookup by name: what the ELF cache (elf/elf.c), the symbol tables
 * (elf/symbols.c) and the search for a debug file share.  Not the cache.
 */
#include "elf/elf_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/path.h"
#include "util/util.h"

void
sw_elf_file_close(struct elf_file *f)
{
    if (f->elf)
        elf_end(f->elf);
    if (f->fd >= 0)
        close(f->fd);
    sw_free(f->image);
    f->elf = NULL;
    f->fd = -1;
    f->image = NULL;
}

/* Open PATH for reading.  MMAP_PRIVATE (copy on write) because elf_compress
 * rewrites the section header of a compressed .debug_* section in place. */
int
sw_elf_file_open(struct elf_file *f, const char *path, bool nofollow, struct sw_errbuf *err)
{
    struct stat st;

    int fd = sw_path_open_regular(path, nofollow, &st, err);
    if (fd < 0)
        return fd;
    f->fd = fd;
    if (st.st_size == 0)
        return sw_fail(err, SW_EBADELF, "%s: not an ELF file (empty)", path);
    f->elf = elf_begin(f->fd, ELF_C_READ_MMAP_PRIVATE, NULL);
    if (f->elf == NULL)
        return sw_fail(err, SW_EBADELF, "%s: not an ELF file (%s)", path, elf_errmsg(-1));
    if (elf_kind(f->elf) != ELF_K_ELF)
        return sw_fail(err, SW_EBADELF, "%s: not an ELF file", path);
    f->raw = (const uint8_t *)elf_rawfile(f->elf, &f->rawlen);
    if (f->raw == NULL)
        return sw_fail(err, SW_EBADELF, "%s: not an ELF file (%s)", path, elf_errmsg(-1));
    return 0;
}

int
sw_elf_file_open_mem(struct elf_file *f, const char *name, const void *image, size_t len,
                     struct sw_errbuf *err)
{
    f->image = sw_malloc(len);
    if (f->image == NULL)
        return sw_fail(err, SW_ENOMEM, "%s: out of memory for a %zu-byte image", name, len);
    memcpy(f->image, image, len);
    f->elf = elf_memory(f->image, len);
    if (f->elf == NULL || elf_kind(f->elf) != ELF_K_ELF)
        return sw_fail(err, SW_EBADELF, "%s: not an ELF file", name);
    f->raw = f->image;
    f->rawlen = len;
    return 0;
}

/* Check that the header and both header tables lie inside the file, so a
 * truncated copy is rejected here rather than read past its end later. */
int
sw_elf_file_check_header(struct elf_file *f, const char *path, GElf_Ehdr *eh, struct sw_errbuf *err)
{
    size_t phnum, shnum;

    if (gelf_getehdr(f->elf, eh) == NULL)
        return sw_fail(err, SW_EBADELF, "%s: truncated ELF file (no complete ELF header)", path);
    if (elf_getphdrnum(f->elf, &phnum) != 0 || elf_getshdrnum(f->elf, &shnum) != 0)
        return sw_fail(err, SW_EBADELF, "%s: truncated ELF file (%s)", path, elf_errmsg(-1));
    /* libelf clamps the counts to what fits in the file: use the header's
     * own numbers unless they are escapes to extended numbering. */
    if (eh->e_phnum != PN_XNUM)
        phnum = eh->e_phnum;
    if (eh->e_shnum != 0)
        shnum = eh->e_shnum;
    size_t phsize = gelf_fsize(f->elf, ELF_T_PHDR, 1, EV_CURRENT);
    size_t shsize = gelf_fsize(f->elf, ELF_T_SHDR, 1, EV_CURRENT);
    if (phnum && (eh->e_phoff > f->rawlen || phnum > (f->rawlen - eh->e_phoff) / phsize))
        return sw_fail(err, SW_EBADELF,
                       "%s: truncated ELF file (program headers end past its %zu bytes)", path,
                       f->rawlen);
    if (eh->e_shoff && shnum &&
        (eh->e_shoff > f->rawlen || shnum > (f->rawlen - eh->e_shoff) / shsize))
        return sw_fail(err, SW_EBADELF,
                       "%s: truncated ELF file (section headers end past its %zu bytes)", path,
                       f->rawlen);
    return 0;
}

/* Walk the notes in DATA for NT_GNU_BUILD_ID. */
static bool
note_build_id(Elf_Data *data, const uint8_t **id, size_t *len)
{
    GElf_Nhdr nh;
    size_t off = 0, name_off, desc_off, next;

    if (data == NULL || data->d_buf == NULL)
        return false;
    while (off < data->d_size && (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
        const char *nm = (const char *)data->d_buf + name_off;
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && memcmp(nm, "GNU", 4) == 0 &&
            nh.n_descsz > 0) {
            *id = (const uint8_t *)data->d_buf + desc_off;
            *len = nh.n_descsz;
            return true;
        }
        off = next;
    }
    return false;
}

/* The build-id from a PT_NOTE segment, else from a SHT_NOTE section. */
void
sw_elf_file_build_id(struct elf_file *f, const uint8_t **id, size_t *len)
{
    size_t phnum = 0;
    GElf_Phdr ph;
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;

    *id = NULL;
    *len = 0;
    elf_getphdrnum(f->elf, &phnum);
    for (size_t i = 0; i < phnum; i++) {
        if (gelf_getphdr(f->elf, (int)i, &ph) == NULL || ph.p_type != PT_NOTE)
            continue;
        if (ph.p_offset > f->rawlen || ph.p_filesz > f->rawlen - ph.p_offset)
            continue;
        Elf_Data *d = elf_getdata_rawchunk(f->elf, (int64_t)ph.p_offset, ph.p_filesz,
                                           ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
        if (note_build_id(d, id, len))
            return;
    }
    while ((scn = elf_nextscn(f->elf, scn)) != NULL) {
        if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_NOTE)
            continue;
        if (note_build_id(elf_getdata(scn, NULL), id, len))
            return;
    }
}

Elf_Scn *
sw_elf_find_section(Elf *elf, const char *name, GElf_Shdr *sh)
{
    size_t shstrndx;
    Elf_Scn *scn = NULL;

    if (elf_getshdrstrndx(elf, &shstrndx) != 0)
        return NULL;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        if (gelf_getshdr(scn, sh) == NULL)
            continue;
        const char *n = elf_strptr(elf, shstrndx, sh->sh_name);
        if (n && strcmp(n, name) == 0)
            return scn;
    }
    return NULL;
}
