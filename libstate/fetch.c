/* libstate/fetch.c -- files from the target, kept by build-id.
 *
 * Reads a module's file through the ProcessState's read_file (RSP vFile),
 * takes its build-id from the bytes (no libelf: the note sits in the first
 * page, and a copy need not be written out to be identified) and keeps it
 * under CACHE/<build-id hex>/<basename>.  Not the module list (libstate.c)
 * and not the ELF cache (elf/elf.c), which opens what this returns.
 */
#include "libstate/fetch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"
#include "walker/walker_internal.h"

/* ELF constants (the System V gABI, elf.h); libelf stays in elf/elf.c. */
#define ELFCLASS32      1
#define ELFCLASS64      2
#define ELFDATA2LSB     1
#define ELFDATA2MSB     2
#define PT_NOTE         4
#define NT_GNU_BUILD_ID 3
/* The first read: the ELF header, the program headers and the build-id
 * note are in the first page of every file ld lays out (x86_64 libc 2.36:
 * the note ends at 0x3b4).  A file that puts them further is read again,
 * up to HEAD_MAX bytes. */
#define HEAD_BYTES 4096u
#define HEAD_MAX   (64u * 1024)
/* Whole files are read in chunks of this size: each is one read_file call,
 * which the RSP backend splits into PacketSize preads. */
#define CHUNK_BYTES (1024u * 1024)

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
            descsz <= SW_FETCH_MAX_BUILD_ID) {
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
 * sw_fetch_build_id_of_image for *NEED and the result. */
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
sw_fetch_build_id_of_image(const uint8_t *image, size_t len, const uint8_t **id, size_t *id_len,
                           size_t *need)
{
    struct note_at at;
    int rc = find_build_id_note(image, len, &at, need);
    *id = at.id;
    *id_len = at.id_len;
    return rc;
}

int
sw_fetch_build_id_note(const uint8_t *image, size_t len, sw_addr *vaddr, const uint8_t **note,
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

/* Read up to LEN bytes at OFFSET of PATH on the target.  The backend's
 * message is copied into ERR. */
static int
target_read(struct sw_proc *p, const char *path, uint64_t offset, void *buf, size_t len,
            size_t *got, struct sw_errbuf *err)
{
    if (p->ops->read_file == NULL)
        return sw_fail(err, SW_EUNSUP, "reading '%s' from the target: not offered", path);
    *got = 0;
    int rc = p->ops->read_file(p, path, offset, buf, len, got);
    if (rc != 0)
        return sw_fail(err, rc, "%s", sw_proc_errmsg(p));
    return 0;
}

int
sw_fetch_target_build_id(struct sw_proc *p, const char *target_path,
                         uint8_t id[SW_FETCH_MAX_BUILD_ID], size_t *id_len, struct sw_errbuf *err)
{
    uint8_t *head = sw_malloc(HEAD_MAX);
    size_t got = 0, need = HEAD_BYTES, n = 0;
    const uint8_t *found = NULL;
    int rc = 0;

    *id_len = 0;
    if (head == NULL)
        return sw_fail(err, SW_ENOMEM, "reading '%s' from the target: out of memory", target_path);
    /* The first page, then once more if the headers say the note is further. */
    for (int round = 0; round < 2 && need > got && need <= HEAD_MAX; round++) {
        size_t more = 0;
        rc = target_read(p, target_path, got, head + got, need - got, &more, err);
        if (rc != 0)
            break;
        got += more;
        bool eof = got < need;
        rc = sw_fetch_build_id_of_image(head, got, &found, &n, &need);
        if (rc != 0) {
            rc = sw_fail(err, rc, "reading '%s' from the target: not an ELF file", target_path);
            break;
        }
        if (found != NULL || eof)
            break;
    }
    if (rc == 0 && found != NULL) {
        memcpy(id, found, n);
        *id_len = n;
    }
    sw_free(head);
    return rc;
}

int
sw_fetch_make_dirs(char *path, struct sw_errbuf *err)
{
    for (char *s = path + 1;; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char c = *s;
        *s = '\0';
        int r = mkdir(path, 0755);
        int e = errno;
        *s = c;
        if (r != 0 && e != EEXIST) {
            char what[256];
            snprintf(what, sizeof what, "%.*s", (int)(s - path), path);
            return sw_fail(err, SW_EIO, "creating the cache directory %s: %s", what, strerror(e));
        }
        if (c == '\0')
            return 0;
    }
}

/* The whole file PATH from the target: *DATA (free with sw_free), *LEN. */
static int
read_whole(struct sw_proc *p, const char *path, uint8_t **data, size_t *len, struct sw_errbuf *err)
{
    uint8_t *buf = NULL;
    size_t have = 0, cap = 0;

    for (;;) {
        if (have == cap) {
            if (cap >= SW_FETCH_MAX_FILE_BYTES) {
                sw_free(buf);
                return sw_fail(err, SW_EBADELF,
                               "reading '%s' from the target: larger than %u bytes", path,
                               SW_FETCH_MAX_FILE_BYTES);
            }
            uint8_t *grown = sw_realloc(buf, cap + CHUNK_BYTES);
            if (grown == NULL) {
                sw_free(buf);
                return sw_fail(err, SW_ENOMEM, "reading '%s' from the target: out of memory", path);
            }
            buf = grown;
            cap += CHUNK_BYTES;
        }
        size_t got = 0;
        int rc = target_read(p, path, have, buf + have, cap - have, &got, err);
        if (rc != 0) {
            sw_free(buf);
            return rc;
        }
        have += got;
        if (got == 0 || have < cap)
            break;
    }
    *data = buf;
    *len = have;
    return 0;
}

/* Write DATA to a temporary file in DIR and rename it to FINAL. */
static int
store(const char *dir, const char *final, const uint8_t *data, size_t len, struct sw_errbuf *err)
{
    size_t dl = strlen(dir);
    char *tmp = sw_malloc(dl + sizeof "/.fetch-XXXXXX");
    if (tmp == NULL)
        return sw_fail(err, SW_ENOMEM, "storing %s: out of memory", final);
    memcpy(tmp, dir, dl);
    memcpy(tmp + dl, "/.fetch-XXXXXX", sizeof "/.fetch-XXXXXX");
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int rc = sw_fail(err, SW_EIO, "storing %s: %s", final, strerror(errno));
        sw_free(tmp);
        return rc;
    }
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    int e = off < len ? errno : 0;
    if (fchmod(fd, 0644) != 0 && e == 0)
        e = errno;
    if (close(fd) != 0 && e == 0)
        e = errno;
    if (e == 0 && rename(tmp, final) != 0)
        e = errno;
    int rc = 0;
    if (e != 0) {
        unlink(tmp);
        rc = sw_fail(err, SW_EIO, "storing %s: %s", final, strerror(e ? e : EIO));
    }
    sw_free(tmp);
    return rc;
}

int
sw_fetch_file(struct sw_proc *p, const char *cache_dir, const char *target_path, const uint8_t *id,
              size_t id_len, char **path, struct sw_errbuf *err)
{
    const char *base = strrchr(target_path, '/');
    base = base ? base + 1 : target_path;
    if (*base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0 || id_len == 0 ||
        id_len > SW_FETCH_MAX_BUILD_ID)
        return sw_fail(err, SW_EINVAL, "fetching '%s': no file name or build-id", target_path);
    size_t cl = strlen(cache_dir), bl = strlen(base);
    char *dir = sw_malloc(cl + 1 + 2 * id_len + 1);
    char *final = sw_malloc(cl + 1 + 2 * id_len + 1 + bl + 1);
    uint8_t *data = NULL;
    size_t len = 0;
    int rc;

    if (dir == NULL || final == NULL) {
        rc = sw_fail(err, SW_ENOMEM, "fetching '%s': out of memory", target_path);
        goto out;
    }
    memcpy(dir, cache_dir, cl);
    dir[cl] = '/';
    sw_hex_encode(id, id_len, dir + cl + 1);
    dir[cl + 1 + 2 * id_len] = '\0';
    snprintf(final, cl + 1 + 2 * id_len + 1 + bl + 1, "%s/%s", dir, base);
    if (access(final, F_OK) == 0) {
        sw_debug(SW_DBG_CACHE, "libstate: %s: cached as %s", target_path, final);
        rc = 0;
        goto done;
    }
    rc = read_whole(p, target_path, &data, &len, err);
    if (rc != 0)
        goto out;
    const uint8_t *got_id;
    size_t got_len;
    if (sw_fetch_build_id_of_image(data, len, &got_id, &got_len, NULL) != 0 || got_len != id_len ||
        memcmp(got_id, id, id_len) != 0) {
        rc = sw_fail(err, SW_EBADELF,
                     "fetching '%s': the file read has another build-id than its first page "
                     "(replaced while reading?)",
                     target_path);
        goto out;
    }
    rc = sw_fetch_make_dirs(dir, err);
    if (rc == 0)
        rc = store(dir, final, data, len, err);
    if (rc != 0)
        goto out;
    sw_debug(SW_DBG_CACHE, "libstate: %s: fetched %zu bytes into %s", target_path, len, final);
done:
    *path = final;
    final = NULL;
out:
    sw_free(data);
    sw_free(dir);
    sw_free(final);
    return rc;
}

char *
sw_fetch_default_cache_dir(void)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    const char *base, *suffix;

    /* The XDG Base Directory spec: a relative $XDG_CACHE_HOME is invalid
     * and is ignored. */
    if (xdg != NULL && xdg[0] == '/') {
        base = xdg;
        suffix = "/rspwalk";
    } else if (home != NULL && home[0] == '/') {
        base = home;
        suffix = "/.cache/rspwalk";
    } else {
        return NULL;
    }
    size_t bl = strlen(base), sl = strlen(suffix);
    char *s = sw_malloc(bl + sl + 1);
    if (s == NULL)
        return NULL;
    memcpy(s, base, bl);
    memcpy(s + bl, suffix, sl + 1);
    return s;
}
