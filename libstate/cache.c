/* libstate/cache.c -- the cache directory kept honest: entries checked on use, a size limit.
 *
 * A file stored under a build-id came from some target, which may have lied:
 * the right build-id note and other symbols.  A hash kept at store time
 * would only vouch for what that target sent, so each use compares the copy
 * with the target's own file instead, where a walk reads (docs/design.md,
 * "The cache").  Not the fetching (libstate/fetch.c).
 */
#include "libstate/cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/path.h"
#include "util/util.h"

/* One read_file call compares at most this much (the backend splits it into
 * PacketSize preads). */
#define VERIFY_CHUNK (256u * 1024)
/* Ranges closer than this are compared as one (compare_sections). */
#define RANGE_JOIN_GAP 4096u
/* An entry used this recently is not evicted (sw_cache_evict). */
#define CACHE_IN_USE_SEC 60

/* Whether a section named NAME of type TYPE is read by a walk. */
static bool
section_read_by_walks(const char *name, GElf_Word type)
{
    static const char *const prefixes[] = { ".eh_frame",  ".debug_",    ".zdebug_",
                                            ".gnu_debug", ".gdb_index", ".symtab_shndx" };
    switch (type) {
    case SHT_SYMTAB:
    case SHT_DYNSYM:
    case SHT_STRTAB:
    case SHT_NOTE:
    case SHT_RELA:
    case SHT_REL:
    case SHT_DYNAMIC:
        return true;
    default:
        break;
    }
    for (size_t i = 0; name != NULL && i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    return false;
}

/* Compare LOCAL[OFF, OFF+LEN) with the target's file.  Returns 0, SW_EBADELF
 * (differs or ends early) or the backend's error, with the message in ERR. */
static int
compare_range(struct sw_proc *p, const char *target_path, const uint8_t *local, uint64_t off,
              uint64_t len, uint8_t *buf, struct sw_errbuf *err)
{
    while (len > 0) {
        size_t want = len > VERIFY_CHUNK ? VERIFY_CHUNK : (size_t)len, got = 0;
        int rc = p->ops->read_file(p, target_path, off, buf, want, &got);
        if (rc != 0)
            return sw_fail(err, rc, "%s", sw_proc_errmsg(p));
        if (got == 0 || got > want)
            return sw_fail(err, SW_EBADELF, "the target's file ends at %" PRIu64, off);
        if (memcmp(buf, local + off, got) != 0)
            return sw_fail(err, SW_EBADELF, "bytes differ at offset %" PRIu64 "..%" PRIu64, off,
                           off + got);
        off += got;
        len -= got;
    }
    return 0;
}

/* A byte range of the file to compare. */
struct range {
    uint64_t off, end;
};

static int
range_before(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Compare the ELF file IMAGE[0, SIZE) with the target's where walks read:
 * the ranges sorted, and joined across gaps of up to RANGE_JOIN_GAP bytes
 * (reading a gap costs less than the round trip a range's short tail would). */
static int
compare_sections(struct sw_proc *p, const char *target_path, uint8_t *image, size_t size,
                 uint8_t *buf, struct sw_errbuf *err)
{
    Elf *elf = elf_memory((char *)image, size);
    GElf_Ehdr eh;
    size_t shstrndx, shnum, n = 0;
    struct range *rs = NULL;
    int rc = 0;

    if (elf == NULL || elf_kind(elf) != ELF_K_ELF || gelf_getehdr(elf, &eh) == NULL ||
        elf_getshdrstrndx(elf, &shstrndx) != 0 || elf_getshdrnum(elf, &shnum) != 0) {
        rc = sw_fail(err, SW_EBADELF, "not an ELF file");
        goto out;
    }
    rs = sw_calloc(shnum + 2, sizeof *rs);
    if (rs == NULL) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto out;
    }
    rs[n++] = (struct range){ 0, size < 4096 ? size : 4096 };
    uint64_t shsize = (uint64_t)shnum * eh.e_shentsize;
    if (eh.e_shoff != 0 && eh.e_shoff <= size && shsize <= size - eh.e_shoff)
        rs[n++] = (struct range){ eh.e_shoff, eh.e_shoff + shsize };
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;
    while ((scn = elf_nextscn(elf, scn)) != NULL && n < shnum + 2) {
        if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type == SHT_NOBITS || sh.sh_offset > size ||
            sh.sh_size > size - sh.sh_offset)
            continue; /* libelf refuses such a section to the walk too */
        if (section_read_by_walks(elf_strptr(elf, shstrndx, sh.sh_name), sh.sh_type))
            rs[n++] = (struct range){ sh.sh_offset, sh.sh_offset + sh.sh_size };
    }
    qsort(rs, n, sizeof *rs, range_before);
    for (size_t i = 0; i < n && rc == 0;) {
        struct range r = rs[i++];
        while (i < n && rs[i].off <= r.end + RANGE_JOIN_GAP) {
            if (rs[i].end > r.end)
                r.end = rs[i].end;
            i++;
        }
        rc = compare_range(p, target_path, image, r.off, r.end - r.off, buf, err);
    }
out:
    sw_free(rs);
    elf_end(elf);
    return rc;
}

int
sw_cache_verify(struct sw_proc *p, const char *target_path, const char *path, struct sw_errbuf *err)
{
    struct stat st;
    struct sw_errbuf why;
    int fd = sw_path_open_regular(path, true, &st, err);
    if (fd < 0)
        return fd;
    if (p->ops->read_file == NULL) {
        close(fd);
        return sw_fail(err, SW_EUNSUP, "%s: no file access to the target to check it", path);
    }
    size_t size = (size_t)st.st_size;
    uint8_t *image = size ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (size == 0 || image == MAP_FAILED)
        return sw_fail(err, SW_EBADELF, "%s: empty or unreadable", path);
    uint8_t *buf = sw_malloc(VERIFY_CHUNK);
    int rc;
    if (buf == NULL) {
        rc = sw_fail(err, SW_ENOMEM, "checking %s: out of memory", path);
        goto out;
    }
    /* The size first: two bytes asked at SIZE - 1 must give one, the last. */
    size_t got = 0;
    rc = p->ops->read_file(p, target_path, size - 1, buf, 2, &got);
    if (rc != 0) {
        rc = sw_fail(err, rc, "checking %s against '%s': %s", path, target_path, sw_proc_errmsg(p));
        goto out;
    }
    if (got != 1 || buf[0] != image[size - 1]) {
        rc = sw_fail(err, SW_EBADELF, "%s: not the target's '%s' (its size is not %zu bytes)", path,
                     target_path, size);
        goto out;
    }
    rc = compare_sections(p, target_path, image, size, buf, &why);
    if (rc == SW_EBADELF)
        rc = sw_fail(err, rc, "%s: not the target's '%s' (%s)", path, target_path, why.msg);
    else if (rc != 0)
        rc = sw_fail(err, rc, "checking %s against '%s': %s", path, target_path, why.msg);
out:
    sw_free(buf);
    munmap(image, size);
    return rc;
}

/* Whether NAME is an entry's directory name: a build-id's hex digits. */
static bool
entry_name(const char *name)
{
    size_t n = strlen(name);
    if (n < 2 || n > 2 * 64 || n % 2 != 0)
        return false;
    return strspn(name, "0123456789abcdef") == n;
}

/* The regular files' total size in DIR (not descending: entries are flat). */
static uint64_t
entry_bytes(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    uint64_t total = 0;
    char path[4096];

    if (d == NULL)
        return 0;
    while ((de = readdir(d)) != NULL) {
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode))
            total += (uint64_t)st.st_size;
    }
    closedir(d);
    return total;
}

void
sw_cache_drop(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char path[4096];

    if (d == NULL)
        return;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        unlink(path); /* a directory here is not ours: left, and so is DIR */
    }
    closedir(d);
    rmdir(dir);
}

void
sw_cache_touch(const char *dir)
{
    (void)utimensat(AT_FDCWD, dir, NULL, 0); /* a read-only cache still works */
}

struct entry {
    char *dir;
    uint64_t bytes;
    struct timespec used;
};

static int
entry_older(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    if (x->used.tv_sec != y->used.tv_sec)
        return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
    if (x->used.tv_nsec != y->used.tv_nsec)
        return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
    return strcmp(x->dir, y->dir);
}

size_t
sw_cache_evict(const char *cache_dir, uint64_t max_bytes, const char *keep)
{
    DIR *d = opendir(cache_dir);
    struct dirent *de;
    struct entry *es = NULL;
    size_t n = 0, cap = 0, removed = 0;
    uint64_t total = 0;

    if (d == NULL)
        return 0;
    while ((de = readdir(d)) != NULL) {
        struct stat st;
        if (!entry_name(de->d_name))
            continue;
        size_t len = strlen(cache_dir) + 1 + strlen(de->d_name) + 1;
        char *dir = sw_malloc(len);
        if (dir == NULL)
            break; /* out of memory: evict what is known */
        snprintf(dir, len, "%s/%s", cache_dir, de->d_name);
        if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
            sw_free(dir);
            continue;
        }
        if (n == cap) {
            size_t grown_cap = cap ? 2 * cap : 64;
            struct entry *grown = sw_realloc(es, grown_cap * sizeof *grown);
            if (grown == NULL) {
                sw_free(dir);
                break;
            }
            es = grown;
            cap = grown_cap;
        }
        es[n] = (struct entry){ dir, entry_bytes(dir), st.st_mtim };
        total += es[n].bytes;
        n++;
    }
    closedir(d);
    if (n > 1)
        qsort(es, n, sizeof *es, entry_older);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    for (size_t i = 0; i < n && total > max_bytes; i++) {
        /* An entry used within the last minute may be open by a run still
         * going (this one, or another rspwalk), which reopens its files by
         * path (CFI, DWARF): kept, the limit overshot until later. */
        if ((keep != NULL && strcmp(es[i].dir, keep) == 0) ||
            es[i].used.tv_sec + CACHE_IN_USE_SEC > now.tv_sec)
            continue;
        sw_debug(SW_DBG_CACHE,
                 "cache: %s evicted (%" PRIu64 " bytes; the cache holds %" PRIu64
                 " of at most %" PRIu64 ")",
                 es[i].dir, es[i].bytes, total, max_bytes);
        sw_cache_drop(es[i].dir);
        total -= es[i].bytes;
        removed++;
    }
    for (size_t i = 0; i < n; i++)
        sw_free(es[i].dir);
    sw_free(es);
    return removed;
}
