/* libstate/fetch.c -- files from the target, kept by build-id.
 *
 * Reads a module's file through the ProcessState's read_file (RSP vFile),
 * takes its build-id from the bytes (elf/image.c: the note sits in the first
 * page, and a copy need not be written out to be identified) and keeps it
 * under CACHE/<build-id hex>/<basename>, checked against the target at
 * each later use (libstate/cache.c).  Not the module list (libstate.c)
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

#include "util/path.h"
#include "util/util.h"
#include "elf/image.h"
#include "libstate/cache.h"
/* The first read: the ELF header, the program headers and the build-id
 * note are in the first page of every file ld lays out (x86_64 libc 2.36:
 * the note ends at 0x3b4).  A file that puts them further is read again,
 * up to HEAD_MAX bytes. */
#define HEAD_BYTES 4096u
#define HEAD_MAX   (64u * 1024)
/* Whole files are read in chunks of this size: each is one read_file call,
 * which the RSP backend splits into PacketSize preads. */
#define CHUNK_BYTES (1024u * 1024)

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
        rc = sw_elf_image_build_id(head, got, &found, &n, &need);
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

/* Write LEN bytes of DATA to FD.  Returns 0 or an errno value. */
static int
write_all(int fd, const uint8_t *data, size_t len)
{
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : EIO;
        off += (size_t)w;
    }
    return 0;
}

/* The whole file PATH from the target onto *FD, chunk by chunk (memory: one
 * chunk, whatever the file's size); DIR and the temporary file TMP (a
 * mkstemp template) are made once the first read succeeded, so that a
 * target without file access leaves no directory behind; *FD -1 before.
 * Its first HEAD_MAX bytes kept in HEAD
 * (*HEAD_LEN) for the build-id check.  At most MAX_BYTES: a stub whose
 * reads never reach the end of the file is cut off there (the backend also
 * stops at the size the stub's own fstat gives, targets/rsp_proc.c). */
static int
read_whole(struct sw_proc *p, const char *path, char *dir, char *tmp, int *fd, uint64_t max_bytes,
           uint8_t *head, size_t *head_len, uint64_t *total, struct sw_errbuf *err)
{
    uint8_t *buf = sw_malloc(CHUNK_BYTES);
    uint64_t have = 0;
    int rc = 0;

    *head_len = 0;
    if (buf == NULL)
        return sw_fail(err, SW_ENOMEM, "reading '%s' from the target: out of memory", path);
    for (;;) {
        if (have >= max_bytes) {
            rc = sw_fail(err, SW_EBADELF,
                         "reading '%s' from the target: larger than the limit of %llu bytes", path,
                         (unsigned long long)max_bytes);
            break;
        }
        size_t got = 0;
        rc = target_read(p, path, have, buf, CHUNK_BYTES, &got, err);
        if (rc != 0)
            break;
        if (got > CHUNK_BYTES)
            got = CHUNK_BYTES; /* a backend's lie is not trusted past the buffer */
        if (*fd < 0) {
            if ((rc = sw_dirs_make(dir, err)) != 0)
                break;
            if ((*fd = mkstemp(tmp)) < 0) {
                rc = sw_fail(err, SW_EIO, "storing '%s': %s", path, strerror(errno));
                break;
            }
        }
        if (*head_len < HEAD_MAX) {
            size_t take = HEAD_MAX - *head_len < got ? HEAD_MAX - *head_len : got;
            memcpy(head + *head_len, buf, take);
            *head_len += take;
        }
        int e = write_all(*fd, buf, got);
        if (e != 0) {
            rc = sw_fail(err, SW_EIO, "storing '%s': %s", path, strerror(e));
            break;
        }
        have += got;
        if (got < CHUNK_BYTES)
            break;
    }
    sw_free(buf);
    *total = have;
    return rc;
}

/* Fetch PATH into a temporary file in DIR renamed to FINAL once its build-id
 * is ID. */
static int
fetch_into(struct sw_proc *p, const char *path, char *dir, const char *final, const uint8_t *id,
           size_t id_len, uint64_t max_bytes, struct sw_errbuf *err)
{
    size_t dl = strlen(dir);
    char *tmp = sw_malloc(dl + sizeof "/.fetch-XXXXXX");
    uint8_t *head = sw_malloc(HEAD_MAX);
    int rc = 0, fd = -1;
    if (tmp == NULL || head == NULL) {
        rc = sw_fail(err, SW_ENOMEM, "storing %s: out of memory", final);
        goto out;
    }
    memcpy(tmp, dir, dl);
    memcpy(tmp + dl, "/.fetch-XXXXXX", sizeof "/.fetch-XXXXXX");
    size_t head_len = 0;
    uint64_t len = 0;
    rc = read_whole(p, path, dir, tmp, &fd, max_bytes, head, &head_len, &len, err);
    if (rc != 0)
        goto out;
    const uint8_t *got_id;
    size_t got_len;
    if (rc == 0 && (sw_elf_image_build_id(head, head_len, &got_id, &got_len, NULL) != 0 ||
                    got_len != id_len || memcmp(got_id, id, id_len) != 0))
        rc = sw_fail(err, SW_EBADELF,
                     "fetching '%s': the file read has another build-id than its first page "
                     "(replaced while reading?)",
                     path);
    int e = 0;
    if (rc == 0 && fchmod(fd, 0600) != 0)
        e = errno;
    if (close(fd) != 0 && e == 0)
        e = errno;
    fd = -1;
    if (rc == 0 && e == 0 && rename(tmp, final) != 0)
        e = errno;
    if (rc == 0 && e != 0)
        rc = sw_fail(err, SW_EIO, "storing %s: %s", final, strerror(e));
    if (rc != 0)
        unlink(tmp); /* made, then not renamed into place */
    else
        sw_debug(SW_DBG_CACHE, "libstate: %s: fetched %llu bytes into %s", path,
                 (unsigned long long)len, final);
out:
    if (fd >= 0) {
        close(fd); /* read_whole failed after making it */
        unlink(tmp);
    }
    sw_free(tmp);
    sw_free(head);
    return rc;
}

/* CACHE_DIR itself mode 0700 when it is ours and open to others: a cache
 * made by an older rspwalk, or by hand. */
static void
cache_dir_close_up(const char *cache_dir)
{
    struct stat st;
    if (stat(cache_dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
        (st.st_mode & 077) != 0 && chmod(cache_dir, 0700) == 0)
        sw_debug(SW_DBG_CACHE, "cache: %s made mode 0700", cache_dir);
}

int
sw_fetch_file(struct sw_proc *p, const char *cache_dir, uint64_t max_bytes, const char *target_path,
              const uint8_t *id, size_t id_len, uint64_t file_max_bytes, char **path,
              struct sw_errbuf *err, struct sw_errbuf *dropped)
{
    const char *base = strrchr(target_path, '/');
    base = base ? base + 1 : target_path;
    sw_err_clear(dropped);
    if (!sw_path_is_name(base, strlen(base)) || id_len == 0 || id_len > SW_FETCH_MAX_BUILD_ID)
        return sw_fail(err, SW_EINVAL, "fetching '%s': no file name or build-id", target_path);
    size_t cl = strlen(cache_dir), bl = strlen(base);
    char *dir = sw_malloc(cl + 1 + 2 * id_len + 1);
    char *final = sw_malloc(cl + 1 + 2 * id_len + 1 + bl + 1);
    int rc;

    if (file_max_bytes == 0)
        file_max_bytes = SW_FETCH_MAX_FILE_BYTES;
    if (dir == NULL || final == NULL) {
        rc = sw_fail(err, SW_ENOMEM, "fetching '%s': out of memory", target_path);
        goto out;
    }
    memcpy(dir, cache_dir, cl);
    dir[cl] = '/';
    sw_hex_encode(id, id_len, dir + cl + 1);
    dir[cl + 1 + 2 * id_len] = '\0';
    snprintf(final, cl + 1 + 2 * id_len + 1 + bl + 1, "%s/%s", dir, base);
    struct stat st;
    if (lstat(final, &st) == 0) {
        struct sw_errbuf why;
        rc = sw_cache_verify(p, target_path, final, &why);
        if (rc == 0) {
            sw_debug(SW_DBG_CACHE, "libstate: %s: cached as %s, checked against the target",
                     target_path, final);
            sw_cache_touch(dir);
            goto done;
        }
        if (rc != SW_EBADELF) {
            /* Not settled (the link, the target's file system, this
             * host's): the entry is kept, and not used this time. */
            rc = sw_err_copy(err, &why);
            goto out;
        }
        /* Another file than the target's under its build-id: a target that
         * lied when it was stored, or a damaged copy.  The entry goes, with
         * what was made from it, and the target's file is read again. */
        sw_fail(dropped, rc, "%s; the cached copy was removed and fetched again", why.msg);
        sw_cache_drop(dir);
    }
    rc = fetch_into(p, target_path, dir, final, id, id_len, file_max_bytes, err);
    if (rc != 0)
        goto out;
    cache_dir_close_up(cache_dir);
    sw_cache_evict(cache_dir, max_bytes ? max_bytes : SW_CACHE_DEFAULT_MAX_BYTES, dir);
done:
    *path = final;
    final = NULL;
out:
    sw_free(dir);
    sw_free(final);
    return rc;
}

char *
sw_fetch_default_cache_dir(void)
{
    const char *xdg = sw_env_get()->xdg_cache_home, *home = sw_env_get()->home;
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
