/* elf/elf.c -- the ELF cache: each local file opened once with libelf.
 *
 * Keeps what the walker needs of a module: segments, build-id, the separate
 * debug file, section contents; the symbol tables are elf/symbols.c's.  Reads
 * local files only, never the target.  libelf is included here and in
 * elf/symbols.c (through elf_internal.h), nowhere else.
 */
#include "elf/elf.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "util/util.h"
#include "elf/elf_internal.h"
#include "cfi/cfi.h"
#include "elf/debug_plain.h"
#include "dwarf/dwarf.h"
#include "libstate/fetch.h"

#define ELF_DEFAULT_DEBUG_DIR "/usr/lib/debug"

struct sw_elfcache *
sw_elfcache_new(const char *debug_dir)
{
    if (elf_version(EV_CURRENT) == EV_NONE)
        return NULL;
    struct sw_elfcache *c = sw_calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->debug_dir = sw_strdup(debug_dir ? debug_dir : ELF_DEFAULT_DEBUG_DIR);
    if (c->debug_dir == NULL) {
        sw_free(c);
        return NULL;
    }
    return c;
}

static void
file_close(struct elf_file *f)
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

static void
elf_destroy(struct sw_elf *e)
{
    sw_dinfo_close(e->dinfo); /* first: it names addresses through E's symbols */
    sw_cfi_close(e->cfi);
    file_close(&e->main);
    file_close(&e->dbg);
    sw_elf_syms_free(e);
    sw_free(e->segs);
    sw_free(e->debug_path);
    sw_free(e->dwarf_path);
    sw_free(e->path);
    sw_free(e);
}

void
sw_elfcache_free(struct sw_elfcache *c)
{
    if (c == NULL)
        return;
    while (c->files) {
        struct sw_elf *e = c->files;
        c->files = e->next;
        elf_destroy(e);
    }
    sw_free(c->debug_dir);
    sw_free(c->cache_dir);
    sw_free(c);
}

int
sw_elfcache_set_cache_dir(struct sw_elfcache *c, const char *dir)
{
    char *copy = dir ? sw_strdup(dir) : NULL;
    if (dir && copy == NULL)
        return SW_ENOMEM;
    sw_free(c->cache_dir);
    c->cache_dir = copy;
    return 0;
}

/* ---- opening ------------------------------------------------------------ */

/* Open PATH for reading.  MMAP_PRIVATE (copy on write) because elf_compress
 * rewrites the section header of a compressed .debug_* section in place. */
static int
file_open(struct elf_file *f, const char *path, struct sw_errbuf *err)
{
    struct stat st;

    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (f->fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return sw_fail(err, SW_ENOENT, "%s: no such file", path);
        return sw_fail(err, SW_EIO, "%s: %s", path, strerror(errno));
    }
    if (fstat(f->fd, &st) != 0)
        return sw_fail(err, SW_EIO, "%s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return sw_fail(err, SW_EBADELF, "%s: not a regular file", path);
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

static int
file_open_mem(struct elf_file *f, const char *name, const void *image, size_t len,
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
static int
check_header(struct elf_file *f, const char *path, GElf_Ehdr *eh, struct sw_errbuf *err)
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
find_build_id_in(Elf_Data *data, const uint8_t **id, size_t *len)
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
static void
find_build_id(struct elf_file *f, const uint8_t **id, size_t *len)
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
        if (find_build_id_in(d, id, len))
            return;
    }
    while ((scn = elf_nextscn(f->elf, scn)) != NULL) {
        if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_NOTE)
            continue;
        if (find_build_id_in(elf_getdata(scn, NULL), id, len))
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

static int
read_segments(struct sw_elf *e, const GElf_Ehdr *eh, struct sw_errbuf *err)
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

/* ---- the separate debug file -------------------------------------------- */

static bool
same_build_id(struct sw_elf *e, struct elf_file *f)
{
    const uint8_t *id;
    size_t len;

    find_build_id(f, &id, &len);
    if (len == 0 || e->build_id_len == 0)
        return true; /* nothing to compare: the path or the CRC decided */
    return len == e->build_id_len && memcmp(id, e->build_id, len) == 0;
}

/* Open PATH as E's debug file if it exists and matches (build-id, else CRC
 * when CRC is given).  Returns 1 when it became the debug file, 0 when it is
 * absent or does not match, SW_ENOMEM. */
static int
try_debug_file(struct sw_elf *e, const char *path, const uint32_t *crc)
{
    struct elf_file f = { .fd = -1 };
    struct sw_errbuf ignored;

    if (strcmp(path, e->path) == 0 || access(path, R_OK) != 0)
        return 0;
    if (file_open(&f, path, &ignored) != 0)
        goto reject;
    if (e->build_id_len == 0 && crc != NULL) {
        uLong c = crc32(0L, Z_NULL, 0);
        size_t left = f.rawlen;
        const uint8_t *p = f.raw;
        while (left > 0) {
            uInt n = left > (1u << 30) ? (1u << 30) : (uInt)left;
            c = crc32(c, p, n);
            p += n;
            left -= n;
        }
        if ((uint32_t)c != *crc)
            goto reject;
    } else if (!same_build_id(e, &f)) {
        goto reject;
    }
    e->debug_path = sw_strdup(path);
    if (e->debug_path == NULL) {
        file_close(&f);
        return SW_ENOMEM;
    }
    e->dbg = f;
    sw_debug(SW_DBG_CACHE, "elf: %s: debug file %s", e->path, path);
    return 1;
reject:
    file_close(&f);
    return 0;
}

/* gdb's order: the build-id link under the debug directory, then the
 * .gnu_debuglink name next to the file, in its .debug/, and under the debug
 * directory followed by the file's own directory.  Returns 0 (found or
 * not) or SW_ENOMEM. */
static int
find_debug_file(struct sw_elf *e, const char *debug_dir, bool from_memory)
{
    char path[4096];

    if (e->build_id_len >= 2) {
        int n = snprintf(path, sizeof path, "%s/.build-id/%02x/", debug_dir, e->build_id[0]);
        for (size_t i = 1; i < e->build_id_len && n > 0 && (size_t)n + 3 < sizeof path; i++)
            n += snprintf(path + n, sizeof path - (size_t)n, "%02x", e->build_id[i]);
        if (n > 0 && (size_t)n + 7 < sizeof path) {
            memcpy(path + n, ".debug", 7);
            int rc = try_debug_file(e, path, NULL);
            if (rc != 0)
                return rc < 0 ? rc : 0;
        }
    }
    if (from_memory)
        return 0;

    GElf_Shdr sh;
    Elf_Scn *scn = sw_elf_find_section(e->main.elf, ".gnu_debuglink", &sh);
    Elf_Data *d = scn && sh.sh_type != SHT_NOBITS ? elf_getdata(scn, NULL) : NULL;
    if (d == NULL || d->d_buf == NULL || d->d_size < 8)
        return 0;
    const char *link = d->d_buf;
    size_t linklen = strnlen(link, d->d_size);
    size_t crc_off = (linklen + 4) & ~(size_t)3;
    if (linklen == 0 || linklen == d->d_size || crc_off + 4 > d->d_size)
        return 0;
    const uint8_t *cp = (const uint8_t *)d->d_buf + crc_off;
    uint32_t crc = 0;
    for (int i = 0; i < 4; i++)
        crc |= (uint32_t)cp[e->big_endian ? i : 3 - i] << (8 * (3 - i));

    const char *slash = strrchr(e->path, '/');
    int dirlen = slash ? (int)(slash - e->path) : 1;
    const char *dir = slash ? e->path : ".";
    snprintf(path, sizeof path, "%.*s/%.*s", dirlen, dir, (int)linklen, link);
    int rc = try_debug_file(e, path, &crc);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    snprintf(path, sizeof path, "%.*s/.debug/%.*s", dirlen, dir, (int)linklen, link);
    rc = try_debug_file(e, path, &crc);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    if (dir[0] == '/') {
        snprintf(path, sizeof path, "%s%.*s/%.*s", debug_dir, dirlen, dir, (int)linklen, link);
        rc = try_debug_file(e, path, &crc);
    }
    return rc < 0 ? rc : 0;
}

/* ---- the cache ---------------------------------------------------------- */

static struct sw_elf *
cache_find(struct sw_elfcache *c, const char *key)
{
    for (struct sw_elf *e = c->files; e; e = e->next)
        if (strcmp(e->path, key) == 0)
            return e;
    return NULL;
}

static int
elf_load(struct sw_elfcache *c, struct sw_elf *e, const void *image, size_t len,
         struct sw_errbuf *err)
{
    GElf_Ehdr eh;
    int rc;

    if (image != NULL)
        rc = file_open_mem(&e->main, e->path, image, len, err);
    else
        rc = file_open(&e->main, e->path, err);
    if (rc == 0)
        rc = check_header(&e->main, e->path, &eh, err);
    if (rc == 0)
        rc = read_segments(e, &eh, err);
    if (rc != 0)
        return rc;
    e->machine = eh.e_machine;
    e->flags = eh.e_flags;
    e->big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
    e->arch = arch_by_elf(eh.e_machine, eh.e_ident[EI_CLASS], eh.e_ident[EI_DATA]);
    e->is_dyn = eh.e_type == ET_DYN;
    e->entry = eh.e_entry;
    find_build_id(&e->main, &e->build_id, &e->build_id_len);
    if (find_debug_file(e, c->debug_dir, image != NULL) != 0)
        return sw_fail(err, SW_ENOMEM, "%s: out of memory looking for its debug file", e->path);
    return 0;
}

static int
cache_open(struct sw_elfcache *c, const char *key, const void *image, size_t len,
           struct sw_elf **out, struct sw_errbuf *err)
{
    if (c == NULL || key == NULL || out == NULL)
        return sw_fail(err, SW_EINVAL, "opening an ELF file: no cache or no path");
    struct sw_elf *e = cache_find(c, key);
    if (e != NULL) {
        *out = e;
        return 0;
    }
    e = sw_calloc(1, sizeof *e);
    if (e == NULL)
        return sw_fail(err, SW_ENOMEM, "%s: out of memory", key);
    e->main.fd = -1;
    e->dbg.fd = -1;
    e->cache = c;
    e->path = sw_strdup(key);
    if (e->path == NULL) {
        sw_free(e);
        return sw_fail(err, SW_ENOMEM, "%s: out of memory", key);
    }
    int rc = elf_load(c, e, image, len, err);
    if (rc != 0) {
        elf_destroy(e);
        return rc;
    }
    sw_debug(SW_DBG_CACHE, "elf: opened %s (%zu segments)", e->path, e->nsegs);
    e->next = c->files;
    c->files = e;
    *out = e;
    return 0;
}

int
sw_elfcache_open(struct sw_elfcache *c, const char *path, struct sw_elf **out,
                 struct sw_errbuf *err)
{
    return cache_open(c, path, NULL, 0, out, err);
}

int
sw_elfcache_open_mem(struct sw_elfcache *c, const char *name, const void *image, size_t len,
                     struct sw_elf **out, struct sw_errbuf *err)
{
    if (image == NULL || len == 0)
        return sw_fail(err, SW_EBADELF, "%s: not an ELF file (empty image)",
                       name ? name : "(memory)");
    return cache_open(c, name, image, len, out, err);
}

struct sw_elf *
sw_elfcache_lookup(struct sw_elfcache *c, const char *key)
{
    return c && key ? cache_find(c, key) : NULL;
}

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

/* ---- accessors ---------------------------------------------------------- */

const char *
sw_elf_path(const struct sw_elf *e)
{
    return e->path;
}

const char *
sw_elf_debug_path(const struct sw_elf *e)
{
    return e->debug_path;
}

const char *
sw_elf_dwarf_path(struct sw_elf *e)
{
    if (!e->dwarf_path_tried && e->debug_path != NULL && e->cache->cache_dir != NULL &&
        getenv("RSPWALK_NO_CACHE") == NULL) {
        e->dwarf_path_tried = true;
        /* No memory for a copy: the debug file as it is. */
        (void)sw_debug_plain_path(e->cache->cache_dir, e->debug_path, e->build_id, e->build_id_len,
                                  &e->dwarf_path);
    }
    return e->dwarf_path ? e->dwarf_path : e->debug_path;
}

int
sw_elf_dinfo(struct sw_elf *e, struct sw_dinfo **d, struct sw_errbuf *err)
{
    struct sw_errbuf oerr = { 0 };
    if (!e->dinfo_tried && e->main.image == NULL) {
        int rc = sw_dinfo_open(e->path, sw_elf_dwarf_path(e), e, &e->dinfo, &oerr);
        if (rc == SW_ENOMEM)
            return sw_fail(err, rc, "%s", oerr.msg);
        if (rc < 0) {
            /* Remembered: a file whose DWARF is bad is not retried at every frame. */
            sw_debug(SW_DBG_STEP, "virtual frames: %s", oerr.msg);
            e->dinfo = NULL;
        }
    }
    e->dinfo_tried = true;
    *d = e->dinfo;
    return 0;
}

int
sw_elf_cfi(struct sw_elf *e, unsigned word_size, struct sw_cfi **cfi, const struct sw_errbuf **why)
{
    *cfi = NULL;
    *why = &e->cfi_why;
    if (!e->cfi_tried) {
        sw_err_clear(&e->cfi_why);
        int rc = e->main.image != NULL
                     ? sw_cfi_open_mem(e->main.image, e->main.rawlen, e->path, word_size, &e->cfi,
                                       &e->cfi_why)
                     : sw_cfi_open(e->path, sw_elf_dwarf_path(e), word_size, &e->cfi, &e->cfi_why);
        if (rc == SW_ENOMEM)
            return rc;
        if (rc < 0)
            e->cfi = NULL;
        e->cfi_tried = true;
        sw_debug(SW_DBG_CACHE, "elf: CFI of %s: %s", e->path, rc < 0 ? e->cfi_why.msg : "opened");
    }
    *cfi = e->cfi;
    return 0;
}

bool
sw_elf_dwarf_ready(struct sw_elf *e)
{
    if (e->dwarf_path_tried || e->debug_path == NULL || e->cache->cache_dir == NULL ||
        getenv("RSPWALK_NO_CACHE") != NULL)
        return true;
    char *copy = NULL;
    if (sw_debug_plain_existing(e->cache->cache_dir, e->build_id, e->build_id_len, &copy) != 0 ||
        copy == NULL)
        return false;
    e->dwarf_path = copy;
    e->dwarf_path_tried = true;
    return true;
}

const struct arch_desc *
sw_elf_arch(const struct sw_elf *e)
{
    return e->arch;
}

bool
sw_elf_is_dyn(const struct sw_elf *e)
{
    return e->is_dyn;
}

sw_addr
sw_elf_entry(const struct sw_elf *e)
{
    return e->entry;
}

void
sw_elf_load_range(const struct sw_elf *e, sw_addr *lo, sw_addr *hi)
{
    *lo = e->lo;
    *hi = e->hi;
}

const char *
sw_elf_interp(const struct sw_elf *e)
{
    return e->interp;
}

void
sw_elf_image(const struct sw_elf *e, const uint8_t **data, size_t *len)
{
    *data = e->main.image;
    *len = e->main.image ? e->main.rawlen : 0;
}

sw_addr
sw_elf_dynamic_vaddr(const struct sw_elf *e)
{
    return e->dyn_vaddr;
}

sw_addr
sw_elf_phdr_vaddr(const struct sw_elf *e)
{
    return e->phdr_vaddr;
}

void
sw_elf_build_id(const struct sw_elf *e, const uint8_t **id, size_t *len)
{
    *id = e->build_id;
    *len = e->build_id_len;
}

bool
sw_elf_build_id_note(const struct sw_elf *e, sw_addr *vaddr, const uint8_t **note, size_t *len)
{
    sw_addr at;
    const uint8_t *bytes;
    size_t n;
    if (e->main.raw == NULL ||
        sw_fetch_build_id_note(e->main.raw, e->main.rawlen, &at, &bytes, &n) != 0)
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

/* ---- code bytes --------------------------------------------------------- */

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

int
sw_elf_section(struct sw_elf *e, const char *name, bool from_debug, const uint8_t **data,
               size_t *len, sw_addr *addr)
{
    struct elf_file *f = from_debug ? &e->dbg : &e->main;
    GElf_Shdr sh;

    if (f->elf == NULL)
        return SW_ENOENT;
    Elf_Scn *scn = sw_elf_find_section(f->elf, name, &sh);
    if (scn == NULL || sh.sh_type == SHT_NOBITS)
        return SW_ENOENT;
    /* Debian's debug files compress .debug_* (SHF_COMPRESSED, zlib);
     * decompressing once makes later elf_getdata calls return the bytes. */
    if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
        return SW_ENOENT;
    Elf_Data *d = elf_getdata(scn, NULL);
    if (d == NULL || d->d_buf == NULL)
        return SW_ENOENT;
    *data = d->d_buf;
    *len = d->d_size;
    *addr = sh.sh_addr;
    return 0;
}
