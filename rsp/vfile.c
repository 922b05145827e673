/* rsp/vfile.c -- Host I/O: reading the target's files with vFile packets.
 *
 * The gdb manual ("Host I/O Packets"): "vFile:open:HEXPATH,FLAGS,MODE", "vFile:pread:FD,COUNT,
 * OFFSET", "vFile:close:FD", "vFile:fstat:FD", "vFile:setfs:PID"; replies
 * "F<result>[,<errno>][;<binary attachment>]" with hex numbers, the
 * attachment '}'-escaped.  An empty reply means the stub has no Host I/O (the
 * session remembers it).  Not a file cache: libstate decides what to fetch.
 */
#include "rsp/session.h"

#include <stdio.h>
#include <string.h>

#include "rsp/cursor.h"

/* File-I/O errno values (gdb manual, "Errno Values"): the ones worth naming. */
static const struct {
    int64_t num;
    const char *name;
} fio_errnos[] = {
    { 1, "EPERM" },   { 2, "ENOENT" },  { 4, "EINTR" },   { 9, "EBADF" },         { 13, "EACCES" },
    { 14, "EFAULT" }, { 16, "EBUSY" },  { 17, "EEXIST" }, { 19, "ENODEV" },       { 20, "ENOTDIR" },
    { 21, "EISDIR" }, { 22, "EINVAL" }, { 23, "ENFILE" }, { 24, "EMFILE" },       { 27, "EFBIG" },
    { 28, "ENOSPC" }, { 29, "ESPIPE" }, { 30, "EROFS" },  { 91, "ENAMETOOLONG" },
};

/* The File-I/O stat size is a 64-bit big-endian field at this offset (gdb
 * manual, "struct stat": dev, ino, mode, nlink, uid, gid, rdev as 4 bytes). */
#define FIO_STAT_SIZE_OFF 28
#define FIO_STAT_LEN      64
/* Bytes asked for in one pread, below PacketSize: the stub escapes its reply
 * to fit (gdbserver clamps), so this is an upper bound. */
#define PREAD_SLACK 16

static const char *
fio_errno_name(int64_t e)
{
    for (size_t i = 0; i < sizeof fio_errnos / sizeof fio_errnos[0]; i++)
        if (fio_errnos[i].num == e)
            return fio_errnos[i].name;
    return "error";
}

/* A parsed F reply: RESULT, ERRNO (0 if absent) and the attachment (escaped
 * bytes after ';', unescaped in place), all within R. */
struct fio_reply {
    int64_t result;
    int64_t err;
    uint8_t *data;
    size_t len;
};

static int
fio_parse(struct rsp_session *s, const struct rsp_reply *r, const char *what, struct fio_reply *out)
{
    struct rsp_cur c;
    memset(out, 0, sizeof *out);
    rsp_cur_init(&c, what, r->p, r->len);
    if (!rsp_cur_lit(&c, 'F'))
        return sw_fail(&s->err, SW_EPROTO, "%s: reply '%.*s' does not start with 'F'", what,
                       (int)(r->len > 40 ? 40 : r->len), r->p);
    out->result = rsp_cur_shex(&c, 16);
    if (rsp_cur_accept(&c, ','))
        out->err = rsp_cur_shex(&c, 16);
    if (c.failed)
        return sw_fail(&s->err, SW_EPROTO, "%s: malformed reply '%.*s' at offset %zu", what,
                       (int)(r->len > 40 ? 40 : r->len), r->p, rsp_cur_offset(&c));
    size_t off = rsp_cur_offset(&c);
    if (off < r->len) {
        if (r->p[off] != ';')
            return sw_fail(&s->err, SW_EPROTO, "%s: unexpected '%c' at offset %zu of the reply",
                           what, r->p[off], off);
        /* The decoder's buffer is ours until the next exchange. */
        uint8_t *att = (uint8_t *)r->p + off + 1;
        long n = rsp_unescape(att, r->len - off - 1);
        if (n < 0)
            return sw_fail(&s->err, SW_EPROTO, "%s: attachment ends in a lone '}'", what);
        out->data = att;
        out->len = (size_t)n;
    }
    if (out->result < 0)
        return sw_fail(&s->err, out->err == 2 ? SW_ENOENT : SW_ESTUB,
                       "%s: the stub says %s (File-I/O errno %lld)", what, fio_errno_name(out->err),
                       (long long)out->err);
    return 0;
}

int
rsp_vfile_setfs(struct rsp_session *s, int64_t pid)
{
    struct rsp_reply r;
    struct fio_reply f;
    char what[64];
    if (s->vfile_fs_valid && s->vfile_fs == pid)
        return 0;
    snprintf(what, sizeof what, "vFile:setfs:%llx", (unsigned long long)pid);
    int rc = rsp_requestf(&s->x, RSP_PKT_VFILE_SETFS, &r, "%s", what);
    if (rc < 0)
        return rc;
    if ((rc = fio_parse(s, &r, what, &f)) < 0)
        return rc;
    s->vfile_fs = pid;
    s->vfile_fs_valid = true;
    return 0;
}

bool
rsp_vfile_supported(struct rsp_session *s)
{
    if (s->x.unsup[RSP_PKT_VFILE_OPEN] || s->x.unsup[RSP_PKT_VFILE_PREAD])
        return false;
    if (s->x.unsup[RSP_PKT_VFILE_SETFS])
        return false; /* every stub with Host I/O in gdb 11+ has setfs */
    if (s->vfile_fs_valid)
        return true;
    /* The probe: the stub's own view, which every Host I/O stub accepts. */
    int rc = rsp_vfile_setfs(s, 0);
    return rc == 0;
}

int
rsp_vfile_open(struct rsp_session *s, const char *path, int flags, unsigned mode, int *fd)
{
    struct sw_buf b;
    struct rsp_reply r;
    struct fio_reply f;
    char what[300];
    size_t plen = strlen(path);
    int rc;

    snprintf(what, sizeof what, "vFile:open '%s'", path);
    if (plen == 0 || plen > 4096)
        return sw_fail(&s->err, SW_EINVAL, "%s: bad path length %zu", what, plen);
    sw_buf_init(&b);
    char *hex = sw_malloc(plen * 2 + 1);
    if (hex == NULL)
        return sw_fail(&s->err, SW_ENOMEM, "%s: out of memory", what);
    sw_hex_encode((const uint8_t *)path, plen, hex);
    hex[plen * 2] = '\0';
    rc = sw_buf_printf(&b, "vFile:open:%s,%x,%x", hex, (unsigned)flags, mode);
    sw_free(hex);
    if (rc != 0) {
        sw_buf_fini(&b);
        return sw_fail(&s->err, SW_ENOMEM, "%s: out of memory", what);
    }
    rc = rsp_request(&s->x, RSP_PKT_VFILE_OPEN, b.data, b.len, &r);
    sw_buf_fini(&b);
    if (rc == SW_EUNSUP)
        return sw_fail(&s->err, SW_EUNSUP, "%s: the stub has no Host I/O (empty reply)", what);
    if (rc < 0)
        return sw_err_prefix(&s->err, "%s: ", what);
    if ((rc = fio_parse(s, &r, what, &f)) < 0)
        return rc;
    if (f.result > INT32_MAX)
        return sw_fail(&s->err, SW_EPROTO, "%s: descriptor %lld out of range", what,
                       (long long)f.result);
    *fd = (int)f.result;
    return 0;
}

int
rsp_vfile_pread(struct rsp_session *s, int fd, void *buf, size_t len, uint64_t offset, size_t *got)
{
    uint8_t *out = buf;
    size_t done = 0;
    size_t chunk =
        s->x.packet_size > 2 * PREAD_SLACK ? s->x.packet_size - PREAD_SLACK : PREAD_SLACK;
    *got = 0;
    while (done < len) {
        struct rsp_reply r;
        struct fio_reply f;
        char what[96];
        size_t want = len - done < chunk ? len - done : chunk;
        uint64_t at = offset + done;
        snprintf(what, sizeof what, "vFile:pread:%x,%zx,%llx", (unsigned)fd, want,
                 (unsigned long long)at);
        int rc = rsp_requestf(&s->x, RSP_PKT_VFILE_PREAD, &r, "%s", what);
        if (rc == SW_EUNSUP)
            return sw_fail(&s->err, SW_EUNSUP, "%s: the stub has no Host I/O (empty reply)", what);
        if (rc < 0)
            return rc;
        if ((rc = fio_parse(s, &r, what, &f)) < 0)
            return rc;
        if ((uint64_t)f.result != f.len || f.len > want)
            return sw_fail(&s->err, SW_EPROTO,
                           "%s: the reply says %lld bytes but carries %zu (asked for %zu)", what,
                           (long long)f.result, f.len, want);
        if (f.len == 0)
            break; /* end of file */
        memcpy(out + done, f.data, f.len);
        done += f.len;
    }
    *got = done;
    return 0;
}

int
rsp_vfile_close(struct rsp_session *s, int fd)
{
    struct rsp_reply r;
    struct fio_reply f;
    char what[48];
    snprintf(what, sizeof what, "vFile:close:%x", (unsigned)fd);
    int rc = rsp_requestf(&s->x, RSP_PKT_VFILE_CLOSE, &r, "%s", what);
    if (rc < 0)
        return rc;
    return fio_parse(s, &r, what, &f);
}

int
rsp_vfile_fstat(struct rsp_session *s, int fd, uint64_t *size)
{
    struct rsp_reply r;
    struct fio_reply f;
    char what[48];
    snprintf(what, sizeof what, "vFile:fstat:%x", (unsigned)fd);
    int rc = rsp_requestf(&s->x, RSP_PKT_VFILE_FSTAT, &r, "%s", what);
    if (rc < 0)
        return rc;
    if ((rc = fio_parse(s, &r, what, &f)) < 0)
        return rc;
    if (f.len < FIO_STAT_SIZE_OFF + 8 || f.len > FIO_STAT_LEN)
        return sw_fail(&s->err, SW_EPROTO, "%s: stat attachment of %zu bytes, expected %d", what,
                       f.len, FIO_STAT_LEN);
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | f.data[FIO_STAT_SIZE_OFF + i];
    *size = v;
    return 0;
}

int
rsp_vfile_read_all(struct rsp_session *s, const char *path, size_t max, uint8_t **data, size_t *len)
{
    int fd, rc;
    uint64_t size = 0;
    *data = NULL;
    *len = 0;
    if ((rc = rsp_vfile_open(s, path, RSP_VFILE_O_RDONLY, 0, &fd)) < 0)
        return rc;
    rc = rsp_vfile_fstat(s, fd, &size);
    if (rc == 0 && size > max)
        rc = sw_fail(&s->err, SW_EINVAL, "reading '%s' from the target: %llu bytes, more than %zu",
                     path, (unsigned long long)size, max);
    uint8_t *buf = NULL;
    size_t got = 0;
    if (rc == 0 && (buf = sw_malloc(size ? (size_t)size : 1)) == NULL)
        rc = sw_fail(&s->err, SW_ENOMEM, "reading '%s' from the target: out of memory", path);
    if (rc == 0)
        rc = rsp_vfile_pread(s, fd, buf, (size_t)size, 0, &got);
    if (rc < 0 && strstr(s->err.msg, path) == NULL)
        sw_err_prefix(&s->err, "reading '%s' from the target: ", path);
    if (rc == 0 && got != size)
        rc = sw_fail(&s->err, SW_EPROTO, "reading '%s' from the target: %zu of %llu bytes", path,
                     got, (unsigned long long)size);
    struct sw_errbuf keep = s->err;
    int crc = rsp_vfile_close(s, fd);
    if (rc < 0) {
        s->err = keep;
        sw_free(buf);
        return rc;
    }
    if (crc < 0) {
        sw_free(buf);
        return crc;
    }
    *data = buf;
    *len = got;
    return 0;
}
