/* elf/elf.c -- the ELF cache: each local file opened once with libelf.
 *
 * Keeps what the walker needs of a module: segments, build-id, the separate
 * debug file, section contents; the symbol tables are elf/symbols.c's, the
 * libelf handles elf/file.c's.  Reads local files only, never the target,
 * and knows nothing of DWARF or CFI (libstate/module.h keeps those per
 * file).  libelf is included through elf_internal.h.
 */
#include "elf/elf.h"

#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "util/path.h"
#include "util/util.h"
#include "elf/elf_internal.h"
#include "elf/debug_plain.h"

#define ELF_DEFAULT_DEBUG_DIR "/usr/lib/debug"

/* libelf's version handshake sets a global of libelf's: once per process. */
static pthread_once_t libelf_once = PTHREAD_ONCE_INIT;
static bool libelf_ok;

static void
libelf_init(void)
{
    libelf_ok = elf_version(EV_CURRENT) != EV_NONE;
}

struct sw_elfcache *
sw_elfcache_new(const char *debug_dir)
{
    pthread_once(&libelf_once, libelf_init);
    if (!libelf_ok)
        return NULL;
    struct sw_elfcache *c = sw_calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->debug_dir = sw_strdup(debug_dir ? debug_dir : ELF_DEFAULT_DEBUG_DIR);
    if (c->debug_dir == NULL) {
        sw_free(c);
        return NULL;
    }
    pthread_mutex_init(&c->lock, NULL);
    return c;
}

static void
elf_destroy(struct sw_elf *e)
{
    sw_elf_file_close(&e->main);
    sw_elf_file_close(&e->dbg);
    sw_elf_syms_free(e);
    sw_free(e->segs);
    sw_free(e->debug_path);
    sw_free(e->dwarf_path);
    sw_free(e->path);
    pthread_mutex_destroy(&e->lock);
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
    pthread_mutex_destroy(&c->lock);
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

void
sw_elfcache_set_inflate_limits(struct sw_elfcache *c, const struct sw_inflate_limits *lim)
{
    c->inflate = *lim;
}

const struct sw_inflate_limits *
sw_elf_inflate_limits(const struct sw_elf *e)
{
    return &e->cache->inflate;
}

const char *
sw_elf_warning(const struct sw_elf *e)
{
    return e->inflate_warning[0] ? e->inflate_warning : NULL;
}

/* ---- the separate debug file -------------------------------------------- */

static bool
same_build_id(struct sw_elf *e, struct elf_file *f)
{
    const uint8_t *id;
    size_t len;

    sw_elf_file_build_id(f, &id, &len);
    if (len == 0 || e->build_id_len == 0)
        return true; /* nothing to compare: the path or the CRC decided */
    return len == e->build_id_len && memcmp(id, e->build_id, len) == 0;
}

/* Open PATH as E's debug file if it exists and matches (build-id, else CRC
 * when CRC is given).  A path named by a debug link (CRC given) is not
 * opened through a symbolic link: the link's name is the file's, and the
 * file's directory may be a sysroot's, whose links mean the target's paths.
 * Returns 1 when it became the debug file, 0 when it is absent or does not
 * match, SW_ENOMEM. */
static int
try_debug_file(struct sw_elf *e, const char *path, const uint32_t *crc)
{
    struct elf_file f = { .fd = -1 };
    struct sw_errbuf why;

    if (strcmp(path, e->path) == 0 || access(path, R_OK) != 0)
        return 0;
    if (sw_elf_file_open(&f, path, crc != NULL, &why) != 0) {
        sw_debug(SW_DBG_CACHE, "elf: %s: debug file not used: %s", e->path, why.msg);
        goto reject;
    }
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
        sw_elf_file_close(&f);
        return SW_ENOMEM;
    }
    e->dbg = f;
    sw_debug(SW_DBG_CACHE, "elf: %s: debug file %s", e->path, path);
    return 1;
reject:
    sw_elf_file_close(&f);
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
    /* A file name, looked for in the file's directories only: a link with a
     * '/' or "..", from a file the target may have served, could name any
     * file of the host, to be read and checksummed. */
    if (!sw_path_is_name(link, linklen)) {
        sw_debug(SW_DBG_CACHE, "elf: %s: .gnu_debuglink '%.*s' is not a file name; not followed",
                 e->path, (int)(linklen > 200 ? 200 : linklen), link);
        return 0;
    }
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

/* The file opened under KEY; an image (IMAGE not NULL) only when its bytes
 * are the same: walkers of different targets share a cache, and each
 * target's vDSO is its own.  IMAGE NULL and a file key: any entry. */
static struct sw_elf *
cache_find(struct sw_elfcache *c, const char *key, const void *image, size_t len)
{
    for (struct sw_elf *e = c->files; e; e = e->next) {
        if (strcmp(e->path, key) != 0)
            continue;
        if (image == NULL || (e->main.image != NULL && e->main.rawlen == len &&
                              memcmp(e->main.image, image, len) == 0))
            return e;
    }
    return NULL;
}

static int
elf_load(struct sw_elfcache *c, struct sw_elf *e, const void *image, size_t len,
         struct sw_errbuf *err)
{
    GElf_Ehdr eh;
    int rc;

    if (image != NULL)
        rc = sw_elf_file_open_mem(&e->main, e->path, image, len, err);
    else
        rc = sw_elf_file_open(&e->main, e->path, false, err);
    if (rc == 0)
        rc = sw_elf_file_check_header(&e->main, e->path, &eh, err);
    if (rc == 0)
        rc = sw_elf_segments_read(e, &eh, err);
    if (rc != 0)
        return rc;
    e->machine = eh.e_machine;
    e->flags = eh.e_flags;
    e->big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
    e->arch = arch_by_elf(eh.e_machine, eh.e_ident[EI_CLASS], eh.e_ident[EI_DATA]);
    e->is_dyn = eh.e_type == ET_DYN;
    e->entry = eh.e_entry;
    sw_elf_file_build_id(&e->main, &e->build_id, &e->build_id_len);
    if (find_debug_file(e, c->debug_dir, image != NULL) != 0)
        return sw_fail(err, SW_ENOMEM, "%s: out of memory looking for its debug file", e->path);
    /* Section headers only: nothing is inflated here.  The sections over
     * the limits stay compressed for good (sw_elf_section, the plain copy,
     * libdw in dwarf/dwarf.c), so that the walk goes on without them. */
    char why[160];
    if (!sw_elf_inflate_ok(e->main.elf, &c->inflate, why, sizeof why))
        snprintf(e->inflate_warning, sizeof e->inflate_warning, "%s: %s: not read", e->path, why);
    else if (e->dbg.elf != NULL && !sw_elf_inflate_ok(e->dbg.elf, &c->inflate, why, sizeof why))
        snprintf(e->inflate_warning, sizeof e->inflate_warning, "%s: %s: not read",
                 e->debug_path ? e->debug_path : e->path, why);
    if (e->inflate_warning[0])
        sw_debug(SW_DBG_CACHE, "elf: %s", e->inflate_warning);
    return 0;
}

/* Opening holds the cache's lock: a file is loaded once even when several
 * walkers ask for it at the same time. */
static int
cache_open_locked(struct sw_elfcache *c, const char *key, const void *image, size_t len,
                  struct sw_elf **out, struct sw_errbuf *err)
{
    struct sw_elf *e = cache_find(c, key, image, len);
    if (e != NULL) {
        *out = e;
        return 0;
    }
    e = sw_calloc(1, sizeof *e);
    if (e == NULL)
        return sw_fail(err, SW_ENOMEM, "%s: out of memory", key);
    pthread_mutex_init(&e->lock, NULL);
    e->main.fd = -1;
    e->dbg.fd = -1;
    e->cache = c;
    e->path = sw_strdup(key);
    if (e->path == NULL) {
        elf_destroy(e);
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

static int
cache_open(struct sw_elfcache *c, const char *key, const void *image, size_t len,
           struct sw_elf **out, struct sw_errbuf *err)
{
    if (c == NULL || key == NULL || out == NULL)
        return sw_fail(err, SW_EINVAL, "opening an ELF file: no cache or no path");
    pthread_mutex_lock(&c->lock);
    int rc = cache_open_locked(c, key, image, len, out, err);
    pthread_mutex_unlock(&c->lock);
    return rc;
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
    if (c == NULL || key == NULL)
        return NULL;
    pthread_mutex_lock(&c->lock);
    struct sw_elf *e = cache_find(c, key, NULL, 0);
    pthread_mutex_unlock(&c->lock);
    return e;
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

/* Under E's lock: the copy is made once, by the first walker that asks. */
const char *
sw_elf_dwarf_path(struct sw_elf *e)
{
    pthread_mutex_lock(&e->lock);
    if (!e->dwarf_path_tried && e->debug_path != NULL && e->cache->cache_dir != NULL &&
        !sw_env_get()->no_cache) {
        e->dwarf_path_tried = true;
        /* No memory for a copy: the debug file as it is. */
        (void)sw_debug_plain_path(e->cache->cache_dir, e->debug_path, e->build_id, e->build_id_len,
                                  &e->cache->inflate, &e->dwarf_path);
    }
    const char *path = e->dwarf_path ? e->dwarf_path : e->debug_path;
    pthread_mutex_unlock(&e->lock);
    return path;
}

bool
sw_elf_dwarf_ready(struct sw_elf *e)
{
    bool ready = true;
    pthread_mutex_lock(&e->lock);
    if (!e->dwarf_path_tried && e->debug_path != NULL && e->cache->cache_dir != NULL &&
        !sw_env_get()->no_cache) {
        char *copy = NULL;
        if (sw_debug_plain_existing(e->cache->cache_dir, e->build_id, e->build_id_len, &copy) !=
                0 ||
            copy == NULL) {
            ready = false;
        } else {
            e->dwarf_path = copy;
            e->dwarf_path_tried = true;
        }
    }
    pthread_mutex_unlock(&e->lock);
    return ready;
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

int
sw_elf_section(struct sw_elf *e, const char *name, bool from_debug, const uint8_t **data,
               size_t *len, sw_addr *addr)
{
    struct elf_file *f = from_debug ? &e->dbg : &e->main;
    GElf_Shdr sh;
    Elf_Data *d = NULL;

    if (f->elf == NULL)
        return SW_ENOENT;
    /* libelf reads and inflates sections on first use: one caller at a time. */
    pthread_mutex_lock(&e->lock);
    Elf_Scn *scn = sw_elf_find_section(f->elf, name, &sh);
    char why[160];
    /* Debian's debug files compress .debug_* (SHF_COMPRESSED, zlib);
     * decompressing once makes later elf_getdata calls return the bytes.
     * One over the cache's limits is as good as absent. */
    if (scn != NULL && sh.sh_type != SHT_NOBITS &&
        sw_elf_scn_inflate_ok(f->elf, scn, &sh, name, &e->cache->inflate, why, sizeof why) &&
        (!(sh.sh_flags & SHF_COMPRESSED) || elf_compress(scn, 0, 0) >= 0))
        d = elf_getdata(scn, NULL);
    pthread_mutex_unlock(&e->lock);
    if (d == NULL || d->d_buf == NULL)
        return SW_ENOENT;
    *data = d->d_buf;
    *len = d->d_size;
    *addr = sh.sh_addr;
    return 0;
}
