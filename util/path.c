/* util/path.c -- paths a target names, confined to the directories given for them.
 *
 * Normalising by text, resolving under a sysroot as a chroot would (every
 * symbolic link followed by hand, so none can lead out), and opening only
 * regular files without blocking.  Not which directories are searched
 * (libstate/files.c, elf/elf.c).
 */
#include "util/path.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

bool
sw_path_is_name(const char *name, size_t len)
{
    if (len == 0 || (len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
        return false;
    for (size_t i = 0; i < len; i++)
        if (name[i] == '/' || name[i] == '\0')
            return false;
    return true;
}

/* Drop the last component of the absolute path S[0, *LEN) ("" is "/"). */
static void
drop_last(const char *s, size_t *len)
{
    while (*len > 0 && s[*len - 1] != '/')
        (*len)--;
    if (*len > 0)
        (*len)--; /* the '/' before it */
}

int
sw_path_normalize(const char *path, char **out)
{
    size_t n = strlen(path), len = 0;
    char *s = sw_malloc(n + 2);

    *out = NULL;
    if (s == NULL)
        return SW_ENOMEM;
    for (const char *p = path; *p != '\0';) {
        size_t c = strcspn(p, "/");
        if (c == 2 && p[0] == '.' && p[1] == '.') {
            if (len == 0) {
                sw_free(s);
                return SW_EINVAL;
            }
            drop_last(s, &len);
        } else if (c > 0 && !(c == 1 && p[0] == '.')) {
            s[len++] = '/';
            memcpy(s + len, p, c);
            len += c;
        }
        p += c + (p[c] == '/');
    }
    if (len == 0)
        s[len++] = '/';
    s[len] = '\0';
    *out = s;
    return 0;
}

/* A growable string. */
struct pstr {
    char *s;
    size_t len, cap;
};

static int
pstr_put(struct pstr *b, size_t at, const char *p, size_t n)
{
    if (at + n + 1 > b->cap) {
        size_t cap = (at + n + 1) * 2;
        char *grown = sw_realloc(b->s, cap);
        if (grown == NULL)
            return SW_ENOMEM;
        b->s = grown;
        b->cap = cap;
    }
    memcpy(b->s + at, p, n);
    b->len = at + n;
    b->s[b->len] = '\0';
    return 0;
}

int
sw_path_in_root(const char *root, const char *name, char **out, struct sw_errbuf *err)
{
    struct pstr done = { 0 }, todo = { 0 }, next = { 0 };
    size_t rl = root ? strlen(root) : 0;
    unsigned links = 0;
    bool missing = false;
    char *norm = NULL;
    int rc;

    *out = NULL;
    while (rl > 0 && root[rl - 1] == '/')
        rl--;
    if (rl == 0) {
        /* The host's own paths: nothing to confine them to, the kernel
         * resolves them, and a relative one stays relative to the working
         * directory (a module named by a relative path). */
        *out = sw_strdup(name);
        return *out ? 0 : sw_fail(err, SW_ENOMEM, "'%s': out of memory", name);
    }
    rc = sw_path_normalize(name, &norm);
    if (rc == SW_EINVAL)
        return sw_fail(err, SW_EINVAL, "'%s': names a path above the sysroot", name);
    if (rc != 0)
        return sw_fail(err, rc, "'%s': out of memory", name);
    /* DONE: ROOT then the components resolved so far; TODO: those left. */
    if ((rc = pstr_put(&done, 0, root, rl)) != 0 ||
        (rc = pstr_put(&todo, 0, name, strlen(name))) != 0)
        goto nomem;
    size_t pos = 0;
    while (pos < todo.len) {
        const char *p = todo.s + pos;
        size_t c = strcspn(p, "/");
        pos += c + (p[c] == '/');
        if (c == 0 || (c == 1 && p[0] == '.'))
            continue;
        if (c == 2 && p[0] == '.' && p[1] == '.') {
            /* A chroot's "/.." is "/": never above ROOT. */
            if (done.len > rl)
                drop_last(done.s, &done.len);
            done.s[done.len] = '\0';
            continue;
        }
        size_t at = done.len;
        if ((rc = pstr_put(&done, at, "/", 1)) != 0 || (rc = pstr_put(&done, at + 1, p, c)) != 0)
            goto nomem;
        struct stat st;
        if (missing || lstat(done.s, &st) != 0) {
            missing = true; /* the rest cannot be links: it is taken as text */
            continue;
        }
        if (!S_ISLNK(st.st_mode))
            continue;
        if (++links > SW_PATH_MAX_LINKS) {
            rc = sw_fail(err, SW_EINVAL, "'%s': more than %d symbolic links under %s", name,
                         SW_PATH_MAX_LINKS, root);
            goto out;
        }
        char target[4096];
        ssize_t tl = readlink(done.s, target, sizeof target);
        if (tl <= 0 || (size_t)tl >= sizeof target) {
            /* Followed by the kernel, it could lead anywhere. */
            rc = sw_fail(err, SW_EINVAL, "'%s': a symbolic link under %s cannot be read", name,
                         root);
            goto out;
        }
        /* The link replaces its component: an absolute one restarts at ROOT. */
        done.len = at;
        if (target[0] == '/')
            done.len = rl;
        done.s[done.len] = '\0';
        if ((rc = pstr_put(&next, 0, target, (size_t)tl)) != 0 ||
            (rc = pstr_put(&next, next.len, "/", 1)) != 0 ||
            (rc = pstr_put(&next, next.len, todo.s + pos, todo.len - pos)) != 0)
            goto nomem;
        struct pstr swap = todo;
        todo = next;
        next = swap;
        pos = 0;
    }
    *out = done.s;
    done.s = NULL;
    rc = 0;
    goto out;
nomem:
    rc = sw_fail(err, SW_ENOMEM, "'%s': out of memory", name);
out:
    sw_free(done.s);
    sw_free(todo.s);
    sw_free(next.s);
    sw_free(norm);
    return rc;
}

int
sw_path_open_regular(const char *path, bool nofollow, struct stat *st, struct sw_errbuf *err)
{
    struct stat own;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (nofollow ? O_NOFOLLOW : 0));

    if (st == NULL)
        st = &own;
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return sw_fail(err, SW_ENOENT, "%s: no such file", path);
        if (errno == ELOOP && nofollow)
            return sw_fail(err, SW_EBADELF, "%s: a symbolic link, not followed here", path);
        return sw_fail(err, SW_EIO, "%s: %s", path, strerror(errno));
    }
    if (fstat(fd, st) != 0) {
        int e = errno;
        close(fd);
        return sw_fail(err, SW_EIO, "%s: %s", path, strerror(e));
    }
    if (!S_ISREG(st->st_mode)) {
        close(fd);
        return sw_fail(err, SW_EBADELF, "%s: not a regular file", path);
    }
    return fd;
}
